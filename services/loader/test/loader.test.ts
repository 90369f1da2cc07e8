import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { main } from "../src/cli.js";
import { findPointers } from "../src/lint.js";
import { http, makeToken, startCairn, turn, uniqueWorkspace } from "../../memory-core/test/support/harness.js";

async function fixture(options: { index?: string; identity?: string } = {}) {
  const root = await mkdtemp(join(tmpdir(), "cairn-loader-"));
  await mkdir(join(root, "agents", "backend"), { recursive: true });
  if (options.index !== null) {
    await writeFile(
      join(root, "agents", "backend", "MEMORY.md"),
      options.index ?? "- Lesson: retry payments only with an idempotency key.\n",
    );
  }
  await writeFile(join(root, "agents", "backend", "identity.md"), options.identity ?? "You are backend, the payments engineer.\n");
  return root;
}

async function run(cwd: string, ...args: string[]) {
  return runWith({}, cwd, ...args);
}

async function runWith(env: Record<string, string>, cwd: string, ...args: string[]) {
  let stdout = "";
  let stderr = "";
  const io = { cwd, env, stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) } };
  const code = await main(args, io);
  return { code, stdout, stderr };
}

describe("cairn-load into each harness", () => {
  it("codex: a managed block in AGENTS.md, user text kept, a second run changes no byte", async () => {
    const root = await fixture();
    await writeFile(join(root, "AGENTS.md"), "# Rules\nUse pnpm.\n");
    expect((await run(root, "--agent", "backend", "--harness", "codex")).code).toBe(0);
    const first = await readFile(join(root, "AGENTS.md"), "utf8");
    expect(first.startsWith("# Rules\nUse pnpm.\n")).toBe(true);
    expect(first).toContain("retry payments only with an idempotency key");
    expect(first).toContain("You are backend");
    const again = await run(root, "--agent", "backend", "--harness", "codex");
    expect(again.stderr).toContain("unchanged");
    expect(await readFile(join(root, "AGENTS.md"), "utf8")).toBe(first);
  });

  it("an edited index replaces the old block in place and keeps text after it", async () => {
    const root = await fixture();
    await run(root, "--agent", "backend", "--harness", "claude-code");
    const path = join(root, "CLAUDE.md");
    await writeFile(path, `${await readFile(path, "utf8")}\n# Added by a person later\nKeep me.\n`);
    await writeFile(join(root, "agents", "backend", "MEMORY.md"), "- Lesson: the ledger is append-only.\n");
    expect((await run(root, "--agent", "backend", "--harness", "claude-code")).code).toBe(0);
    const text = await readFile(path, "utf8");
    expect(text).toContain("the ledger is append-only");
    expect(text).not.toContain("retry payments only");
    expect(text.endsWith("# Added by a person later\nKeep me.\n")).toBe(true);
    expect(text.match(/cairn:begin/g)).toHaveLength(1);
  });

  it("opencode: the block in its own file, listed once under instructions, other settings kept", async () => {
    const root = await fixture();
    await writeFile(join(root, "opencode.json"), JSON.stringify({ model: "local/qwen", instructions: ["docs/style.md"] }));
    await run(root, "--agent", "backend", "--harness", "opencode");
    await run(root, "--agent", "backend", "--harness", "opencode");
    const config = JSON.parse(await readFile(join(root, "opencode.json"), "utf8"));
    expect(config).toEqual({ model: "local/qwen", instructions: ["docs/style.md", ".opencode/cairn/backend.md"] });
    expect(await readFile(join(root, ".opencode", "cairn", "backend.md"), "utf8")).toContain("idempotency key");
  });

  it("generic prints the block; hook mode prints what SessionStart hooks expect and writes nothing", async () => {
    const root = await fixture();
    const generic = await run(root, "--agent", "backend", "--harness", "generic");
    expect(generic.stdout).toContain("retry payments only with an idempotency key");
    const hook = await run(root, "--agent", "backend", "--harness", "claude-code", "--hook");
    const output = JSON.parse(hook.stdout);
    expect(output.hookSpecificOutput.hookEventName).toBe("SessionStart");
    expect(output.hookSpecificOutput.additionalContext).toBe(generic.stdout);
    await expect(readFile(join(root, "CLAUDE.md"), "utf8")).rejects.toThrow();
  });
});

