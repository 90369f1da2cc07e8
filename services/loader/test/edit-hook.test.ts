import { execFile } from "node:child_process";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { createServer, type AddressInfo, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HOOK_OUTPUT_BYTES } from "../src/prompt-hook.js";
import { http, makeToken, startCairn, uniqueWorkspace, type TestCairn } from "../../memory-core/test/support/harness.js";

/**
 * The edit hook as Claude Code and Codex run it: a child process in a folder of the project, the harness's
 * PreToolUse JSON on stdin, against a real memory-core and a real git repository made here, whose commits
 * carry set times so that "after the memory" never depends on the clock.
 */

const BIN = fileURLToPath(new URL("../bin/cairn-load.mjs", import.meta.url));
const SYSTEM_PATH = process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin";
const workspace = uniqueWorkspace("edit-hook");
const agent = makeToken(workspace, "backend-dev");
let cairn: TestCairn;
let env: Record<string, string>;

function run(file: string, args: string[], options: { cwd: string; env?: Record<string, string>; stdin?: string }) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(file, args, { cwd: options.cwd, env: { PATH: SYSTEM_PATH, ...options.env } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin!.on("error", () => {});
    child.stdin!.end(options.stdin ?? "");
  });
}

/** The hook as the harness starts it: `cairn-load --hook edit` with the JSON on stdin, in `cwd`. */
const hook = (stdin: string, cwd: string, extraEnv: Record<string, string> = env, ...args: string[]) =>
  run(process.execPath, [BIN, "--hook", "edit", ...args], { cwd, env: extraEnv, stdin });

/** Claude Code's PreToolUse input for an edit of `file` (absolute, as Claude Code sends it). */
const claudeEdit = (file: string, cwd: string, tool = "Edit") =>
  JSON.stringify({
    session_id: "s-1",
    transcript_path: join(cwd, "t.jsonl"),
    cwd,
    permission_mode: "default",
    hook_event_name: "PreToolUse",
    tool_name: tool,
    tool_input: tool === "Write" ? { file_path: file, content: "x\n" } : { file_path: file, old_string: "a", new_string: "b" },
    tool_use_id: "toolu_01",
  });

