import { execFile, execFileSync } from "node:child_process";
import { appendFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { createServer, type AddressInfo, type Server } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { http, makeToken, startCairn, uniqueWorkspace, type TestCairn } from "../../memory-core/test/support/harness.js";

const BIN = fileURLToPath(new URL("../bin/cairn-load.mjs", import.meta.url));
const workspace = uniqueWorkspace("capture-hook");
const agent = makeToken(workspace, "backend-dev");
const admin = makeToken(workspace, "ops", "admin");
let cairn: TestCairn;
let root: string;
let project: string;

interface Memory {
  id: string;
  session_id: string;
  prompt: string;
  thought: string;
  response: string;
  tags: string[];
  refs: string[];
  source: string;
  trusted: boolean;
  kind: string;
  code?: { repository?: string; branch?: string; paths: Array<{ path: string }> };
}

/** The hook as a harness runs it: a child process, the hook's JSON on stdin, the project as working dir. */
function hook(
  input: Record<string, unknown>,
  env: Record<string, string>,
  args: string[] = [],
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, "--hook", "capture", ...args],
      { cwd: project, env: { PATH: process.env.PATH ?? "", ...env } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin!.end(JSON.stringify(input));
  });
}

/** A fresh state folder: a capture that has never seen the transcript. */
async function stateHome(): Promise<string> {
  const dir = await mkdtemp(join(root, "state-"));
  return dir;
}
const envFor = (state: string, extra: Record<string, string> = {}) => ({
  CAIRN_URL: cairn.url.origin,
  CAIRN_TOKEN: agent.token,
  XDG_STATE_HOME: state,
  ...extra,
});

async function sessionMemories(session: string): Promise<Memory[]> {
  const res = await http(cairn.url, "GET", `/v1/memories/recent?limit=100&detail=full&session_id=${encodeURIComponent(session)}`, {
    token: agent.token,
  });
  expect(res.status).toBe(200);
  return (res.body.turns as Memory[]).reverse();
}

/** Everything the workspace stores, as stored (documents and metadata), for what must never be there. */
async function exportText(): Promise<string> {
  const pages: string[] = [];
  for (const collection of ["turns", "summaries"]) {
    let after: string | undefined;
    do {
      const res = await http(
        cairn.url,
        "GET",
        `/v1/admin/records?collection=${collection}&limit=500&include_embeddings=false${after ? `&after=${after}` : ""}`,
        { token: admin.token },
      );
      expect(res.status).toBe(200);
      pages.push(res.text);
      after = res.body.next_cursor ?? undefined;
    } while (after);
  }
  return pages.join("\n");
}

// ---- Claude Code session lines, as Claude Code writes them ----
let tick = 0;
const at = () => new Date(Date.UTC(2026, 10, 30, 9, 0, tick++)).toISOString();
function ccLine(session: string, type: "user" | "assistant", uuid: string, message: unknown) {
  return {
    parentUuid: null,
    isSidechain: false,
    userType: "external",
    cwd: "/home/dev/shop",
    sessionId: session,
    version: "2.0.76",
    gitBranch: "main",
    type,
    uuid,
    timestamp: at(),
    message,
  };
}
const ccPrompt = (session: string, uuid: string, text: string) => ccLine(session, "user", uuid, { role: "user", content: text });
const ccSays = (session: string, uuid: string, content: unknown[]) =>
  ccLine(session, "assistant", uuid, { model: "claude-sonnet-4-5", id: `msg_${uuid}`, type: "message", role: "assistant", content });
const ccResult = (session: string, uuid: string, toolUseId: string, content: string, isError = false) =>
  ccLine(session, "user", uuid, { role: "user", content: [{ tool_use_id: toolUseId, type: "tool_result", content, is_error: isError }] });
const jsonl = (lines: unknown[]) => lines.map((l) => `${JSON.stringify(l)}\n`).join("");

/** A request, a tool call and its result, and an answer: one finished exchange. */
function ccExchange(session: string, n: number, prompt: string, tool: { name: string; input: Record<string, unknown> }, answer: string) {
  const u = (k: number) => `c${String(n).padStart(3, "0")}-${k}`;
  return [
    ccPrompt(session, u(0), prompt),
    ccSays(session, u(1), [
      { type: "thinking", thinking: `Thinking about step ${n}.`, signature: "sig" },
      { type: "tool_use", id: `toolu_${n}`, name: tool.name, input: tool.input },
    ]),
    ccResult(session, u(2), `toolu_${n}`, `result of step ${n}`),
    ccSays(session, u(3), [{ type: "text", text: answer }]),
  ];
}