describe("the project: relative paths mean the same folder from anywhere in it", () => {
  async function repository() {
    const root = await fixture();
    await mkdir(join(root, ".git"));
    const deep = join(root, "src", "payments");
    await mkdir(deep, { recursive: true });
    return { root, deep };
  }

  it("from a subfolder of a git repository, --index-dir and --target resolve against the repository", async () => {
    const { root, deep } = await repository();
    const result = await run(deep, "--agent", "backend", "--harness", "codex");
    expect([result.code, result.stderr]).toEqual([0, expect.stringContaining(join(root, "AGENTS.md"))]);
    expect(await readFile(join(root, "AGENTS.md"), "utf8")).toContain("idempotency key");
    await expect(readFile(join(deep, "AGENTS.md"), "utf8")).rejects.toThrow();
  });

  it("a hook finds the project from $CLAUDE_PROJECT_DIR, from its JSON's cwd, or from --project, whatever its own working directory", async () => {
    const { root, deep } = await repository();
    const elsewhere = await mkdtemp(join(tmpdir(), "cairn-loader-elsewhere-"));
    const hookIn = (cwd: string, env: Record<string, string>, stdin: string, ...extra: string[]) => {
      let stdout = "";
      let stderr = "";
      const io = {
        cwd,
        env,
        stdin: () => Promise.resolve(stdin),
        stdout: { write: (t: string) => (stdout += t) },
        stderr: { write: (t: string) => (stderr += t) },
      };
      return main(["--agent", "backend", "--harness", "claude-code", "--hook", ...extra], io).then((code) => ({ code, stdout, stderr }));
    };
    const fromEnv = await hookIn(elsewhere, { CLAUDE_PROJECT_DIR: root }, "");
    expect(fromEnv.stdout).toContain("idempotency key");
    const fromJson = await hookIn(elsewhere, {}, JSON.stringify({ session_id: "s", cwd: deep, hook_event_name: "SessionStart" }));
    expect(fromJson.stdout).toContain("idempotency key");
    const fromFlag = await hookIn(elsewhere, {}, "", "--project", root);
    expect(fromFlag.stdout).toContain("idempotency key");
    // Nothing names the project: the working directory is used, and it holds no index.
    const nowhere = await hookIn(elsewhere, {}, "");
    expect([nowhere.code, nowhere.stdout]).toEqual([0, ""]);
    expect(nowhere.stderr).toContain("cannot be read");
  });

  it("a hook exits 0 with nothing on stdout whatever goes wrong (unknown agent, missing index, bad arguments); the same run without --hook fails", async () => {
    const { root } = await repository();
    for (const args of [
      ["--agent", "frontend", "--harness", "claude-code"],
      ["--agent", "backend", "--harness", "vim"],
      ["--agent", "backend", "--harness", "claude-code", "--no-such-flag"],
    ]) {
      const plain = await run(root, ...args);
      expect(plain.code).not.toBe(0);
      const hooked = await run(root, ...args, "--hook");
      expect([hooked.code, hooked.stdout]).toEqual([0, ""]);
      expect(hooked.stderr).toBe(plain.stderr);
    }
  });
});

describe("budget", () => {
  it("warns over budget and still writes everything; --strict refuses and writes nothing", async () => {
    const long = Array.from({ length: 300 }, (_, i) => `- lesson ${i}: something worth knowing`).join("\n");
    const root = await fixture({ index: long });
    const warned = await run(root, "--agent", "backend", "--harness", "claude-code");
    expect(warned.code).toBe(0);
    expect(warned.stderr).toMatch(/WARNING: .* over the claude-code budget .* 200 lines.*misses the last \d+ lines/);
    expect(await readFile(join(root, "CLAUDE.md"), "utf8")).toContain("lesson 299");
    const strictRoot = await fixture({ index: long });
    const strict = await run(strictRoot, "--agent", "backend", "--harness", "claude-code", "--strict");
    expect(strict.code).toBe(1);
    await expect(readFile(join(strictRoot, "CLAUDE.md"), "utf8")).rejects.toThrow();
    const within = await run(await fixture(), "--agent", "backend", "--harness", "claude-code", "--strict");
    expect(within.code).toBe(0);
    expect(within.stderr).not.toContain("WARNING");
  });
});