/** A real repository: commits made at the given time (seconds since the epoch), by a fixed author. */
class Repo {
  constructor(readonly root: string) {}
  static async create(): Promise<Repo> {
    const root = await mkdtemp(join(tmpdir(), "cairn-edit-hook-"));
    const repo = new Repo(root);
    await repo.git("init", "-q", "-b", "main");
    return repo;
  }
  async git(...args: string[]): Promise<string> {
    const at = `${this.clock} +0000`;
    const result = await run("git", args, {
      cwd: this.root,
      env: {
        GIT_AUTHOR_NAME: "dev",
        GIT_AUTHOR_EMAIL: "dev@example.test",
        GIT_COMMITTER_NAME: "dev",
        GIT_COMMITTER_EMAIL: "dev@example.test",
        GIT_AUTHOR_DATE: at,
        GIT_COMMITTER_DATE: at,
        GIT_CONFIG_NOSYSTEM: "1",
        HOME: this.root,
      },
    });
    if (result.code !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr}`);
    return result.stdout.trim();
  }
  /** The time the next commit carries. */
  clock = 1_700_000_000;
  async commit(files: Record<string, string>, message: string, at: number): Promise<string> {
    for (const [path, text] of Object.entries(files)) {
      await mkdir(join(this.root, path, ".."), { recursive: true });
      await writeFile(join(this.root, path), text);
    }
    this.clock = at;
    await this.git("add", "-A");
    await this.git("commit", "-q", "-m", message);
    return this.git("rev-parse", "HEAD");
  }
  short = (commit: string) => this.git("rev-parse", "--short", commit);
}

async function remember(body: Record<string, unknown>): Promise<{ id: string; recorded_at: string }> {
  const res = await http(cairn.url, "POST", "/v1/memories", { token: agent.token, body: { session_id: "edit-hook", ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const read = await http(cairn.url, "GET", `/v1/memories/${res.body.id}`, { token: agent.token });
  return { id: res.body.id, recorded_at: read.body.recorded_at };
}

const seconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);
const context = (stdout: string) =>
  (JSON.parse(stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } }).hookSpecificOutput;
const pointerLines = (stdout: string) => context(stdout).additionalContext.split("\n").slice(1);

let repo: Repo;
let base: string;
beforeAll(async () => {
  cairn = await startCairn([agent]);
  env = { CAIRN_URL: cairn.url.origin, CAIRN_TOKEN: agent.token };
  repo = await Repo.create();
  base = await repo.commit(
    {
      "src/auth/refresh.ts": "export const refresh = 1;\n",
      "src/auth/session.ts": "export const session = 1;\n",
      "src/billing/ledger.ts": "export const ledger = 1;\n",
      "docs/notes.md": "notes\n",
    },
    "initial",
    1_700_000_000,
  );
});
afterAll(() => cairn?.close());

describe("cairn-load --hook edit", () => {
  it("points at the decision citing the file being edited, and says nothing for a file nothing cites", async () => {
    const decision = await remember({
      kind: "decision",
      prompt: "Token refresh: where does it run?",
      thought: "An in-memory queue loses refreshes on restart.",
      response: "Token refresh goes through the Redis stream, never an in-memory queue.",
      code: { commit: base, paths: [{ path: "src/auth/refresh.ts", lines: "1-3" }] },
    });
    const sub = join(repo.root, "src");
    const cited = await hook(claudeEdit(join(repo.root, "src/auth/refresh.ts"), sub), sub);
    expect(cited.code).toBe(0);
    expect(Buffer.byteLength(cited.stdout)).toBeLessThanOrEqual(HOOK_OUTPUT_BYTES);
    expect(context(cited.stdout).hookEventName).toBe("PreToolUse");
    const lines = pointerLines(cited.stdout);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(decision.id);
    expect(lines[0]).toContain("backend-dev, decision");
    expect(lines[0]).toContain(decision.recorded_at.slice(0, 10));
    // No commit touched the file after the one the decision names: nothing moved.
    expect(lines[0]).not.toContain("moved");

    // The same store, another file of the same repository: nothing cites it, so nothing is printed.
    const uncited = await hook(claudeEdit(join(repo.root, "src/billing/ledger.ts"), sub, "Write"), sub);
    expect([uncited.code, uncited.stdout]).toEqual([0, ""]);
    expect(uncited.stderr).toContain("nothing live cites src/billing/ledger.ts");
  });

  it("says the code moved since the memory's commit, with the count and the newest commit's short hash", async () => {
    const decision = await remember({
      kind: "lesson",
      prompt: "Session expiry",
      thought: "Sliding expiry kept idle sessions alive for weeks.",
      response: "Sessions expire 12 hours after login, sliding or not.",
      code: { branch: "main", commit: base, paths: [{ path: "src/auth/session.ts" }] },
    });
    const start = seconds(decision.recorded_at);
    await repo.commit({ "src/auth/session.ts": "export const session = 2;\n" }, "session: two", start + 10);
    // A commit that touches another file does not count; this one is older than every memory here.
    await repo.commit({ "src/billing/ledger.ts": "export const ledger = 2;\n" }, "ledger: two", start - 100);
    const newest = await repo.commit({ "src/auth/session.ts": "export const session = 3;\n" }, "session: three", start + 30);
    const out = await hook(claudeEdit(join(repo.root, "src/auth/session.ts"), repo.root), repo.root);
    const line = pointerLines(out.stdout).find((l) => l.includes(decision.id))!;
    expect(line).toContain(`code moved since: 2 commits, newest ${await repo.short(newest)}`);

    // Without a commit, the memory's time decides: the commit before it does not count, the one after it does.
    const byTime = await remember({
      kind: "attempt",
      prompt: "Ledger rounding",
      thought: "Tried rounding each line; totals drifted by a cent.",
      response: "Dropped: round the total only.",
      refs: ["src/billing/ledger.ts"],
    });
    const ledger = claudeEdit(join(repo.root, "src/billing/ledger.ts"), repo.root);
    const before = pointerLines((await hook(ledger, repo.root)).stdout).find((l) => l.includes(byTime.id))!;
    expect(before).toContain("backend-dev, attempt");
    expect(before).not.toContain("moved");
    const later = await repo.commit(
      { "src/billing/ledger.ts": "export const ledger = 3;\n" },
      "ledger: three",
      seconds(byTime.recorded_at) + 5,
    );
    const after = pointerLines((await hook(ledger, repo.root)).stdout).find((l) => l.includes(byTime.id))!;
    expect(after).toContain(`code moved since: 1 commit, newest ${await repo.short(later)}`);
  });

  it("points at decisions, failed attempts and lessons only, citing the file or its folder; a folder citation counts", async () => {
    const note = await remember({
      kind: "note",
      prompt: "Notes layout",
      thought: "Just a note.",
      response: "The notes file lists open questions.",
      code: { paths: [{ path: "docs/notes.md" }] },
    });
    const failed = await remember({
      prompt: "Notes generator",
      thought: "Generated the notes from the issues.",
      response: "The generator's check failed on an empty issue list.",
      code: { paths: [{ path: "docs/notes.md" }] },
      checks: [{ name: "npm test", status: "failed" }],
    });
    const folder = await remember({
      kind: "decision",
      prompt: "Docs folder",
      thought: "Two places for docs confused everyone.",
      response: "Every document lives under docs/, one topic a file.",
      code: { paths: [{ path: "docs/" }] },
    });
    const out = await hook(claudeEdit(join(repo.root, "docs/notes.md"), repo.root, "MultiEdit"), repo.root);
    const text = context(out.stdout).additionalContext;
    expect(text).toContain(failed.id);
    expect(text).toContain("checks failed");
    expect(text).toContain(folder.id);
    expect(text).not.toContain(note.id);
  });

  it("says which pointers are imported history, not yet a person's verdict, and not the others", async () => {
    const imported = await remember({
      kind: "lesson",
      source: "import",
      prompt: "fix: history page double-counts merges",
      thought: "Merge commits were counted once per parent.",
      response: "Count a merge once.",
      code: { paths: [{ path: "docs/history.md" }] },
    });
    const own = await remember({
      kind: "lesson",
      prompt: "History page",
      thought: "The page reads the log newest first.",
      response: "Keep it newest first.",
      code: { paths: [{ path: "docs/history.md" }] },
    });
    const lines = pointerLines((await hook(claudeEdit(join(repo.root, "docs/history.md"), repo.root), repo.root)).stdout);
    expect(lines.find((l) => l.includes(imported.id))).toContain(", lesson, imported");
    expect(lines.find((l) => l.includes(own.id))).not.toContain("imported");
    expect(lines.find((l) => l.includes(own.id))).toContain(", lesson");
  });

  it("flags a memory from a branch not merged into the default branch, and no longer once it is merged", async () => {
    await repo.git("checkout", "-q", "-b", "feature/cache");
    const onBranch = await repo.commit(
      { "src/auth/refresh.ts": "export const refresh = 2; // cached\n" },
      "refresh: cache",
      repo.clock + 100,
    );
    const memory = await remember({
      kind: "decision",
      prompt: "Refresh cache",
      thought: "Refresh hit Redis on every request.",
      response: "Cache refreshed tokens for 30 s in process.",
      code: { branch: "feature/cache", commit: onBranch, paths: [{ path: "src/auth/refresh.ts" }] },
    });
    await repo.git("checkout", "-q", "main");
    const edit = claudeEdit(join(repo.root, "src/auth/refresh.ts"), repo.root);
    const unmerged = pointerLines((await hook(edit, repo.root)).stdout).find((l) => l.includes(memory.id))!;
    expect(unmerged).toContain("on branch feature/cache, not merged");

    repo.clock += 100;
    await repo.git("merge", "-q", "--no-ff", "-m", "merge feature/cache", "feature/cache");
    const merged = pointerLines((await hook(edit, repo.root)).stdout).find((l) => l.includes(memory.id))!;
    expect(merged).toContain(memory.id);
    expect(merged).not.toContain("on branch");
  });

  it("answers Codex's apply_patch, whose patch names files relative to the session's cwd", async () => {
    await remember({
      kind: "decision",
      prompt: "Refresh retries",
      thought: "Unbounded retries hammered the identity provider.",
      response: "Retry a refresh three times, then dead-letter it.",
      code: { paths: [{ path: "src/auth/refresh.ts" }] },
    });
    const patch =
      "*** Begin Patch\n*** Update File: auth/refresh.ts\n@@\n-export const refresh = 2;\n+export const refresh = 3;\n*** End Patch\n";
    const sub = join(repo.root, "src");
    const input = JSON.stringify({
      session_id: "s",
      turn_id: "t",
      transcript_path: null,
      cwd: sub,
      hook_event_name: "PreToolUse",
      model: "o3",
      permission_mode: "default",
      tool_name: "apply_patch",
      tool_input: { command: patch },
      tool_use_id: "call-1",
    });
    const out = await hook(input, sub);
    expect(context(out.stdout).hookEventName).toBe("PreToolUse");
    expect(context(out.stdout).additionalContext).toContain("citing src/auth/refresh.ts");
    // A patch touching several files asks about each: an uncited one added, the cited one moved elsewhere.
    const several =
      "*** Begin Patch\n*** Add File: auth/new.ts\n+x\n*** Update File: auth/refresh.ts\n*** Move to: auth/renewal.ts\n@@\n-a\n+b\n*** End Patch\n";
    const both = await hook(JSON.stringify({ ...JSON.parse(input), tool_input: { command: several } }), sub);
    expect(context(both.stdout).additionalContext).toContain("citing src/auth/new.ts and 2 more");
    expect(context(both.stdout).additionalContext).toMatch(/t_[0-9a-f]{32} \(/);
    // A Bash call is no edit: nothing.
    const bash = await hook(JSON.stringify({ ...JSON.parse(input), tool_name: "Bash", tool_input: { command: "ls" } }), sub);
    expect([bash.code, bash.stdout]).toEqual([0, ""]);
  });

  it("stays within 600 bytes and three pointers however many memories cite the file", async () => {
    for (let n = 0; n < 8; n++) {
      await remember({
        kind: "lesson",
        prompt: `Invoice rule ${n}`,
        thought: "Long reasoning. ".repeat(40),
        response: `Invoice rule ${n}: ${"every invoice line carries its tax code and its rounding mode, written out in full; ".repeat(6)}`,
        code: { paths: [{ path: "src/billing/invoice.ts" }] },
      });
    }
    const out = await hook(claudeEdit(join(repo.root, "src/billing/invoice.ts"), repo.root, "Write"), repo.root);
    expect(Buffer.byteLength(out.stdout)).toBeLessThanOrEqual(HOOK_OUTPUT_BYTES);
    const lines = pointerLines(out.stdout);
    // Three pointers, each point shortened to fit, rather than two whole ones.
    expect(lines).toHaveLength(3);
    // The newest first: the last three written.
    expect(lines.map((l) => /Invoice rule (\d)/.exec(l)![1])).toEqual(["7", "6", "5"]);
    for (const line of lines)
      expect(line).toMatch(/^- t_[0-9a-f]{32} \(\d{4}-\d{2}-\d{2}, backend-dev, lesson\): Invoice rule \d .{12,}…$/);
  });

  it("prints nothing and exits 0 when Cairn is unreachable, refuses the token, is too slow, or the input or the folder is not the hook's", async () => {
    await remember({
      kind: "lesson",
      prompt: "Refresh errors",
      thought: "A swallowed refresh error logged users out silently.",
      response: "Surface every refresh error to the caller.",
      code: { paths: [{ path: "src/auth/refresh.ts" }] },
    });
    const edit = claudeEdit(join(repo.root, "src/auth/refresh.ts"), repo.root);
    const closed = await hook(edit, repo.root, { CAIRN_URL: "http://127.0.0.1:9", CAIRN_TOKEN: agent.token });
    expect([closed.code, closed.stdout]).toEqual([0, ""]);
    expect(closed.stderr).toContain("unreachable");

    const refused = await hook(edit, repo.root, { ...env, CAIRN_TOKEN: "cairn_not-a-token" });
    expect([refused.code, refused.stdout]).toEqual([0, ""]);
    expect(refused.stderr).toContain("401");

    const silent: Server = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      const slow = await hook(edit, repo.root, { CAIRN_URL: `http://127.0.0.1:${port}`, CAIRN_TOKEN: agent.token }, "--timeout-ms", "300");
      expect([slow.code, slow.stdout]).toEqual([0, ""]);
      expect(slow.stderr).toContain("within 300 ms");
    } finally {
      silent.close();
    }

