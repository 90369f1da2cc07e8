/**
 * Secrets out of imported text before it leaves this process: whatever reaches memory-core is embedded,
 * indexed and returned to every agent of the workspace, so a key in a transcript or a commit message would be
 * handed to all of them. Each pattern replaces the secret (never the words around it) with `[redacted]`.
 *
 * Redacting twice gives what redacting once gave (the writer redacts every string it sends, after the drafts
 * were redacted field by field), so no pattern takes `[redacted]` or the text it leaves for a secret.
 *
 * Limits, by design:
 * - A classic GitHub token (40 lowercase hex digits) looks exactly like a commit id, which history cites
 *   everywhere: it is redacted only where something says it is a token — `token <hex>` (as in `Authorization:
 *   token <hex>`), a `…_TOKEN=`/`token:` pair, or the user part of a URL (`https://<hex>@github.com`). Alone in
 *   prose it stays.
 * - A bare AWS secret access key (40 characters of base64 without padding) is redacted after a word that names
 *   it (`aws…`, `secret…`) or, alone, when it reads as random: upper and lower case letters and digits, and a
 *   character class that changes at most places (RANDOM_CHANGES). Identifiers and paths change class only at
 *   word boundaries, so they stay; so does a random key that happens to change class less often than that.
 * - A URL password may hold `/` and `@`: the userinfo runs to the last `@` before the host, so a path with an `@`
 *   of its own (`https://u:p@host/users/a@b.com`) loses its host and path up to that `@` too — more is redacted,
 *   nothing is leaked. A `host:port/…@…` is a port, not a password, and stays.
 */
export const REDACTED = "[redacted]";

interface SecretPattern {
  name: string;
  pattern: RegExp;
  /** The replacement; `$1` keeps a prefix such as the field name. A function decides from the match itself. */
  replacement: string | ((match: string, ...groups: string[]) => string);
}

/** A quoted or bare value of a `name=value`, `name: value` or `"name": "value"` pair (not one already redacted). */
const VALUE = String.raw`(?!\[redacted\])(?:"[^"\n]*"|'[^'\n]*'|[^\s"',;&)}\]]+)`;
/** Names whose value is a secret, as a word or inside a longer name (DB_PASSWORD, OPENAI_API_KEY, GITHUB_TOKEN, _authToken). */
// Bounded runs around the name keep the cost linear on long unbroken text (base64, minified code).
const SECRET_NAME = String.raw`[A-Za-z0-9_-]{0,40}(?:password|passwd|passphrase|secret|api[_-]?key|access[_-]?key|private[_-]?key|account[_-]?key|auth[_-]?token|[A-Za-z0-9][_-]token(?!s)|credentials?)[A-Za-z0-9_-]{0,40}`;
/** A run of exactly 40 characters of unpadded base64, as AWS secret access keys are written. */
const BASE64_40 = String.raw`(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])`;

/**
 * How often a 40-character run must change character class (upper, lower, digit, `/` or `+`) between neighbours
 * to read as random. A random key changes at most of its 39 places; a camelCase identifier or a path, at its
 * word boundaries only (docs/benchmarks.md, "Reliability: what one caller can do to everyone else", redaction, has what each side loses).
 */
export const RANDOM_CHANGES = 16;
/** The share of capitals followed by a lowercase letter from which a run reads as camelCase words. */
export const CAMEL_SHARE = 0.8;

const classOf = (c: string) => (c >= "a" && c <= "z" ? 0 : c >= "A" && c <= "Z" ? 1 : c >= "0" && c <= "9" ? 2 : 3);

/**
 * Mixed case, a digit, a character class that changes at RANDOM_CHANGES places or more, and not camelCase (where
 * nearly every capital starts a lowercase word; in a random run, fewer than half do).
 */
export function looksRandom(run: string): boolean {
  if (!/[a-z]/.test(run) || !/[A-Z]/.test(run) || !/[0-9]/.test(run)) return false;
  let changes = 0;
  let capitals = 0;
  let wordStarts = 0;
  for (let i = 1; i < run.length; i++) {
    if (classOf(run[i]!) !== classOf(run[i - 1]!)) changes++;
    if (classOf(run[i - 1]!) === 1) {
      capitals++;
      if (classOf(run[i]!) === 0) wordStarts++;
    }
  }
  return changes >= RANDOM_CHANGES && wordStarts < CAMEL_SHARE * capitals;
}

/** A user part that is itself a credential: 40 hex digits (a classic GitHub token), or a long run of letters and digits. */
const credentialUser = (user: string) => /^[0-9a-f]{40}$/i.test(user) || (user.length >= 20 && /[0-9]/.test(user) && /[A-Za-z]/.test(user));

