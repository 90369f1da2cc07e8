import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { http, makeToken, startCairn, uniqueWorkspace, type TestCairn, type TestToken } from "../../memory-core/test/support/harness.js";
import { gitIn } from "./support/git.js";
import { cairnCli } from "./support/run-cli.js";

/**
 * Secrets in imported history stay out of everything the import writes: the memories, their corrections and the
 * audit log, also after the memory is forgotten. A real repository, the CLI as a child process, a real stack.
 */

const AWS_KEY_ID = "AKIAI44QH8DHBEXAMPLE";
const AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const DB_URL = "postgres://root:p@ss/w0rd@db.internal:5432/app";
const SLACK_HOOK = "https://hooks.slack.com/services/T0123ABCD/B0456EFGH/AbCdEfGhIjKlMnOpQrStUvWx";
const AZURE = "AccountKey=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdo+/Q==;";
const NPM = "npm_AbCdEf0123456789GhIjKl0123456789MnOp";
/** What of each secret must appear nowhere (a URL password's parts, not the user and host around it). */
const LEAKS = [AWS_KEY_ID, "wJalrXUtnFEMI", "K7MDENG", "p@ss", "w0rd@", "AbCdEfGhIjKlMnOpQrStUvWx", "Zm9vYmFyYmF6", NPM];

let dir: string;
let cairn: TestCairn;
let repo: string;
let reverted: string;
let revert: string;
const ws = uniqueWorkspace("secrets");
const dev = makeToken(ws, "dev");
const ops = makeToken(ws, "ops", "admin");
const bulkWs = uniqueWorkspace("secrets-bulk");
const bulkOps = makeToken(bulkWs, "ops", "admin");
const talkWs = uniqueWorkspace("secrets-talk");
const talker = makeToken(talkWs, "historian");
const talkOps = makeToken(talkWs, "ops", "admin");

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cairn-import-secrets-"));
  cairn = await startCairn([dev, ops, bulkOps, talker, talkOps]);
  repo = join(dir, "deploy");
  await mkdir(repo, { recursive: true });
  const git = gitIn(repo, dir);
  git("init", "-q", "-b", "main");
  await writeFile(join(repo, "deploy.yaml"), "region: eu-west-1\n");
  git("add", "deploy.yaml");
  git("commit", "-q", "-m", "Add the deploy config");
  await writeFile(join(repo, "deploy.yaml"), "region: eu-west-1\nkey: set\n");
  git("add", "deploy.yaml");
  git("commit", "-q", "-m", `Add ${AWS_KEY_ID} to deploy config`, "-m", `The pair is ${AWS_SECRET}; the database is ${DB_URL}.`);
  reverted = git("rev-parse", "HEAD");
  git("revert", "--no-edit", reverted);
  revert = git("rev-parse", "HEAD");
});
afterAll(async () => {
  await cairn?.close();
  await rm(dir, { recursive: true, force: true });
});

interface Memory {
  id: string;
  prompt: string;
  thought: string;
  response: string;
  refs: string[];
  corrections: Array<{ kind: string; reason: string; commit?: string }>;
}

async function memoriesOf(token: TestToken): Promise<Memory[]> {
  const res = await http(cairn.url, "GET", "/v1/memories/recent?limit=100&detail=full", { token: token.token });
  expect(res.status).toBe(200);
  return res.body.turns as Memory[];
}

async function auditOf(admin: TestToken): Promise<Array<{ action: string; memory_id: string; reason?: string }>> {
  const res = await http(cairn.url, "GET", "/v1/audit?limit=100", { token: admin.token });
  expect(res.status).toBe(200);
  return res.body.entries;
}

const leaked = (value: unknown) => LEAKS.filter((secret) => JSON.stringify(value).includes(secret));
const common = (token: TestToken) => ["--url", cairn.url.toString(), "--token", token.token];

