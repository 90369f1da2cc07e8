/**
 * Secrets out of imported text before it leaves this process: whatever reaches memory-core is embedded,
 * indexed and returned to every agent of the workspace, so a key in a transcript or a commit message would be
 * handed to all of them. Each pattern replaces the secret (never the words around it) with `[redacted]`.
 */
export const REDACTED = "[redacted]";

interface SecretPattern {
  name: string;
  pattern: RegExp;
  /** The replacement; `$1` keeps a prefix such as the field name. */
  replacement: string;
}

/** A quoted or bare value of a `name=value`, `name: value` or `"name": "value"` pair (not one already redacted). */
const VALUE = String.raw`(?!\[redacted\])(?:"[^"\n]*"|'[^'\n]*'|[^\s"',;&)}\]]+)`;
/** Names whose value is a secret, as a word or inside a longer name (DB_PASSWORD, OPENAI_API_KEY, GITHUB_TOKEN). */
// Bounded runs around the name keep the cost linear on long unbroken text (base64, minified code).
const SECRET_NAME = String.raw`[A-Za-z0-9_-]{0,40}(?:password|passwd|passphrase|secret|api[_-]?key|access[_-]?key|private[_-]?key|[A-Za-z0-9][_-]token(?!s)|credentials?)[A-Za-z0-9_-]{0,40}`;

/** The order matters: a PEM block or a whole JWT goes before the shorter patterns could take part of it. */
export const SECRET_PATTERNS: readonly SecretPattern[] = [
  {
    name: "PEM private key block",
    // An unterminated block (a file cut short) is redacted to the end of the text.
    pattern: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)/g,
    replacement: REDACTED,
  },
  { name: "JSON Web Token", pattern: /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, replacement: REDACTED },
  { name: "Anthropic API key (sk-ant-…)", pattern: /\bsk-ant-[A-Za-z0-9_-]{8,}/g, replacement: REDACTED },
  { name: "OpenAI-style API key (sk-…)", pattern: /\bsk-[A-Za-z0-9_-]{16,}/g, replacement: REDACTED },
  { name: "Stripe key (sk_live_…, rk_test_…)", pattern: /\b[rsp]k_(?:live|test)_[A-Za-z0-9]{10,}/g, replacement: REDACTED },
  { name: "GitHub token (ghp_…, gho_…, ghs_…)", pattern: /\bgh[pousr]_[A-Za-z0-9]{20,}/g, replacement: REDACTED },
  { name: "GitHub fine-grained token (github_pat_…)", pattern: /\bgithub_pat_[A-Za-z0-9_]{20,}/g, replacement: REDACTED },
  { name: "GitLab token (glpat-…)", pattern: /\bglpat-[A-Za-z0-9_-]{20,}/g, replacement: REDACTED },
  { name: "AWS access key id (AKIA…, ASIA…)", pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, replacement: REDACTED },
  { name: "Google API key (AIza…)", pattern: /\bAIza[0-9A-Za-z_-]{35}/g, replacement: REDACTED },
  { name: "Slack token (xoxb-…)", pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g, replacement: REDACTED },
  { name: "Cairn token (cairn_…)", pattern: /\bcairn_[A-Za-z0-9_-]{20,}/g, replacement: REDACTED },
  {
    name: "Bearer or Basic credentials",
    pattern: /\b(Bearer|Basic)\s+(?=[A-Za-z._~+/=-]{0,200}[0-9])[A-Za-z0-9._~+/=-]{8,}/g,
    replacement: `$1 ${REDACTED}`,
  },
  {
    name: "password in a URL (scheme://user:password@host)",
    pattern: /\b([a-z][a-z0-9+.-]*:\/\/[^\s/:@]+:)[^\s/@]+@/gi,
    replacement: `$1${REDACTED}@`,
  },
  {
    name: 'password=…, api_key: …, "client_secret": "…", GITHUB_TOKEN=… and the like',
    pattern: new RegExp(String.raw`(\b${SECRET_NAME}["']?\s*[:=]\s*)${VALUE}`, "gi"),
    replacement: `$1${REDACTED}`,
  },
  {
    name: 'token=…, "token": "…"',
    pattern: new RegExp(String.raw`(\btoken\s*=\s*|["']token["']\s*:\s*)${VALUE}`, "gi"),
    replacement: `$1${REDACTED}`,
  },
];

/** The text with every secret the patterns know replaced by `[redacted]`. */
export function redact(text: string): string {
  let out = text;
  for (const { pattern, replacement } of SECRET_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}
