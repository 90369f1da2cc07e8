import { execFile } from "node:child_process";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INBOX_BYTES, INBOX_LINES } from "../src/inbox.js";
import { HOOK_OUTPUT_BYTES } from "../src/prompt-hook.js";
import { http, makeToken, startCairn, uniqueWorkspace, type TestCairn } from "../../memory-core/test/support/harness.js";

const BIN = fileURLToPath(new URL("../bin/cairn-load.mjs", import.meta.url));
const workspace = uniqueWorkspace("inbox-hook");
const reader = makeToken(workspace, "backend");
const sender = makeToken(workspace, "frontend");
const quiet = makeToken(workspace, "docs");
const stranger = makeToken(uniqueWorkspace("inbox-hook-other"), "backend");
const archivist = makeToken(workspace, "archivist");
let cairn: TestCairn;
let root: string;
/** The team message of the first test: unread for every other agent of the workspace until it marks it. */
let teamMessage = "";

/** A hook as a harness runs it: a child process in the project, its JSON on stdin. */
function hook(args: string[], stdin: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      { env: { PATH: process.env.PATH ?? "", ...env }, cwd: root },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin!.end(stdin);
  });
}
const session = (token: string, source = "startup") =>
  hook(
    ["--agent", "backend", "--harness", "claude-code", "--hook", "session"],
    JSON.stringify({ session_id: "s", hook_event_name: "SessionStart", source, cwd: root }),
    { CAIRN_URL: cairn.url.origin, CAIRN_TOKEN: token },
  );
const prompt = (token: string, text: string) =>
  hook(["--hook", "prompt"], JSON.stringify({ session_id: "s", hook_event_name: "UserPromptSubmit", prompt: text, cwd: root }), {
    CAIRN_URL: cairn.url.origin,
    CAIRN_TOKEN: token,
  });
const contextOf = (stdout: string) => JSON.parse(stdout).hookSpecificOutput.additionalContext as string;
const messageLines = (context: string) => context.split("\n").filter((l) => /^- m_[0-9a-f]{32} /.test(l));

async function send(body: Record<string, unknown>): Promise<string> {
  const res = await http(cairn.url, "POST", "/v1/messages", { token: sender.token, body });
  if (res.status !== 201) throw new Error(`send_message answered ${res.status}: ${res.text}`);
  return res.body.id as string;
}

beforeAll(async () => {
  cairn = await startCairn([reader, sender, quiet, stranger, archivist]);
  root = await mkdtemp(join(tmpdir(), "cairn-inbox-hook-"));
  await mkdir(join(root, "agents", "backend"), { recursive: true });
  await writeFile(join(root, "agents", "backend", "MEMORY.md"), "- Lesson: retry payments only with an idempotency key.\n");
});
afterAll(() => cairn?.close());