describe("secrets in imported history", () => {
  it("git: a key in a reverted commit's subject reaches neither the memories, their corrections nor the audit log", async () => {
    const run = await cairnCli(["import", "git", "--repo", repo, ...common(dev)]);
    expect(run.stderr).toBe("");
    expect(run.stdout).toContain("3 commits, 3 stored, 0 already there; 1 reverts, 1 reverted commits marked outdated");

    const memories = await memoriesOf(dev);
    const byHash = new Map(memories.map((m) => [m.refs[0], m]));
    expect(leaked(memories)).toEqual([]);
    const marked = byHash.get(reverted)!;
    expect(marked.prompt).toBe("Add [redacted] to deploy config");
    expect(marked.thought).toBe("The pair is [redacted]; the database is postgres://root:[redacted]@db.internal:5432/app.");
    expect(byHash.get(revert)!.prompt).toBe('Revert "Add [redacted] to deploy config"');
    expect(marked.corrections).toEqual([
      expect.objectContaining({
        kind: "outdated",
        commit: revert,
        reason: `Reverted by commit ${revert.slice(0, 12)} (the revert's memory says why).`,
      }),
    ]);

    const audit = await auditOf(ops);
    expect(leaked(audit)).toEqual([]);
    expect(audit.map((e) => e.action).sort()).toEqual(["add", "add", "add", "mark_outdated"]);
    expect(audit.find((e) => e.action === "mark_outdated")).toMatchObject({ memory_id: marked.id, reason: marked.corrections[0]!.reason });

    // Forgotten, the memory leaves nothing of the key behind: the audit log never held it.
    const forget = await http(cairn.url, "POST", `/v1/memories/${marked.id}/forget`, {
      token: ops.token,
      body: { reason: "held a deploy key" },
    });
    expect(forget.status).toBe(200);
    expect((await http(cairn.url, "GET", `/v1/memories/${marked.id}`, { token: ops.token })).status).toBe(410);
    const after = await auditOf(ops);
    expect(after.map((e) => e.action).sort()).toEqual(["add", "add", "add", "forget", "mark_outdated"]);
    expect(leaked(after)).toEqual([]);
    const found = await http(cairn.url, "POST", "/v1/memories/query", {
      token: dev.token,
      body: { query: AWS_KEY_ID, detail: "full", limit: 20 },
    });
    expect(found.status).toBe(200);
    expect((found.body.hits as unknown[]).length).toBeGreaterThan(0);
    expect(leaked(found.body)).toEqual([]);
  });

  it("git with an admin token (add_memories in bulk): the same, through the bulk path", async () => {
    const run = await cairnCli(["import", "git", "--repo", repo, ...common(bulkOps)]);
    expect(run.stdout).toContain("3 commits, 3 stored, 0 already there; 1 reverts, 1 reverted commits marked outdated");
    const memories = await memoriesOf(bulkOps);
    expect(memories.map((m) => m.prompt).sort()).toEqual([
      "Add [redacted] to deploy config",
      "Add the deploy config",
      'Revert "Add [redacted] to deploy config"',
    ]);
    expect(leaked(memories)).toEqual([]);
    const audit = await auditOf(bulkOps);
    expect(audit.filter((e) => e.action === "mark_outdated")).toHaveLength(1);
    expect(leaked(audit)).toEqual([]);
  });

  it("records a revert once: a second run leaves a mark of that revert worded otherwise as it was", async () => {
    const marked = (await memoriesOf(bulkOps)).find((m) => m.corrections.length > 0)!;
    // A mark of the same revert with the reason an earlier importer wrote, after the one this importer wrote.
    const earlier = `Reverted by commit ${revert.slice(0, 12)}: "Revert "Add [redacted] to deploy config""`;
    const res = await http(cairn.url, "POST", `/v1/memories/${marked.id}/outdated`, {
      token: bulkOps.token,
      body: { reason: earlier, commit: revert },
    });
    expect(res.status).toBe(200);
    const run = await cairnCli(["import", "git", "--repo", repo, ...common(bulkOps)]);
    expect(run.stdout).toContain("3 commits, 0 stored, 3 already there; 1 reverts, 1 reverted commits marked outdated");
    const after = (await memoriesOf(bulkOps)).find((m) => m.id === marked.id)!;
    expect(after.corrections.map((c) => [c.commit, c.reason])).toEqual([
      [revert, `Reverted by commit ${revert.slice(0, 12)} (the revert's memory says why).`],
      [revert, earlier],
    ]);
  });

  it("transcripts: secrets in a request, a tool call, a file path, a session id and an answer stay out", async () => {
    const sessions = join(dir, "claude", "-home-dev-deploy");
    await mkdir(sessions, { recursive: true });
    const session = `deploy-${NPM}`;
    const lines = [
      {
        type: "user",
        sessionId: session,
        uuid: `u1-${AWS_KEY_ID}`,
        timestamp: "2026-11-20T09:00:00Z",
        message: { role: "user", content: `Why does the deploy fail with ${AWS_KEY_ID} and ${AWS_SECRET}? (DEPLOY-7)` },
      },
      {
        type: "assistant",
        sessionId: session,
        uuid: "a1",
        message: {
          model: "claude-sonnet-4-5",
          content: [
            { type: "thinking", thinking: `The alert goes to ${SLACK_HOOK} when the migration fails.` },
            { type: "tool_use", name: "Bash", input: { command: `psql ${DB_URL} -c 'select 1'` } },
            { type: "tool_use", name: "Read", input: { file_path: `/home/dev/deploy/${NPM}/.npmrc` } },
          ],
        },
      },
      { type: "user", sessionId: session, uuid: "r1", message: { content: [{ type: "tool_result", content: "1 row" }] } },
      {
        type: "assistant",
        sessionId: session,
        uuid: "a2",
        message: { content: [{ type: "text", text: `The storage string holds ${AZURE} EndpointSuffix=core.windows.net; rotate it.` }] },
      },
    ];
    await writeFile(join(sessions, "deploy.jsonl"), lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const run = await cairnCli(["import", "transcripts", "--harness", "claude-code", "--path", join(dir, "claude"), ...common(talker)]);
    expect(run.stderr).toBe("");
    expect(run.stdout).toContain("1 exchanges, 1 stored");

    const [memory] = await memoriesOf(talker);
    expect(leaked(memory)).toEqual([]);
    expect(memory).toMatchObject({
      prompt: "Why does the deploy fail with [redacted] and [redacted]? (DEPLOY-7)",
      session_id: "deploy--redacted-",
      response: "The storage string holds AccountKey=[redacted]; EndpointSuffix=core.windows.net; rotate it.",
      refs: ["DEPLOY-7", "/home/dev/deploy/[redacted]/.npmrc"],
    });
    expect(memory!.thought).toContain("The alert goes to https://hooks.slack.com/services/[redacted] when the migration fails.");
    expect(memory!.thought).toContain("- Bash (command: psql postgres://root:[redacted]@db.internal:5432/app -c 'select 1')");
    expect(leaked(await auditOf(talkOps))).toEqual([]);
  });
});