// ---- Codex rollout lines ----
function codexMeta(id: string) {
  return {
    timestamp: at(),
    type: "session_meta",
    payload: {
      id,
      timestamp: at(),
      cwd: "/home/dev/ledger",
      originator: "codex_cli_rs",
      cli_version: "0.46.0",
      instructions: null,
      source: "cli",
    },
  };
}
const codexItem = (payload: Record<string, unknown>) => ({ timestamp: at(), type: "response_item", payload });
function codexExchange(n: number, prompt: string, command: string, answer: string) {
  return [
    { timestamp: at(), type: "turn_context", payload: { cwd: "/home/dev/ledger", model: "gpt-5-codex", approval_policy: "on-request" } },
    codexItem({ type: "message", role: "user", content: [{ type: "input_text", text: prompt }] }),
    { timestamp: at(), type: "event_msg", payload: { type: "user_message", message: prompt, kind: "plain" } },
    codexItem({ type: "reasoning", summary: [{ type: "summary_text", text: `Reasoning for codex step ${n}.` }], content: null }),
    codexItem({
      type: "function_call",
      name: "shell",
      arguments: JSON.stringify({ command: ["bash", "-lc", command] }),
      call_id: `call_${n}`,
    }),
    codexItem({ type: "function_call_output", call_id: `call_${n}`, output: JSON.stringify({ output: "ok", metadata: { exit_code: 0 } }) }),
    codexItem({ type: "message", role: "assistant", content: [{ type: "output_text", text: answer }] }),
  ];
}

