import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { loadContract } from "@cairn/openapi";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { http, makeToken, startCairn, uniqueWorkspace, type TestCairn, type TestToken } from "../../memory-core/test/support/harness.js";
import { BULK_BYTES, BULK_ITEMS } from "../src/import/writer.js";
import { gitIn } from "./support/git.js";
import { cairnCli } from "./support/run-cli.js";

/** The importers as an operator runs them: the CLI as a child process, a real git repository, a real stack. */

const FIXTURES = fileURLToPath(new URL("./fixtures/", import.meta.url));
const RATES_SECRET = "sk-ant-api03-Qm7vK2mLx9RtY4wP7nB3cD6fG1hJ5kL0";

let dir: string;
let cairn: TestCairn;
let repo: string;
let hashes: Hashes;
const ws = uniqueWorkspace("import");
const dev = makeToken(ws, "dev");
const ops = makeToken(ws, "ops", "admin");
const sinceWs = uniqueWorkspace("since");
const sinceDev = makeToken(sinceWs, "dev");
const talkWs = uniqueWorkspace("talk");
const talker = makeToken(talkWs, "historian");
const badWs = uniqueWorkspace("bad");
const bad = makeToken(badWs, "dev");

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cairn-import-"));
  cairn = await startCairn([dev, ops, sinceDev, talker, bad]);
  ({ repo, hashes } = await buildRepository());
});
afterAll(async () => {
  await cairn?.close();
  await rm(dir, { recursive: true, force: true });
});

interface Memory {
  id: string;
  agent: string;
  session_id: string;
  prompt: string;
  thought: string;
  response: string;
  refs: string[];
  tags: string[];
  source: string;
  trusted: boolean;
  author?: string;
  model?: string;
  occurred_at?: string;
  outdated: boolean;
  corrections: Array<{ kind: string; reason: string; commit?: string }>;
}

/** Every memory the token's agent holds, in full. */
async function memoriesOf(token: TestToken): Promise<Memory[]> {
  const res = await http(cairn.url, "GET", "/v1/memories/recent?limit=100&detail=full", { token: token.token });
  expect(res.status).toBe(200);
  return res.body.turns as Memory[];
}

async function search(token: TestToken, query: string): Promise<Memory[]> {
  const res = await http(cairn.url, "POST", "/v1/memories/query", { token: token.token, body: { query, detail: "full", limit: 20 } });
  expect(res.status).toBe(200);
  return (res.body.hits as Array<{ memory: Memory }>).map((h) => h.memory);
}

const common = (token: TestToken) => ["--url", cairn.url.toString(), "--token", token.token];

type Hashes = Record<"retry" | "rates" | "backoff" | "revert" | "fix", string>;

/** A repository with the history the importer must read: plain commits, a revert, and a fix naming the commit it fixes. */
async function buildRepository(): Promise<{ repo: string; hashes: Hashes }> {
  const repo = join(dir, "shop");
  await mkdir(join(repo, "src"), { recursive: true });
  let clock = Date.parse("2026-10-01T09:00:00Z");
  // A fixed clock per commit: the dates, and so what --since takes, are known to the assertions.
  let next = "";
  const dated = gitIn(repo, dir, () => next);
  const git = (...args: string[]) => {
    if (args[0] === "commit" || args[0] === "revert") clock += 3_600_000;
    next = new Date(clock).toISOString();
    return dated(...args);
  };
  const commit = async (file: string, text: string, message: string[]) => {
    await writeFile(join(repo, file), text);
    git("add", file);
    git("commit", "-q", ...message.flatMap((m) => ["-m", m]));
    return git("rev-parse", "HEAD");
  };
  git("init", "-q", "-b", "main");
  const hashes = {} as Hashes;
  hashes.retry = await commit("src/retry.ts", "export const retry = 1;\n", [
    "Add the payment retry worker",
    "Retries failed charges every minute (PAY-400).",
  ]);
  hashes.rates = await commit("src/rates.ts", "export const rates = new Map();\nexport const ttl = 3600;\n", [
    "Cache exchange rates in memory",
    `Rates change hourly, so a cache saves a provider call per charge. The provider key ${RATES_SECRET} moved to the vault.`,
  ]);
  hashes.backoff = await commit("src/retry.ts", "export const retry = 2;\nexport const backoff = 'exponential';\n", [
    "Switch the retry backoff to exponential",
    "Spreads retries out when the provider is down.",
  ]);
  git("revert", "--no-edit", hashes.backoff);
  hashes.revert = git("rev-parse", "HEAD");
  hashes.fix = await commit("src/rates.ts", "export const rates = new Map();\nexport const ttl = 900;\n", [
    `hotfix: expire cached rates after 15 minutes (regression from ${hashes.rates.slice(0, 9)})`,
    "Closes #57, reported in FX-9.",
  ]);
  return { repo, hashes };
}

