import { describe, expect, it } from "vitest";
import { finalize, LIMITS, ticketsIn } from "../src/import/draft.js";
import { redact, REDACTED, SECRET_PATTERNS } from "../src/import/redact.js";

/** Each secret as it shows up in history, with the words around it that must survive. */
const SECRETS: Array<[string, string, string]> = [
  ["OpenAI key", "sk-proj-Qw3rTy7uIo9pAs2dFg5hJk8lZx1cVb4nM6", "export OPENAI_KEY_VALUE=%s # for the nightly job"],
  ["OpenAI legacy key", "sk-Ab12Cd34Ef56Gh78Ij90Kl12", "call the API with %s then retry"],
  ["Anthropic key", "sk-ant-api03-Zq8vK2mLx9RtY4wP7nB3cD6fG1hJ5kL0-xyzAA", "the harness used %s for the eval"],
  ["GitHub token", "ghp_R8kW3nQ7vX2mL9pZ4tY6bC1dF5gH0jK8sA3e", "push with %s to the mirror"],
  ["GitHub fine-grained token", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "the bot token %s expires in May"],
  ["AWS access key id", "AKIAQ3EGUV7RX5NLM2PA", "deploy key %s belongs to the release role"],
  ["JWT", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJkZXYiLCJyb2xlIjoiYWRtaW4ifQ.s3cr3tS1gnatureValue", "the cookie %s was logged"],
  ["Slack token", "xoxb-123456789012-abcdefghijkl", "the alert bot uses %s in staging"],
  ["Stripe key", "sk_live_51HqLyjWDarjtT1zdp7dc", "billing runs with %s today"],
  ["Cairn token", "cairn_AbCdEfGhIjKlMnOpQrStUvWxYz012345", "the loader reads %s from the env"],
];

const PAIRS: Array<[string, string, string, string]> = [
  // [name, text, secret, what stays]
  ["password=", "the staging config holds password=Tr0ub4dor-staging-77 for now", "Tr0ub4dor-staging-77", "password=[redacted] for now"],
  ["JSON password", '{"user": "ci", "password": "hunter2-ci-Publish"} in .env', "hunter2-ci-Publish", '"password": [redacted]'],
  ["YAML secret", "client_secret: 9f8e7d6c5b4a3f2e1d0c\nnext: line", "9f8e7d6c5b4a3f2e1d0c", "client_secret: [redacted]\nnext: line"],
  ["env token", "GITHUB_TOKEN=abc123def456ghi789 npm publish", "abc123def456ghi789", "GITHUB_TOKEN=[redacted] npm publish"],
  ["query token", "GET /hook?token=s3cr3tHookValue&page=2", "s3cr3tHookValue", "token=[redacted]&page=2"],
  [
    "bearer",
    "curl -H 'Authorization: Bearer abc.DEF-123_ghi~jkl' https://x",
    "abc.DEF-123_ghi~jkl",
    "Authorization: Bearer [redacted]' https://x",
  ],
  [
    "URL password",
    "DATABASE_URL is postgres://ledger:pg-S3cretPass@db.internal/ledger",
    "pg-S3cretPass",
    "postgres://ledger:[redacted]@db.internal/ledger",
  ],
  [
    "PEM block",
    "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7x9Qm2Lk\n-----END RSA PRIVATE KEY-----\nstays in the vault",
    "MIIEpAIBAAKCAQEA7x9Qm2Lk",
    "key:\n[redacted]\nstays in the vault",
  ],
  [
    "PEM cut short",
    "pasted -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA",
    "b3BlbnNzaC1rZXktdjEAAAAA",
    "pasted [redacted]",
  ],
];

describe("redaction", () => {
  it("replaces each kind of secret and keeps the words around it", () => {
    for (const [name, secret, template] of SECRETS) {
      const text = template.replace("%s", secret);
      const out = redact(text);
      expect({ name, leaked: out.includes(secret) }).toEqual({ name, leaked: false });
      expect(out).toBe(template.replace("%s", REDACTED));
    }
    for (const [name, text, secret, kept] of PAIRS) {
      const out = redact(text);
      expect({ name, leaked: out.includes(secret) }).toEqual({ name, leaked: false });
      expect({ name, out }).toEqual({ name, out: expect.stringContaining(kept) });
    }
    expect(SECRET_PATTERNS.length).toBeGreaterThanOrEqual(14);
  });

  it("leaves ordinary engineering text alone: hashes, ticket keys, prose about passwords and tokens", () => {
    const ordinary = [
      "Revert 3feb08d1fed0397591d37511b2ce2e8c0f3a2b1c: the cache broke logins",
      "This reverts commit 1ccc5a6e0b7d3f2a9c8b4e5d6f7a8b9c0d1e2f3a.",
      "PAY-412: rotate the password policy to 90 days; tokens now expire after an hour",
      "Bearer tokens are checked before the body is read",
      "max_tokens=512 and sk-learn are not secrets; Basic authentication is off",
      "use https://example.com/docs/auth for the flow",
    ];
    for (const text of ordinary) expect(redact(text)).toBe(text);
  });

  it("redacts before cutting a field to the contract's limit, and says it was cut", () => {
    const secret = "sk-ant-api03-Zq8vK2mLx9RtY4wP7nB3cD6fG1hJ5kL0";
    // The secret straddles the point where the field is cut: cut first, its head would be left behind.
    const long = `${"word ".repeat((LIMITS.field - 60) / 5)}${secret} ${"tail ".repeat(100)}`;
    const request = finalize({ session_id: "s", idempotency_key: "k", prompt: long, thought: "t", response: "r", tags: [], refs: [] });
    expect(request.prompt.length).toBeLessThanOrEqual(LIMITS.field);
    expect(request.prompt.endsWith("more characters not imported]")).toBe(true);
    expect(request.prompt.includes("sk-ant")).toBe(false);
    expect(request.prompt.startsWith("word word")).toBe(true);
    expect(request.tags).toEqual(["truncated"]);
    const short = finalize({ session_id: "s", idempotency_key: "k", prompt: "p", thought: "t", response: "r", tags: ["git"], refs: [] });
    expect([short.prompt, short.tags]).toEqual(["p", ["git"]]);
  });

  it("reads tickets from messages: tracker keys and issue numbers, not standards or colour codes", () => {
    expect(ticketsIn("Fix PAY-412 and OPS-7 (see #123); SHA-256 of UTF-8 text; colour #fff and &#123;")).toEqual([
      "PAY-412",
      "OPS-7",
      "#123",
    ]);
  });
});