beforeAll(async () => {
  cairn = await startCairn([agent, admin]);
  root = await mkdtemp(join(tmpdir(), "cairn-capture-"));
  project = join(root, "shop");
  await mkdir(join(project, "src", "payments"), { recursive: true });
  execFileSync("git", ["init", "-q", project]);
  // A remote URL with credentials: the citation names the repository by the URL's path alone.
  execFileSync("git", ["-C", project, "remote", "add", "origin", "https://deploy:s3cr3t@git.example.com/acme/shop.git"]);
  await mkdir(join(root, "claude", "-home-dev-shop"), { recursive: true });
});
afterAll(async () => {
  await cairn?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

describe("cairn-load --hook capture (Claude Code)", () => {
  it("keeps each finished exchange once: a repeat stores nothing, an append stores only the new, an add_memory of the agent's is not recorded again", async () => {
    const session = "5e1d0c2a-0000-4000-8000-00000000000a";
    const transcript = join(root, "claude", "-home-dev-shop", `${session}.jsonl`);
    await writeFile(
      transcript,
      jsonl([
        { type: "summary", summary: "Payment retries", leafUuid: "x" },
        ...ccExchange(
          session,
          1,
          "Why do payment retries double-charge? (PAY-412)",
          { name: "Read", input: { file_path: join(project, "src/payments/retry.ts") } },
          "Retries resend the charge without an idempotency key.",
        ),
        ...ccExchange(
          session,
          2,
          "Fix it with an idempotency key per charge attempt.",
          { name: "Edit", input: { file_path: join(project, "src/payments/retry.ts"), old_string: "a", new_string: "b" } },
          "Each attempt now sends the charge's idempotency key; the retry test passes.",
        ),
        ...ccExchange(
          session,
          3,
          "Record what we decided about retries in Cairn.",
          { name: "mcp__cairn__add_memory", input: { session_id: session, prompt: "retries", thought: "t", response: "r" } },
          "Recorded it.",
        ),
      ]),
    );
    const input = { session_id: session, transcript_path: transcript, cwd: project, hook_event_name: "Stop", stop_hook_active: false };
    const state = await stateHome();

    const first = await hook(input, envFor(state));
    expect([first.code, first.stdout]).toEqual([0, ""]);
    expect(first.stderr).toContain("Stop: 2 stored, 0 there already, 1 recorded by the agent itself");
    const stored = await sessionMemories(session);
    expect(stored.map((m) => m.prompt)).toEqual([
      "Why do payment retries double-charge? (PAY-412)",
      "Fix it with an idempotency key per charge attempt.",
    ]);
    expect(stored.every((m) => m.tags.includes("captured") && m.tags.includes("claude-code") && m.source === "import" && !m.trusted)).toBe(
      true,
    );
    expect(stored[0]!.refs).toContain("PAY-412");
    expect(stored[1]!.thought).toContain("- Edit (file_path: ");
    expect(stored[1]!.response).toBe("Each attempt now sends the charge's idempotency key; the retry test passes.");
    // What the exchange decided heads its thought and makes it a decision; the first exchange only found a cause.
    expect(stored[1]!.thought.startsWith("Decided: Each attempt now sends the charge's idempotency key")).toBe(true);
    expect([stored[0]!.kind, stored[1]!.kind]).toEqual(["turn", "decision"]);
    expect(stored[0]!.thought).not.toContain("Decided:");
    // The file the exchange edited is cited, relative to the project; the one it only read is not.
    expect(stored[1]!.code?.paths).toEqual([{ path: "src/payments/retry.ts" }]);
    // On the branch checked out in the project.
    const branch = execFileSync("git", ["symbolic-ref", "--short", "HEAD"], { cwd: project, encoding: "utf8" }).trim();
    expect(branch).toMatch(/\S/);
    expect(stored[1]!.code?.branch).toBe(branch);
    expect(stored[1]!.code?.repository).toBe("acme/shop");
    expect(JSON.stringify(stored)).not.toContain("s3cr3t");
    expect(stored[0]!.code).toBeUndefined();

    const again = await hook(input, envFor(state));
    expect([again.code, again.stdout]).toEqual([0, ""]);
    expect(again.stderr).toContain("Stop: 0 stored, 0 there already");
    expect((await sessionMemories(session)).length).toBe(2);

    // Two more exchanges appended: only they are sent, and nothing before them is read again — the part already
    // captured is overwritten with bytes that are not JSON, which a reader of the whole file would refuse.
    const before = await readFile(transcript);
    const spoiled = Buffer.from(before);
    const firstPrompt = spoiled.indexOf("Why do payment retries");
    spoiled.fill("#", firstPrompt - 30, firstPrompt + 5);
    await writeFile(transcript, spoiled);
    await appendFile(
      transcript,
      jsonl([
        ...ccExchange(
          session,
          4,
          "Add a test for two retries in a row.",
          { name: "Bash", input: { command: "npm test -- retry" } },
          "Added; both pass.",
        ),
        ...ccExchange(session, 5, "Ship it.", { name: "Bash", input: { command: "git push" } }, "Pushed."),
      ]),
    );
    const appended = await hook(input, envFor(state));
    expect([appended.code, appended.stdout]).toEqual([0, ""]);
    expect(appended.stderr).toContain("Stop: 2 stored, 0 there already");
    expect((await sessionMemories(session)).map((m) => m.prompt)).toEqual([
      "Why do payment retries double-charge? (PAY-412)",
      "Fix it with an idempotency key per charge attempt.",
      "Add a test for two retries in a row.",
      "Ship it.",
    ]);
    // A capture that has never seen the file reads it whole, and so meets the spoiled line: nothing is sent.
    const fresh = await hook(input, envFor(await stateHome()));
    expect([fresh.code, fresh.stdout]).toEqual([0, ""]);
    expect(fresh.stderr).toContain("is not JSON");
    expect((await sessionMemories(session)).length).toBe(4);
  });

  it("PreCompact then Stop: the exchange still running at PreCompact is sent once, whole, at Stop", async () => {
    const session = "5e1d0c2a-0000-4000-8000-00000000000b";
    const transcript = join(root, "claude", "-home-dev-shop", `${session}.jsonl`);
    const running = ccExchange(
      session,
      7,
      "Move the rate limiter to Redis.",
      { name: "Bash", input: { command: "rg -n limiter src" } },
      "Moved; the limiter now shares counts across instances.",
    );
    await writeFile(
      transcript,
      jsonl([
        ...ccExchange(
          session,
          6,
          "Why is the limiter per instance?",
          { name: "Grep", input: { pattern: "limiter" } },
          "It keeps counts in memory.",
        ),
        ...running.slice(0, 3),
      ]),
    );
    const state = await stateHome();
    const base = { session_id: session, transcript_path: transcript, cwd: project };
    const compact = await hook({ ...base, hook_event_name: "PreCompact", trigger: "auto", custom_instructions: "" }, envFor(state));
    expect([compact.code, compact.stdout]).toEqual([0, ""]);
    expect(compact.stderr).toContain("PreCompact: 1 stored, 0 there already; 1 unfinished exchange(s) left for the next capture");
    expect((await sessionMemories(session)).map((m) => m.prompt)).toEqual(["Why is the limiter per instance?"]);

    // A Stop before the answer is in the file sends nothing of that exchange either.
    const early = await hook({ ...base, hook_event_name: "Stop", stop_hook_active: false }, envFor(state));
    expect(early.stderr).toContain("Stop: 0 stored, 0 there already; 1 unfinished exchange(s) left for the next capture");
    await appendFile(transcript, jsonl(running.slice(3)));
    const stop = await hook({ ...base, hook_event_name: "Stop", stop_hook_active: false }, envFor(state));
    expect(stop.stderr).toContain("Stop: 1 stored, 0 there already");
    const end = await hook({ ...base, hook_event_name: "SessionEnd", reason: "prompt_input_exit" }, envFor(state));
    expect(end.stderr).toContain("SessionEnd: 0 stored, 0 there already");
    const stored = await sessionMemories(session);
    expect(stored.map((m) => m.prompt)).toEqual(["Why is the limiter per instance?", "Move the rate limiter to Redis."]);
    expect(stored[1]!.response).toBe("Moved; the limiter now shares counts across instances.");
  });

  it("redacts a secret in a tool call before it leaves: the store holds the call, never the secret", async () => {
    const session = "5e1d0c2a-0000-4000-8000-00000000000c";
    const transcript = join(root, "claude", "-home-dev-shop", `${session}.jsonl`);
    const secret = "sk_live_4eC39HqLyjWDarjtT1zdp7dc9Xw";
    const bearer = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjYXB0dXJlIn0.c2lnbmF0dXJlLXZhbHVl";
    await writeFile(
      transcript,
      jsonl(
        ccExchange(
          session,
          8,
          "Check the Stripe sandbox charge works.",
          {
            name: "Bash",
            input: { command: `STRIPE_API_KEY=${secret} curl -H 'Authorization: Bearer ${bearer}' https://api.stripe.test/charges` },
          },
          "The charge goes through with the restricted key.",
        ),
      ),
    );
    const raw = await readFile(transcript, "utf8");
    expect(raw).toContain(secret);
    expect(raw).toContain(bearer);
    const run = await hook(
      { session_id: session, transcript_path: transcript, cwd: project, hook_event_name: "Stop" },
      envFor(await stateHome()),
    );
    expect(run.stderr).toContain("1 stored");
    const [memory] = await sessionMemories(session);
    expect(memory!.thought).toContain("- Bash (command: STRIPE_API_KEY=[redacted] curl");
    const stored = await exportText();
    expect(stored).toContain("STRIPE_API_KEY=[redacted] curl");
    expect(stored).toContain("Check the Stripe sandbox charge works.");
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain(bearer);
  });

  it("never in the way: unreachable Cairn, a timeout, a refused token, an unreadable transcript print nothing and exit 0; the next capture sends what was missed", async () => {
    const session = "5e1d0c2a-0000-4000-8000-00000000000d";
    const transcript = join(root, "claude", "-home-dev-shop", `${session}.jsonl`);
    await writeFile(
      transcript,
      jsonl([
        ...ccExchange(
          session,
          9,
          "Profile the export endpoint.",
          { name: "Bash", input: { command: "npm run profile" } },
          "Most time goes to JSON encoding.",
        ),
        ...ccExchange(
          session,
          10,
          "Stream the encoding instead.",
          { name: "Bash", input: { command: "npm test" } },
          "Streamed; memory stays flat.",
        ),
      ]),
    );
    const state = await stateHome();
    const input = { session_id: session, transcript_path: transcript, cwd: project, hook_event_name: "Stop" };

    const closed = await hook(input, envFor(state, { CAIRN_URL: "http://127.0.0.1:9" }));
    expect([closed.code, closed.stdout]).toEqual([0, ""]);
    expect(closed.stderr).toContain("Cairn is unreachable: 2 exchange(s) left for the next capture");
    // A server that takes the connection and never answers: the capture gives up at its timeout.
    const silent: Server = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      const slow = await hook(input, envFor(state, { CAIRN_URL: `http://127.0.0.1:${port}` }), ["--timeout-ms", "300"]);
      expect([slow.code, slow.stdout]).toEqual([0, ""]);
      expect(slow.stderr).toContain("no answer from Cairn in time: 2 exchange(s) left for the next capture");
    } finally {
      silent.close();
    }
    const refused = await hook(input, envFor(state, { CAIRN_TOKEN: "cairn_not-a-token-at-all-000000" }));
    expect([refused.code, refused.stdout]).toEqual([0, ""]);
    expect(refused.stderr).toContain("Cairn refused the token (401)");
    const missing = await hook({ ...input, transcript_path: join(root, "nowhere.jsonl") }, envFor(state));
    expect([missing.code, missing.stdout]).toEqual([0, ""]);
    expect(missing.stderr).toContain("cannot read the transcript");
    const garbled = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        [BIN, "--hook", "capture"],
        { cwd: project, env: { PATH: process.env.PATH ?? "", ...envFor(state) } },
        (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
      child.stdin!.end("{not json");
    });
    expect([garbled.code, garbled.stdout, garbled.stderr]).toEqual([0, "", "cairn-load: capture hook: stdin is not the hook's JSON\n"]);
    expect(await sessionMemories(session)).toEqual([]);

    // The same transcript and state with everything in order: both exchanges the failures left are sent now (the
    // prompt and edit hooks' timeout variable, set to 1 ms here, is not the capture's).
    const later = await hook(input, envFor(state, { CAIRN_HOOK_TIMEOUT_MS: "1" }));
    expect([later.code, later.stdout]).toEqual([0, ""]);
    expect(later.stderr).toContain("Stop: 2 stored, 0 there already");
    expect((await sessionMemories(session)).map((m) => m.prompt)).toEqual(["Profile the export endpoint.", "Stream the encoding instead."]);
  });
});