/** The userinfo of a URL (scheme, userinfo up to the last `@` before the host) as it may be kept. */
function redactUserinfo(match: string, scheme: string, userinfo: string): string {
  const colon = userinfo.indexOf(":");
  const user = colon < 0 ? userinfo : userinfo.slice(0, colon);
  const password = colon < 0 ? undefined : userinfo.slice(colon + 1);
  if (credentialUser(user) && user !== REDACTED) return `${scheme}${REDACTED}@`;
  // `host:8080/path@x` is a host, its port and a path with an `@`, not a user and a password.
  if (password === undefined || password === REDACTED || /^\d{1,5}(?:\/|$)/.test(password) || user.includes("/")) return match;
  return `${scheme}${user}:${REDACTED}@`;
}

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
  { name: "npm token (npm_…)", pattern: /\bnpm_[A-Za-z0-9]{30,}/g, replacement: REDACTED },
  { name: "AWS access key id (AKIA…, ASIA…)", pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, replacement: REDACTED },
  { name: "Google API key (AIza…)", pattern: /\bAIza[0-9A-Za-z_-]{35}/g, replacement: REDACTED },
  { name: "Slack token (xoxb-…)", pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g, replacement: REDACTED },
  {
    name: "Slack webhook URL (hooks.slack.com/services/…)",
    pattern: /\b(hooks\.slack(?:-gov)?\.com\/(?:services|workflows|triggers)\/)[A-Za-z0-9_/-]+/g,
    replacement: `$1${REDACTED}`,
  },
  { name: "Cairn token (cairn_…)", pattern: /\bcairn_[A-Za-z0-9_-]{20,}/g, replacement: REDACTED },
  {
    name: "Bearer or Basic credentials",
    pattern: /\b(Bearer|Basic)\s+(?=[A-Za-z._~+/=-]{0,200}[0-9])[A-Za-z0-9._~+/=-]{8,}/g,
    replacement: `$1 ${REDACTED}`,
  },
  {
    name: "classic GitHub token after the word token (Authorization: token <hex>, token: <hex>)",
    pattern: /(\btoken\b["']?[ \t]*[:=]?[ \t]*["']?)[0-9a-f]{40}\b/gi,
    replacement: `$1${REDACTED}`,
  },
  {
    name: "Azure storage and service bus keys (AccountKey=…, SharedAccessKey=…, SharedAccessSignature=…)",
    pattern: /(\b(?:AccountKey|SharedAccessKey|SharedAccessSignature)\s*=\s*)(?!\[redacted\])[^;\s"'<>]+/gi,
    replacement: `$1${REDACTED}`,
  },
  {
    name: "Azure SAS signature in a query (?sig=…, &sig=…)",
    pattern: /([?&;]sig=)(?!\[redacted\])[^\s&"'#<>]+/gi,
    replacement: `$1${REDACTED}`,
  },
  {
    name: "URL userinfo (scheme://user:password@host, the password may hold / and @; a token as the user)",
    // The userinfo runs to the last `@` before a host (no whitespace, `?` or `#` on the way).
    pattern: /\b([a-z][a-z0-9+.-]*:\/\/)([^\s?#@]*(?:@[^\s?#@]*)*)@(?=[A-Za-z0-9[])/gi,
    replacement: redactUserinfo,
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
  {
    name: "AWS secret access key after a word that names it (aws…, secret…)",
    pattern: new RegExp(String.raw`(\b(?:aws|secret)[A-Za-z0-9_-]{0,30}\b[^\n]{0,40}?)(${BASE64_40})`, "gi"),
    replacement: (match, prefix, run) =>
      /[A-Z]/.test(run!) && /[a-z]/.test(run!) && !/^[0-9a-f]+$/i.test(run!) ? `${prefix}${REDACTED}` : match,
  },
  {
    name: "AWS secret access key alone (40 characters of base64 that read as random)",
    pattern: new RegExp(BASE64_40, "g"),
    replacement: (match) => (looksRandom(match) ? REDACTED : match),
  },
];

/** The text with every secret the patterns know replaced by `[redacted]`. */
export function redact(text: string): string {
  let out = text;
  for (const { pattern, replacement } of SECRET_PATTERNS) {
    out =
      typeof replacement === "string"
        ? out.replace(pattern, replacement)
        : out.replace(pattern, replacement as (m: string, ...g: unknown[]) => string);
  }
  return out;
}

/** A request with every string in it (at any depth, keys aside) redacted: what the importers send, whatever derived it. */
export function redactStrings<T>(value: T): T {
  if (typeof value === "string") return redact(value) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => redactStrings(v)) as T;
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactStrings(v)])) as T;
  }
  return value;
}
