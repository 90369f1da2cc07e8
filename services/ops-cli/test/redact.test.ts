import { describe, expect, it } from "vitest";
import { finalize, LIMITS, ticketsIn } from "../src/import/draft.js";
import { looksRandom, redact, REDACTED, redactStrings, SECRET_PATTERNS } from "../src/import/redact.js";

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
  ["npm token", "npm_AbCdEf0123456789GhIjKl0123456789MnOp", "publish with %s from the release job"],
  ["AWS secret access key alone (the documented example)", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "the pair ends with %s, rotate it"],
  ["AWS secret access key alone (random, with + and /)", "QwMo4NkrF7p17Cme71wpZ/Fu3ScRp/7oI6+vTgek", "deploy uses %s until Friday"],
  ["AWS secret access key alone (random)", "iV4zJcvObcwuBM0Lv52bMMfvyXLCHSPmdT+glt5y", "(%s)"],
  [
    "classic GitHub token after Authorization: token",
    "4d9233b094961eff64b14505ec407b7edf3413d5",
    "curl -H 'Authorization: token %s' https://api.github.com/user",
  ],
  ["classic GitHub token as token: in YAML", "4d9233b094961eff64b14505ec407b7edf3413d5", "with:\n  token: %s\n  ref: main"],
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
    "URL password holding / and @ (to the last @ before the host)",
    "connect with postgres://root:p@ss/w0rd@db.internal:5432/app then migrate",
    "p@ss/w0rd",
    "connect with postgres://root:[redacted]@db.internal:5432/app then migrate",
  ],
  [
    "URL password with no user",
    "REDIS_URL=redis://:s3cr3t-cache@cache.internal:6379/0 for jobs",
    "s3cr3t-cache",
    "redis://:[redacted]@cache.internal:6379/0 for jobs",
  ],
  [
    "URL with a classic GitHub token as the user",
    "git clone https://4d9233b094961eff64b14505ec407b7edf3413d5@github.com/shop/api.git here",
    "4d9233b094961eff64b14505ec407b7edf3413d5",
    "git clone https://[redacted]@github.com/shop/api.git here",
  ],
  [
    "URL with x-access-token and a hex token",
    "remote https://x-access-token:4d9233b094961eff64b14505ec407b7edf3413d5@github.com/shop/api.git",
    "4d9233b094961eff64b14505ec407b7edf3413d5",
    "remote https://x-access-token:[redacted]@github.com/shop/api.git",
  ],
  [
    "Slack webhook URL",
    "alerts post to https://hooks.slack.com/services/T0123ABCD/B0456EFGH/AbCdEfGhIjKlMnOpQrStUvWx on failure",
    "AbCdEfGhIjKlMnOpQrStUvWx",
    "alerts post to https://hooks.slack.com/services/[redacted] on failure",
  ],
  [
    "Azure storage connection string (AccountKey=)",
    "DefaultEndpointsProtocol=https;AccountName=shopdata;AccountKey=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdo+/Q==;EndpointSuffix=core.windows.net",
    "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdo",
    "AccountName=shopdata;AccountKey=[redacted];EndpointSuffix=core.windows.net",
  ],
  [
    "Azure SharedAccessSignature= in a connection string",
    "BlobEndpoint=https://shop.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02&ss=b&sig=AbC%2Bdef123%3D;Other=1",
    "AbC%2Bdef123",
    "BlobEndpoint=https://shop.blob.core.windows.net/;SharedAccessSignature=[redacted];Other=1",
  ],
  [
    "Azure SAS URL (&sig=)",
    "download https://shop.blob.core.windows.net/c/f.csv?sv=2022-11-02&sp=r&sig=AbC%2Bdef123%3D&se=2026 today",
    "AbC%2Bdef123",
    "f.csv?sv=2022-11-02&sp=r&sig=[redacted]&se=2026 today",
  ],
  [
    "npm _authToken in .npmrc",
    "//registry.npmjs.org/:_authToken=9a8b7c6d-1234-5678-9abc-def012345678\nalways-auth=true",
    "9a8b7c6d-1234",
    "//registry.npmjs.org/:_authToken=[redacted]\nalways-auth=true",
  ],
  [
    "AWS secret access key named by a word before it (aws…), however regular it reads",
    "the AWS deploy user signs with AbcdefghijKLMNOPQRSTuvwxyz0123456789ABCD today",
    "AbcdefghijKLMNOPQRSTuvwxyz0123456789ABCD",
    "the AWS deploy user signs with [redacted] today",
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
  it.each(SECRETS)("redacts: %s, and keeps the words around it", (_name, secret, template) => {
    const out = redact(template.replace("%s", secret));
    expect(out.includes(secret)).toBe(false);
    expect(out).toBe(template.replace("%s", REDACTED));
  });

  it.each(PAIRS)("redacts: %s, and keeps the words around it", (_name, text, secret, kept) => {
    const out = redact(text);
    expect(out.includes(secret)).toBe(false);
    expect(out).toContain(kept);
  });

  it("knows every shape above", () => {
    expect(SECRET_PATTERNS.length).toBeGreaterThanOrEqual(22);
  });

  it("redacting twice gives what redacting once gave, for every shape", () => {
    const texts = [...SECRETS.map(([, secret, template]) => template.replace("%s", secret)), ...PAIRS.map(([, text]) => text)];
    for (const text of texts) {
      const once = redact(text);
      expect(once).toContain(REDACTED);
      expect(redact(once)).toBe(once);
    }
  });

  it("keeps commit ids, UUIDs, identifiers, paths and URLs that only look like secrets", () => {
    const sha = "3feb08d1fed0397591d37511b2ce2e8c0f3a2b1c";
    const ordinary = [
      `Reverted by commit ${sha.slice(0, 12)}; see ${sha} and reverts:${sha}`,
      `the fix is in ${sha}, the token refresh in 1ccc5a6e0b7d3f2a9c8b4e5d6f7a8b9c0d1e2f3a`,
      "session 7d3c1f4e-2b6a-4c1d-9e8f-0a1b2c3d4e5f wrote t_f1cef6892836cbc45b93fd335fe0d5ae",
      "getNextNonSpaceNonCommentCharacterIndex2 returns -1 at the end",
      "open src/main/java/com/example/MyService2Impl.java and AbcdefghijKLMNOPQRSTuvwxyz0123456789ABCD",
      "http://localhost:3000/api/users/@alice/repos and https://example.com:8443/@bob",
      "https://unpkg.com/react@18.2.0/umd/react.js, ssh://git@github.com/shop/api.git, git@github.com:shop/api.git",
      "AccountName=shopdata;EndpointSuffix=core.windows.net has no key; the sig= parameter signs a SAS",
      "post to a Slack webhook (hooks.slack.com/services/…) and set npm_config_cache",
    ];
    for (const text of ordinary) expect({ text, out: redact(text) }).toEqual({ text, out: text });
    // The same shapes around a secret are redacted: the rules tell them apart, they do not skip them.
    expect(redact(`token ${sha}`)).toBe(`token ${REDACTED}`);
    expect(redact("ssh://git:Hunter2Hunter2@github.com/shop/api.git")).toBe("ssh://git:[redacted]@github.com/shop/api.git");
    expect([looksRandom("getNextNonSpaceNonCommentCharacterIndex2"), looksRandom("iV4zJcvObcwuBM0Lv52bMMfvyXLCHSPmdT+glt5y")]).toEqual([
      false,
      true,
    ]);
  });

  it("redacts every string of a request at any depth, and nothing else", () => {
    const request = {
      memories: [{ prompt: "key AKIAQ3EGUV7RX5NLM2PA", refs: ["src/a.ts", "npm_AbCdEf0123456789GhIjKl0123456789MnOp"], n: 3, ok: true }],
      reason: "Reverted: Add AKIAI44QH8DHBEXAMPLE to deploy config",
      commit: "3feb08d1fed0397591d37511b2ce2e8c0f3a2b1c",
    };
    expect(redactStrings(request)).toEqual({
      memories: [{ prompt: "key [redacted]", refs: ["src/a.ts", "[redacted]"], n: 3, ok: true }],
      reason: "Reverted: Add [redacted] to deploy config",
      commit: "3feb08d1fed0397591d37511b2ce2e8c0f3a2b1c",
    });
  });

  it("redacts the session id and the idempotency key it sends, within their contract's characters", () => {
    const request = finalize({
      session_id: "deploy AKIAI44QH8DHBEXAMPLE",
      idempotency_key: "claude-code:AKIAI44QH8DHBEXAMPLE:1",
      prompt: "p",
      thought: "t",
      response: "r",
      model: "gpt sk-ant-api03-Zq8vK2mLx9RtY4wP7nB3cD6fG1hJ5kL0",
      tags: [],
      refs: [],
    });
    expect([request.session_id, request.idempotency_key, request.model]).toEqual([
      "deploy--redacted-",
      "claude-code:[redacted]:1",
      "gpt [redacted]",
    ]);
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