describe("errors: a line naming the problem, a non-zero exit, nothing written", () => {
  it("unknown agent, missing index, unknown harness, bad budget, unwritable target, broken block", async () => {
    const root = await fixture();
    const unknownAgent = await run(root, "--agent", "frontend", "--harness", "codex");
    expect([unknownAgent.code, unknownAgent.stderr]).toEqual([1, expect.stringContaining('unknown agent "frontend"')]);
    const noIndexRoot = await fixture({ index: null as unknown as string });
    const noIndex = await run(noIndexRoot, "--agent", "backend", "--harness", "codex");
    expect([noIndex.code, noIndex.stderr]).toEqual([1, expect.stringContaining("has no index")]);
    const badHarness = await run(root, "--agent", "backend", "--harness", "vim");
    expect([badHarness.code, badHarness.stderr]).toEqual([2, expect.stringContaining('unknown harness "vim"')]);
    const badBudget = await run(root, "--agent", "backend", "--harness", "codex", "--budget-bytes", "lots");
    expect(badBudget.code).toBe(2);
    const nowhere = await run(root, "--agent", "backend", "--harness", "codex", "--target", join(root, "missing"));
    expect([nowhere.code, nowhere.stderr]).toEqual([1, expect.stringContaining("cannot be written")]);
    await writeFile(
      join(root, "AGENTS.md"),
      "<!-- cairn:begin agent=backend (managed by cairn-load; edit the index, not this block) -->\nhalf\n",
    );
    const broken = await run(root, "--agent", "backend", "--harness", "codex");
    expect([broken.code, broken.stderr]).toEqual([1, expect.stringContaining("without its end marker")]);
    expect(await readFile(join(root, "AGENTS.md"), "utf8")).toContain("half\n");
    await writeFile(join(root, "opencode.json"), "{ not json");
    const badConfig = await run(root, "--agent", "backend", "--harness", "opencode");
    expect(badConfig.code).toBe(1);
    await expect(readFile(join(root, ".opencode", "cairn", "backend.md"), "utf8")).rejects.toThrow();
    // The same root works for a harness whose file is sound.
    expect((await run(root, "--agent", "backend", "--harness", "claude-code")).code).toBe(0);
  });

  it("the installed bin runs end to end", async () => {
    const root = await fixture();
    const bin = fileURLToPath(new URL("../bin/cairn-load.mjs", import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, [bin, "--agent", "backend", "--harness", "generic"], { cwd: root });
    expect(stdout).toContain("# Cairn memory of backend");
  });

  it("the README's loader command works on a fresh clone: the sample index ships, in the documented format", async () => {
    const checkout = fileURLToPath(new URL("../../../", import.meta.url));
    const npm = (...args: string[]) => promisify(execFile)("npm", ["run", "-s", "load", "--", ...args], { cwd: checkout });
    const { stdout } = await npm("--agent", "example", "--harness", "generic");
    expect(stdout).toContain("# Cairn memory of example");
    expect(stdout).toContain("Retry payment calls only with an idempotency key");
    // Its pointers are the shapes the lint checks: memory ids and sessions.
    const pointers = findPointers(await readFile(join(checkout, "agents", "example", "MEMORY.md"), "utf8"));
    expect(pointers.memories.length).toBeGreaterThan(0);
    expect(pointers.sessions).toEqual(["2026-11-29-auth"]);
    // An agent without an index is refused by the same command, naming the agents it knows.
    const missing = await npm("--agent", "nobody", "--harness", "generic").then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(missing?.code).not.toBe(0);
    expect(missing?.stderr).toContain('unknown agent "nobody"');
    expect(missing?.stderr).toContain("(known: example)");
  });
});

describe("lint against a running memory-core", () => {
  it("flags pointers to missing, superseded or outdated memories and missing sessions, and not live ones", async () => {
    const dev = makeToken(uniqueWorkspace("lint"), "backend");
    const cairn = await startCairn([dev]);
    try {
      const live = await http(cairn.url, "POST", "/v1/memories", { token: dev.token, body: turn("lint-session", 1) });
      expect(live.status).toBe(201);
      const old = await http(cairn.url, "POST", "/v1/memories", { token: dev.token, body: turn("lint-session", 2) });
      await http(cairn.url, "POST", `/v1/memories/${old.body.id}/supersede`, {
        token: dev.token,
        body: { by: live.body.id, reason: "reversed" },
      });
      const stale = await http(cairn.url, "POST", "/v1/memories", { token: dev.token, body: turn("lint-session", 3) });
      await http(cairn.url, "POST", `/v1/memories/${stale.body.id}/outdated`, {
        token: dev.token,
        body: { reason: "benchmark predates the refactor" },
      });
      const gone = `t_${"a".repeat(32)}`;
      const index = `- Redis streams for refresh: ${live.body.id}\n- Old lesson: ${gone}\n- Reversed: ${old.body.id}\n- Fast path: ${stale.body.id}\n- See session:lint-session and session:never-happened.\n`;
      const root = await fixture({ index });
      const env = { CAIRN_URL: cairn.url.origin, CAIRN_TOKEN: dev.token };
      const linted = await runWith(env, root, "--agent", "backend", "--harness", "codex");
      expect(linted.code).toBe(0);
      expect(linted.stderr).toContain(`lint: ${gone} is missing`);
      expect(linted.stderr).toContain("lint: session:never-happened is missing");
      expect(linted.stderr).toContain(`lint: ${old.body.id} is superseded: point to ${live.body.id} instead (reversed)`);
      expect(linted.stderr).toContain(
        `lint: ${stale.body.id} is outdated: re-check the lesson against the live repository, then rewrite or remove it (benchmark predates the refactor)`,
      );
      expect(linted.stderr).not.toContain(`lint: ${live.body.id}`);
      expect(linted.stderr).not.toContain("lint: session:lint-session ");
      const strict = await runWith(env, await fixture({ index }), "--agent", "backend", "--harness", "codex", "--strict");
      expect(strict.code).toBe(1);
      const clean = await runWith(
        env,
        await fixture({ index: `- ${live.body.id}\n` }),
        "--agent",
        "backend",
        "--harness",
        "codex",
        "--strict",
      );
      expect([clean.code, clean.stderr]).toEqual([0, expect.not.stringContaining("lint:")]);
    } finally {
      await cairn.close();
    }
  });
});