describe("unread messages in the hooks", () => {
  it("puts the unread messages into the session at start, after compaction and at a prompt, until they are acknowledged", async () => {
    const ids: string[] = [];
    for (let n = 1; n <= 7; n++)
      ids.push(await send({ to: "backend", subject: `Hand-over ${n}: finish the ledger migration`, body: `Step ${n}.` }));
    const team = await send({ to: "team", subject: "Freeze from Friday noon", body: "No deploys." });
    teamMessage = team;

    for (const source of ["startup", "compact"]) {
      const start = await session(reader.token, source);
      expect(start.code).toBe(0);
      const context = contextOf(start.stdout);
      // The index is there, and after it the newest unread messages, one line each: five at most, within the budget.
      expect(context).toContain("retry payments only with an idempotency key");
      const lines = messageLines(context);
      expect(lines).toHaveLength(INBOX_LINES);
      expect(lines[0]).toContain(team);
      expect(lines[0]).toMatch(/^- m_[0-9a-f]{32} \d{4}-\d\d-\d\d \d\d:\d\d frontend to team: Freeze from Friday/);
      // The three older ones are counted, for query_inbox to page to.
      expect(context).toContain("- and 3 more unread: query_inbox");
      expect(lines[1]).toContain(ids[6]);
      expect(lines[1]).toContain("Hand-over 7");
      const block = context.slice(context.indexOf("Unread Cairn messages"));
      expect(Buffer.byteLength(block)).toBeLessThanOrEqual(INBOX_BYTES);
    }

    const asked = await prompt(reader.token, "Write a limerick about a giraffe who learns to play the cello");
    expect(asked.code).toBe(0);
    expect(Buffer.byteLength(asked.stdout)).toBeLessThanOrEqual(HOOK_OUTPUT_BYTES);
    const promptLines = messageLines(contextOf(asked.stdout));
    expect(promptLines.length).toBeGreaterThanOrEqual(1);
    expect(promptLines.length).toBeLessThanOrEqual(INBOX_LINES);
    expect(promptLines[0]).toContain(team);

    // Acknowledged, they are gone from both hooks; those left come up in their place.
    const ack = await http(cairn.url, "POST", "/v1/messages/ack", { token: reader.token, body: { message_ids: [team, ...ids.slice(2)] } });
    expect(ack.body.marked).toBe(6);
    const after = messageLines(contextOf((await session(reader.token)).stdout));
    expect(after.map((l) => /m_[0-9a-f]{32}/.exec(l)![0])).toEqual([ids[1], ids[0]]);
    const promptAfter = messageLines(contextOf((await prompt(reader.token, "Another unrelated question about giraffes")).stdout));
    expect(promptAfter.map((l) => /m_[0-9a-f]{32}/.exec(l)![0])).toEqual([ids[1], ids[0]]);
  });

  it("gives no message to an agent with none to read: the index alone, and a silent prompt hook", async () => {
    const start = await session(stranger.token);
    expect(start.code).toBe(0);
    expect(contextOf(start.stdout)).toContain("retry payments only with an idempotency key");
    expect(messageLines(contextOf(start.stdout))).toEqual([]);
    const asked = await prompt(stranger.token, "Write a limerick about a giraffe who learns to play the cello");
    expect([asked.code, asked.stdout]).toEqual([0, ""]);
    // The same workspace's other agent has the team message, unread.
    const docs = await prompt(quiet.token, "Write a limerick about a giraffe who learns to play the cello");
    expect(messageLines(contextOf(docs.stdout))).toHaveLength(1);
  });

  it("counts unread messages that lie behind many read ones, so that they do not wait unseen", async () => {
    const oldest = await send({ to: "archivist", subject: "The oldest hand-over", body: "Still unread." });
    const read: string[] = [];
    // More read messages after it than a query_inbox call examines (200 slots); sent 20 at a time.
    for (let n = 0; n < 201; n += 20) {
      const batch = Array.from({ length: Math.min(20, 201 - n) }, (_, i) =>
        send({ to: "archivist", subject: `Routine note ${n + i}`, body: "Read at once." }),
      );
      read.push(...(await Promise.all(batch)));
    }
    for (let i = 0; i < read.length; i += 100) {
      const res = await http(cairn.url, "POST", "/v1/messages/ack", {
        token: archivist.token,
        body: { message_ids: read.slice(i, i + 100) },
      });
      expect(res.status).toBe(200);
    }
    const team = await http(cairn.url, "POST", "/v1/messages/ack", { token: archivist.token, body: { message_ids: [teamMessage] } });
    expect(team.body.marked).toBe(1);
    const asked = await prompt(archivist.token, "Write a limerick about a giraffe who learns to play the cello");
    const context = contextOf(asked.stdout);
    expect(context).toContain("- and 1 more unread: query_inbox with unread_only, following next_cursor");
    expect(messageLines(context)).toEqual([]);
    // Paging as the line says finds it.
    let cursor: string | null = null;
    const found: string[] = [];
    for (let page = 0; page < 5 && found.length === 0; page++) {
      const res: { body: { messages: Array<{ id: string }>; next_cursor: string | null } } = await http(
        cairn.url,
        "GET",
        `/v1/messages?unread_only=true${cursor ? `&cursor=${cursor}` : ""}`,
        {
          token: archivist.token,
        },
      );
      found.push(...res.body.messages.map((m: { id: string }) => m.id));
      cursor = res.body.next_cursor;
    }
    expect(found).toEqual([oldest]);
  });

  it("starts the session with the index alone when Cairn cannot answer, and says why on stderr", async () => {
    const closed = await hook(
      ["--agent", "backend", "--harness", "claude-code", "--hook", "session"],
      JSON.stringify({ session_id: "s", hook_event_name: "SessionStart", source: "compact", cwd: root }),
      { CAIRN_URL: "http://127.0.0.1:9", CAIRN_TOKEN: reader.token },
    );
    expect(closed.code).toBe(0);
    expect(contextOf(closed.stdout)).toContain("retry payments only with an idempotency key");
    expect(messageLines(contextOf(closed.stdout))).toEqual([]);
    expect(closed.stderr).toContain("unread messages left out");
    const refused = await session("cairn_not-a-token");
    expect(refused.code).toBe(0);
    expect(contextOf(refused.stdout)).toContain("retry payments only with an idempotency key");
    expect(refused.stderr).toContain("401");
  });
});