describe("cairn-load --hook capture (Codex)", () => {
  it("keeps a rollout's exchanges once, reading only what was appended, with Codex's Stop input", async () => {
    const id = "0199f3a2-5b1c-7d20-8e4f-00000000000e";
    const dir = join(root, "codex", "sessions", "2026", "11", "30");
    await mkdir(dir, { recursive: true });
    const transcript = join(dir, `rollout-2026-11-30T09-00-00-${id}.jsonl`);
    await writeFile(
      transcript,
      jsonl([
        codexMeta(id),
        codexItem({
          type: "message",
          role: "user",
          content: [{ type: "input_text", text: "<environment_context>\n  <cwd>/home/dev/ledger</cwd>\n</environment_context>" }],
        }),
        ...codexExchange(
          1,
          "Make the ledger export stream rows (LEDGER-88).",
          "rg -n 'rows.push' src/ledger",
          "The export now streams rows from a cursor.",
        ),
      ]),
    );
    const state = await stateHome();
    const input = {
      session_id: id,
      turn_id: "turn-1",
      transcript_path: transcript,
      cwd: project,
      hook_event_name: "Stop",
      model: "gpt-5-codex",
      permission_mode: "default",
      stop_hook_active: false,
      last_assistant_message: "The export now streams rows from a cursor.",
    };
    const first = await hook(input, envFor(state));
    expect([first.code, first.stdout]).toEqual([0, ""]);
    expect(first.stderr).toContain("Stop: 1 stored, 0 there already");
    await appendFile(
      transcript,
      jsonl(codexExchange(2, "Add a test with a million rows.", "npm test -- ledger", "Added; memory stays under 50 MB.")),
    );
    const second = await hook({ ...input, turn_id: "turn-2" }, envFor(state));
    expect(second.stderr).toContain("Stop: 1 stored, 0 there already");
    const again = await hook({ ...input, turn_id: "turn-2" }, envFor(state));
    expect(again.stderr).toContain("Stop: 0 stored, 0 there already");
    // Codex sends a null transcript_path for a session with no rollout file: nothing to capture, nothing printed.
    const none = await hook({ ...input, transcript_path: null }, envFor(state));
    expect([none.code, none.stdout]).toEqual([0, ""]);
    expect(none.stderr).toContain("no transcript_path in the hook's JSON");
    const stored = await sessionMemories(id);
    expect(stored.map((m) => m.prompt)).toEqual(["Make the ledger export stream rows (LEDGER-88).", "Add a test with a million rows."]);
    expect(stored.every((m) => m.tags.includes("captured") && m.tags.includes("codex"))).toBe(true);
    expect(stored[1]!.thought).toContain("Reasoning for codex step 2.");
    expect(stored[1]!.thought).toContain("- shell (command: bash -lc npm test -- ledger)");
    // One small state file per transcript, in the user's state folder; none in the project.
    expect((await readdir(join(state, "cairn", "capture"))).filter((f) => f.endsWith(".json")).length).toBe(1);
    expect(execFileSync("git", ["status", "--porcelain"], { cwd: project, encoding: "utf8" })).not.toContain("cairn");
  });
});