describe("cairn import git", () => {
  it("stores one memory per commit, marks the reverted one outdated, links the fix, and keeps the secret out", async () => {
    const run = await cairnCli(["import", "git", "--repo", repo, ...common(dev)]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("5 commits, 5 stored, 0 already there; 1 reverts, 1 reverted commits marked outdated");

    const memories = await memoriesOf(dev);
    expect(memories).toHaveLength(5);
    const byHash = new Map(memories.map((m) => [m.refs[0], m]));
    const retry = byHash.get(hashes.retry)!;
    expect(retry).toMatchObject({
      agent: "dev",
      author: "Ada Lovelace <ada@example.com>",
      prompt: "Add the payment retry worker",
      thought: "Retries failed charges every minute (PAY-400).",
      source: "import",
      trusted: false,
      occurred_at: "2026-10-01T10:00:00.000Z",
      outdated: false,
    });
    expect(retry.refs).toEqual([hashes.retry, "PAY-400", "src/retry.ts"]);
    expect(retry.response).toContain("1 file changed, +1 -0");
    expect(retry.response).toContain("src/retry.ts +1 -0");
    expect(retry.session_id).toMatch(/^git:[0-9a-f]{12}:2026-10-01$/);

    // Only the reverted commit is outdated, and the correction names the revert.
    const outdated = memories.filter((m) => m.outdated);
    expect(outdated.map((m) => m.refs[0])).toEqual([hashes.backoff]);
    expect(outdated[0]!.corrections).toEqual([
      expect.objectContaining({
        kind: "outdated",
        commit: hashes.revert,
        reason: expect.stringContaining(`Reverted by commit ${hashes.revert.slice(0, 12)}`),
      }),
    ]);
    const revert = byHash.get(hashes.revert)!;
    expect(revert.tags).toContain("revert");
    expect(revert.refs).toContain(`reverts:${hashes.backoff}`);

    const fix = byHash.get(hashes.fix)!;
    expect(fix.tags).toEqual(expect.arrayContaining(["git", "fix"]));
    expect(fix.refs).toEqual([hashes.fix, `fixes:${hashes.rates}`, "FX-9", "#57", "src/rates.ts"]);
    expect(fix.response).toContain(`Fixes commit ${hashes.rates}.`);
    expect(byHash.get(hashes.retry)!.tags).not.toContain("fix");

    // The key is gone from what was stored and what is found; the words around it are there.
    const rates = byHash.get(hashes.rates)!;
    expect(rates.thought).toBe(
      "Rates change hourly, so a cache saves a provider call per charge. The provider key [redacted] moved to the vault.",
    );
    expect(JSON.stringify(memories)).not.toContain(RATES_SECRET.slice(0, 16));
    const found = await search(dev, "provider key moved to the vault exchange rates cache");
    expect(found.map((m) => m.id)).toContain(rates.id);
    const bySecret = await search(dev, RATES_SECRET);
    expect(JSON.stringify(bySecret)).not.toContain(RATES_SECRET.slice(0, 16));
  });

  it("stores nothing twice on a second run, and leaves the corrections as they were", async () => {
    const before = await memoriesOf(dev);
    const again = await cairnCli(["import", "git", "--repo", repo, "--branch", "main", ...common(dev)]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("5 commits, 0 stored, 5 already there");
    const after = await memoriesOf(dev);
    expect(after.map((m) => m.id).sort()).toEqual(before.map((m) => m.id).sort());
    expect(after.find((m) => m.outdated)!.corrections).toHaveLength(1);
  });

  it("tells assess_change how the imported changes ended: the reverted backoff, the fixed rate cache", async () => {
    const byHash = new Map((await memoriesOf(dev)).map((m) => [m.refs[0], m]));
    const assess = async (intent: string) => {
      const res = await http(cairn.url, "POST", "/v1/changes/assessment", { token: dev.token, body: { intent } });
      expect(res.status).toBe(200);
      return res.body as {
        confidence: string;
        outcomes: Array<{ outcome: string; changes: Array<{ memory_id: string; commit?: string; by?: string }> }>;
      };
    };
    const endingOf = (answer: Awaited<ReturnType<typeof assess>>, hash: string) => {
      const group = answer.outcomes.find((g) => g.changes.some((c) => c.commit === hash));
      return group && { outcome: group.outcome, by: group.changes.find((c) => c.commit === hash)!.by };
    };
    const backoff = await assess("switch the retry backoff to exponential");
    expect(endingOf(backoff, hashes.backoff)).toEqual({ outcome: "reverted", by: byHash.get(hashes.revert)!.id });
    const rates = await assess("cache the exchange rates");
    expect(endingOf(rates, hashes.rates)).toEqual({ outcome: "fixed", by: byHash.get(hashes.fix)!.id });
    // The retry worker itself stood; an intent about something this history never touched finds nothing.
    expect(endingOf(await assess("add a payment retry worker"), hashes.retry)?.outcome).toBe("stood");
    expect(await assess("translate the onboarding emails into Portuguese")).toEqual({ confidence: "none", similar: 0, outcomes: [] });
  });

  it("with an admin token, writes in bulk (add_memories): the same memories in the same order, stored once", async () => {
    const run = await cairnCli(["import", "git", "--repo", repo, ...common(ops)]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("5 commits, 5 stored, 0 already there; 1 reverts, 1 reverted commits marked outdated");
    const bulk = await memoriesOf(ops);
    const single = await memoriesOf(dev);
    // Newest first, commit by commit, as the one-at-a-time writes of an agent token list them.
    expect(bulk.map((m) => m.refs[0])).toEqual(single.map((m) => m.refs[0]));
    expect(bulk.map((m) => m.agent)).toEqual(Array(5).fill("ops"));
    expect(bulk.filter((m) => m.outdated).map((m) => m.refs[0])).toEqual([hashes.backoff]);
    const audit = await http(cairn.url, "GET", `/v1/audit?memory_id=${bulk[0]!.id}`, { token: ops.token });
    expect((audit.body.entries as Array<{ action: string }>).map((e) => e.action)).toEqual(["add"]);
    expect((await search(ops, "exponential backoff")).map((m) => m.id)).toContain(bulk.find((m) => m.outdated)!.id);

    const again = await cairnCli(["import", "git", "--repo", repo, ...common(ops)]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("5 commits, 0 stored, 5 already there");
    expect((await memoriesOf(ops)).map((m) => m.id)).toEqual(bulk.map((m) => m.id));
  });

  it("sends bulk requests within the contract's limits", async () => {
    const contract = await loadContract();
    const schema = contract.operation("add_memories").inputSchema as { properties: { memories: { maxItems: number } } };
    expect(schema.properties.memories.maxItems).toBe(BULK_ITEMS);
    expect(BULK_BYTES).toBeLessThan(512 * 1024);
  });

  it("with --since, imports the later commits and the older commit a revert among them reverted", async () => {
    const run = await cairnCli(["import", "git", "--repo", repo, "--since", "2026-10-01T12:30:00Z", ...common(sinceDev)]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("3 commits, 3 stored");
    expect(run.stdout).toContain("(1 of them from before --since)");
    const memories = await memoriesOf(sinceDev);
    expect(memories.map((m) => m.refs[0]).sort()).toEqual([hashes.backoff, hashes.revert, hashes.fix].sort());
    expect(memories.filter((m) => m.outdated).map((m) => m.refs[0])).toEqual([hashes.backoff]);
  });
});

describe("cairn import transcripts", () => {
  const secrets = [
    "sk-ant-api03-Zq8vK2mLx9RtY4wP7nB3cD6fG1hJ5kL0",
    "Tr0ub4dor-staging-77",
    "AKIAQ3EGUV7RX5NLM2PA",
    "ghp_R8kW3nQ7vX2mL9pZ4tY6bC1dF5gH0jK8sA3e",
    "eyJhbGciOiJIUzI1NiJ9",
    "MIIEpAIBAAKCAQEA7x9Qm2Lk",
    "b3BlbnNzaC1rZXktdjEAAAAA",
    "pg-S3cretPass",
    "sk-proj-Qw3rTy7uIo9pAs2dFg5hJk8lZx1cVb4nM6",
    "hunter2-ci-Publish",
  ];

  it("proves the fixtures hold the secrets the import must keep out", async () => {
    const text =
      (await readFile(join(FIXTURES, "claude-code/-home-dev-shop/7d3c1f4e-2b6a-4c1d-9e8f-0a1b2c3d4e5f.jsonl"), "utf8")) +
      (await readFile(join(FIXTURES, "codex/2026/11/20/rollout-2026-11-20T10-00-00-0199f3a2-5b1c-7d20-8e4f-1a2b3c4d5e6f.jsonl"), "utf8"));
    for (const secret of secrets) expect({ secret, present: text.includes(secret) }).toEqual({ secret, present: true });
  });

  it("stores one memory per exchange of Claude Code and Codex sessions, with tool use summarised and no secret", async () => {
    const claude = await cairnCli([
      "import",
      "transcripts",
      "--harness",
      "claude-code",
      "--path",
      join(FIXTURES, "claude-code"),
      ...common(talker),
    ]);
    expect(claude.code).toBe(0);
    expect(claude.stdout).toContain("1 files, 1 sessions, 2 exchanges, 2 stored, 0 already there; 1 requests with no answer passed over");
    const codex = await cairnCli(["import", "transcripts", "--harness", "codex", "--path", join(FIXTURES, "codex"), ...common(talker)]);
    expect(codex.code).toBe(0);
    expect(codex.stdout).toContain("1 files, 1 sessions, 2 exchanges, 2 stored, 0 already there");

    const memories = await memoriesOf(talker);
    expect(memories).toHaveLength(4);
    const byPrompt = (start: string) => memories.find((m) => m.prompt.startsWith(start))!;
    const retries = byPrompt("Why do payment retries double-charge");
    expect(retries).toMatchObject({
      session_id: "7d3c1f4e-2b6a-4c1d-9e8f-0a1b2c3d4e5f",
      model: "claude-sonnet-4-5",
      occurred_at: "2026-11-20T09:00:00.000Z",
      source: "import",
      trusted: false,
      agent: "historian",
    });
    expect(retries.tags).toEqual(["transcript", "claude-code"]);
    expect(retries.refs).toEqual(["PAY-412", "/home/dev/shop/src/payments/retry.ts"]);
    expect(retries.thought).toContain("The retry path probably sends the charge again without an idempotency key.");
    expect(retries.thought).toContain("- Read (file_path: /home/dev/shop/src/payments/retry.ts)");
    expect(retries.thought).toContain("Authorization: Bearer [redacted]");
    expect(retries.thought).toContain("failed: curl: (6) Could not resolve host");
    expect(retries.response).toContain("password=[redacted] and should move to the vault");
    const notes = byPrompt("Write the deploy notes");
    expect(notes.thought).toBe("- Write (file_path: /home/dev/shop/docs/deploy-retries.md)");
    expect(notes.response).toContain("the signing key:\n[redacted]\nstays in the vault.");

    const ledger = byPrompt("Make the ledger export stream rows");
    expect(ledger).toMatchObject({
      session_id: "0199f3a2-5b1c-7d20-8e4f-1a2b3c4d5e6f",
      model: "gpt-5-codex",
      occurred_at: "2026-11-20T10:00:01.100Z",
    });
    expect(ledger.thought).toContain("**Streaming the export**");
    expect(ledger.thought).toContain("- shell (command: bash -lc rg -n 'rows.push' src/ledger; workdir: /home/dev/ledger)");
    expect(ledger.thought).toContain("- apply_patch (files: src/ledger/export.ts)");
    expect(ledger.refs).toEqual(["LEDGER-88", "src/ledger/export.ts"]);
    expect(ledger.response).toContain("postgres://ledger:[redacted]@db.internal/ledger is unchanged");
    expect(byPrompt("CI fails to publish").prompt).toBe("CI fails to publish: is OPENAI_API_KEY=[redacted] set as a secret?");

    // Outputs, side chains, injected context and encrypted reasoning stay out; what was said stays in.
    const everything = JSON.stringify(memories);
    for (const marker of [
      "WHOLE-FILE-OUTPUT-MARKER",
      "WRITTEN-CONTENT-MARKER",
      "SIDECHAIN-ONLY-MARKER",
      "SHELL-OUTPUT-MARKER",
      "PATCH-BODY-MARKER",
      "ENCRYPTEDREASONINGMARKER",
      "COMPACT-SUMMARY-MARKER",
      "environment_context",
    ]) {
      expect({ marker, present: everything.includes(marker) }).toEqual({ marker, present: false });
    }
    for (const secret of secrets) {
      expect({ secret, stored: everything.includes(secret) }).toEqual({ secret, stored: false });
      expect({ secret, found: JSON.stringify(await search(talker, secret)).includes(secret) }).toEqual({ secret, found: false });
    }
    const found = await search(talker, "staging config should move to the vault");
    expect(found.map((m) => m.id)).toContain(retries.id);

    const again = await cairnCli(["import", "transcripts", "--harness", "codex", "--path", join(FIXTURES, "codex"), ...common(talker)]);
    expect(again.stdout).toContain("2 exchanges, 0 stored, 2 already there");
    expect(await memoriesOf(talker)).toHaveLength(4);
  });
});

describe("bad input to the importers", () => {
  it("answers with one clear line and an exit code, and stores nothing half-way", async () => {
    const notRepo = join(dir, "not-a-repo");
    await mkdir(notRepo, { recursive: true });
    const cut = join(dir, "cut");
    await cp(join(FIXTURES, "claude-code"), cut, { recursive: true });
    // A second session file whose last line was cut off mid-write: the first file is sound, and still nothing is sent.
    await writeFile(
      join(cut, "-home-dev-shop", "zz-cut.jsonl"),
      '{"type":"user","sessionId":"s2","uuid":"u1","message":{"role":"user","content":"hi"}}\n{"type":"assis',
    );
    const codexFile = join(FIXTURES, "codex/2026/11/20/rollout-2026-11-20T10-00-00-0199f3a2-5b1c-7d20-8e4f-1a2b3c4d5e6f.jsonl");
    const url = ["--url", cairn.url.toString()];
    const cases: Array<[string[], number, string]> = [
      [["import", "git", "--repo", notRepo, ...common(bad)], 2, `--repo: ${notRepo} is not a git repository`],
      [["import", "git", "--repo", join(dir, "nowhere"), ...common(bad)], 2, "does not exist"],
      [["import", "git", "--repo", repo, "--branch", "nope", ...common(bad)], 2, 'has no branch or commit "nope"'],
      [["import", "git", "--repo", repo, "--since", "last tuesday", ...common(bad)], 2, "--since must be a date"],
      [["import", "git", ...common(bad)], 2, "import git: --repo PATH is required"],
      [["import", "transcripts", "--harness", "claude-code", "--path", cut, ...common(bad)], 2, "zz-cut.jsonl: line 2 is not JSON"],
      [
        ["import", "transcripts", "--harness", "cursor", "--path", cut, ...common(bad)],
        2,
        'unknown harness "cursor"; one of claude-code, codex',
      ],
      [["import", "transcripts", "--harness", "claude-code", "--path", codexFile, ...common(bad)], 2, "is not a Claude Code session file"],
      [
        ["import", "transcripts", "--harness", "codex", "--path", join(FIXTURES, "claude-code"), ...common(bad)],
        2,
        "is not a Codex rollout file",
      ],
      [["import", "transcripts", "--harness", "codex", "--path", notRepo, ...common(bad)], 2, "no .jsonl transcript under"],
      [["import", "svn", ...common(bad)], 2, 'import: unknown kind "svn"'],
      [["import", "git", "--repo", repo, "--tokens-file", "t.yaml", ...url], 2, "an import writes into one workspace: pass --token TOKEN"],
      [["import", "git", "--repo", repo, ...url], 2, "no token"],
      [["import", "git", "--repo", repo, "--token", "not-a-token", ...url], 1, "memory-core does not know this token (401)"],
    ];
    for (const [args, code, message] of cases) {
      const run = await cairnCli(args);
      expect({ args: args.slice(0, 3), code: run.code }).toEqual({ args: args.slice(0, 3), code });
      expect(run.stderr).toContain(message);
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
      expect(run.stderr).not.toMatch(/\bat .*\(|node_modules/);
    }
    expect(await memoriesOf(bad)).toHaveLength(0);

    // The same workspace, token and sound files do import: the empty store above is the refusals' doing.
    await rm(join(cut, "-home-dev-shop", "zz-cut.jsonl"));
    const sound = await cairnCli(["import", "transcripts", "--harness", "claude-code", "--path", cut, ...common(bad)]);
    expect(sound.code).toBe(0);
    expect(await memoriesOf(bad)).toHaveLength(2);

    // A session that grew after it was imported: the exchange stored before is left as it was, and counted.
    const file = join(cut, "-home-dev-shop", "7d3c1f4e-2b6a-4c1d-9e8f-0a1b2c3d4e5f.jsonl");
    await writeFile(file, (await readFile(file, "utf8")).replace("stays in the vault.", "stays in the vault. GREW-LATER-MARKER"));
    const grown = await cairnCli(["import", "transcripts", "--harness", "claude-code", "--path", cut, ...common(bad)]);
    expect(grown.code).toBe(0);
    expect(grown.stdout).toContain("2 exchanges, 0 stored, 1 already there, 1 stored before with other content (left as they were)");
    const kept = await memoriesOf(bad);
    expect(kept).toHaveLength(2);
    expect(kept.some((m) => m.response.includes("stays in the vault."))).toBe(true);
    expect(JSON.stringify(kept)).not.toContain("GREW-LATER-MARKER");
  });
});