    for (const garbage of ["{not json", "", "[]", JSON.stringify({ tool_name: "Edit", tool_input: {} })]) {
      const garbled = await hook(garbage, repo.root);
      expect([garbled.code, garbled.stdout]).toEqual([0, ""]);
    }
    const outsideRoot = await mkdtemp(join(tmpdir(), "cairn-edit-hook-plain-"));
    const notGit = await hook(claudeEdit(join(outsideRoot, "a.ts"), outsideRoot), outsideRoot);
    expect([notGit.code, notGit.stdout]).toEqual([0, ""]);
    expect(notGit.stderr).toContain("not in a git repository");
    const unset = await hook(edit, repo.root, {});
    expect([unset.code, unset.stdout]).toEqual([0, ""]);
    expect(unset.stderr).toContain("CAIRN_URL");
    // The same edit with everything in order speaks: the silences above are the faults', not the file's.
    expect((await hook(edit, repo.root)).stdout).toContain("PreToolUse");
  });
});

describe("the index lint: whether the code a pointer's memory cites moved since", () => {
  it("flags a pointer whose cited file changed after the memory's commit, not one whose file did not, and never fails --strict for it", async () => {
    const own = await Repo.create();
    const first = await own.commit({ "src/queue/consumer.ts": "v1\n", "src/queue/producer.ts": "v1\n" }, "queue", 1_700_000_000);
    const moved = await remember({
      kind: "lesson",
      prompt: "Consumer acks",
      thought: "Acking before processing lost messages on a crash.",
      response: "Ack only after the handler returns.",
      code: { commit: first, paths: [{ path: "src/queue/consumer.ts" }] },
    });
    const still = await remember({
      kind: "lesson",
      prompt: "Producer batching",
      thought: "Single sends saturated the broker.",
      response: "Batch sends by 100.",
      refs: ["QUEUE-9", "src/queue/producer.ts"],
    });
    const newest = await own.commit({ "src/queue/consumer.ts": "v2\n" }, "consumer: ack later", seconds(still.recorded_at) + 60);
    await mkdir(join(own.root, "agents", "backend"), { recursive: true });
    await writeFile(
      join(own.root, "agents", "backend", "MEMORY.md"),
      `- Ack after the handler (${moved.id}).\n- Batch sends (${still.id}).\n`,
    );
    const lint = (...extra: string[]) =>
      run(process.execPath, [BIN, "--agent", "backend", "--harness", "generic", ...extra], { cwd: join(own.root, "src"), env });
    const linted = await lint();
    expect(linted.code).toBe(0);
    expect(linted.stderr).toContain(
      `lint: ${moved.id} is moved: the code it cites moved since: 1 commit touched src/queue/consumer.ts, newest ${await own.short(newest)}`,
    );
    expect(linted.stderr).not.toContain(`lint: ${still.id}`);
    const strict = await lint("--strict");
    expect(strict.code).toBe(0);
    expect(strict.stdout).toContain("Ack after the handler");
  });
});
