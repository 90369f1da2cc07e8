import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { parse as parseJsonc } from "jsonc-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codingTurn } from "../../memory-core/test/fixtures/coding-turns.js";
import { http, makeToken, startCairn, uniqueWorkspace, type TestCairn } from "../../memory-core/test/support/harness.js";
import { cairnCli } from "./support/run-cli.js";

/**
 * `cairn init` as a new user meets it: a fresh git repository outside the Cairn checkout, the real `cairn` bin,
 * and every generated hook run as its harness runs it — a shell child process in a subfolder of the project,
 * the harness's JSON on stdin, `cairn-load` found on PATH through a link to the clone's bin (what `npm link`
 * makes). The MCP entries are read back and used by the SDK's MCP client against a real memory-core.
 */

const LOADER_BIN = fileURLToPath(new URL("../../loader/bin/cairn-load.mjs", import.meta.url));
const workspace = uniqueWorkspace("init");
const agent = makeToken(workspace, "backend");
let cairn: TestCairn;
/** A folder holding only `cairn-load`, linked to the clone's bin. */
let linkedBin: string;
const SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin";
const LESSON = "- Retry payment calls only with an idempotency key (t_0123456789abcdef0123456789abcdef).";
const RELATED_PROMPT = "AUTH-412: the token refresh Redis stream consumer group needs a dead-letter queue";

beforeAll(async () => {
  cairn = await startCairn([agent]);
  for (let n = 0; n < 10; n++) {
    expect((await http(cairn.url, "POST", "/v1/memories", { token: agent.token, body: codingTurn(n) })).status).toBe(201);
  }
  linkedBin = await mkdtemp(join(tmpdir(), "cairn-bin-"));
  await symlink(LOADER_BIN, join(linkedBin, "cairn-load"));
});
afterAll(() => cairn?.close());

function run(file: string, args: string[], options: { cwd: string; env: Record<string, string>; stdin?: string }) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(file, args, { cwd: options.cwd, env: options.env }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    // A child that exits without reading its input (git, a shell that finds no command) closes the pipe first.
    child.stdin!.on("error", () => {});
    child.stdin!.end(options.stdin ?? "");
  });
}

/** A fresh repository with a subfolder to start hooks in, as a harness does when its session has moved there. */
async function freshProject(): Promise<{ root: string; sub: string }> {
  const root = await mkdtemp(join(tmpdir(), "cairn-init-project-"));
  await run("git", ["init", "-q", "."], { cwd: root, env: { PATH: SYSTEM_PATH } });
  const sub = join(root, "src", "payments");
  await mkdir(sub, { recursive: true });
  return { root, sub };
}

const init = (root: string, harness: string, ...extra: string[]) =>
  cairnCli(["init", "--project", root, "--agent", "backend", "--harness", harness, "--url", cairn.url.origin, ...extra], {
    // The token is in init's environment, as it is in a person's shell: it must still land in no file.
    CAIRN_TOKEN: agent.token,
  });

/** Every file under the project but .git, with its bytes. */
async function snapshot(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = relative(root, join(entry.parentPath, entry.name));
    if (path.split("/")[0] === ".git") continue;
    out[path] = await readFile(join(root, path), "utf8");
  }
  return out;
}

/** A hook command as Claude Code and Codex run it: `sh -c`, the project's subfolder as cwd, the JSON on stdin. */
const runHook = (command: string, stdin: unknown, cwd: string, env: Record<string, string>) =>
  run("/bin/sh", ["-c", command], { cwd, env: { PATH: `${linkedBin}:${SYSTEM_PATH}`, ...env }, stdin: JSON.stringify(stdin) });

type HookGroups = Record<string, Array<{ matcher?: string; hooks: Array<{ type: string; command: string; timeout?: number }> }>>;
const cairnCommand = (hooks: HookGroups, event: string) =>
  hooks[event]!.flatMap((g) => g.hooks).find((h) => h.command.includes("cairn-load"))!.command;

/** Claude Code's `${VAR}` and `${VAR:-default}` expansion in .mcp.json. */
const expandClaude = (value: string, env: Record<string, string>) =>
  value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_, name: string, fallback?: string) => env[name] ?? fallback ?? "");

async function listToolsWith(url: string, headers: Record<string, string>): Promise<string[]> {
  const client = new Client({ name: "cairn-init-test", version: "0.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  try {
    return (await client.listTools()).tools.map((t) => t.name);
  } finally {
    await client.close();
  }
}

function expectNoToken(files: Record<string, string>) {
  for (const [path, text] of Object.entries(files)) expect(text.includes(agent.token), path).toBe(false);
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("cairn init: claude-code", () => {
  it("writes the index template, the hooks and the MCP entry, keeps what a person wrote, and changes no byte on a second run", async () => {
    const { root } = await freshProject();
    await mkdir(join(root, ".claude"));
    const personSettings = `{
  // the team's settings
  "permissions": { "allow": ["Bash(npm test)"] },
  "env": { "NODE_ENV": "development" },
  "hooks": {
    "SessionStart": [
      { "hooks": [{ "type": "command", "command": "echo team-banner" }] }
    ]
  }
}
`;
    await writeFile(join(root, ".claude", "settings.json"), personSettings);
    await writeFile(
      join(root, ".mcp.json"),
      `${JSON.stringify({ mcpServers: { docs: { type: "http", url: "http://127.0.0.1:1/mcp" } } }, null, 2)}\n`,
    );

    const first = await init(root, "claude-code");
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain("created agents/backend/MEMORY.md");
    expect(first.stdout).toContain("updated .claude/settings.json");
    expect(first.stdout).toContain("updated .mcp.json");
    const files = await snapshot(root);
    expect(Object.keys(files).sort()).toEqual([".claude/settings.json", ".mcp.json", "agents/backend/MEMORY.md"]);
    expect(files["agents/backend/MEMORY.md"]).toContain("## Lessons");
    expect(files["agents/backend/MEMORY.md"]).toContain("session:<id>");

    const settings = parseJsonc(files[".claude/settings.json"]!) as { permissions: unknown; env: unknown; hooks: HookGroups };
    // A person's settings, comment and hook are kept; Cairn's hooks are added beside them.
    expect(files[".claude/settings.json"]).toContain("// the team's settings");
    expect(settings.permissions).toEqual({ allow: ["Bash(npm test)"] });
    expect(settings.env).toEqual({ NODE_ENV: "development" });
    expect(settings.hooks.SessionStart![0]).toEqual({ hooks: [{ type: "command", command: "echo team-banner" }] });
    expect(settings.hooks.SessionStart![1]!.matcher).toBe("startup|resume|clear|compact");
    expect(settings.hooks.UserPromptSubmit).toHaveLength(1);
    // The edit hook runs before Claude Code's file tools, and before nothing else.
    expect(settings.hooks.PreToolUse).toEqual([
      {
        matcher: "Edit|MultiEdit|Write",
        hooks: [{ type: "command", command: `cairn-load --hook edit --url '${cairn.url.origin}'`, timeout: 10 }],
      },
    ]);
    const mcp = JSON.parse(files[".mcp.json"]!) as {
      mcpServers: Record<string, { type: string; url: string; headers?: Record<string, string> }>;
    };
    expect(mcp.mcpServers.docs).toEqual({ type: "http", url: "http://127.0.0.1:1/mcp" });
    expect(mcp.mcpServers.cairn).toEqual({
      type: "http",
      url: new URL("/mcp", cairn.url).href,
      headers: { Authorization: "Bearer ${CAIRN_TOKEN}" },
    });
    expectNoToken(files);

    const second = await init(root, "claude-code");
    expect(second.code).toBe(0);
    expect(second.stdout.match(/^unchanged /gm)).toHaveLength(3);
    expect(await snapshot(root)).toEqual(files);

    // A group a person adds after Cairn's later on stays where it is, and so does Cairn's.
    const edited = files[".claude/settings.json"]!.replace(
      /\n {4}\],\n {4}"UserPromptSubmit"/,
      ',\n      { "hooks": [{ "type": "command", "command": "echo later" }] }\n    ],\n    "UserPromptSubmit"',
    );
    expect(edited).toContain("echo later");
    await writeFile(join(root, ".claude", "settings.json"), edited);
    expect((await init(root, "claude-code")).stdout).toContain("unchanged .claude/settings.json");
    expect(await readFile(join(root, ".claude", "settings.json"), "utf8")).toBe(edited);
  });

  it("runs each generated hook from a subfolder as Claude Code would, and the .mcp.json entry connects a real MCP client", async () => {
    const { root, sub } = await freshProject();
    expect((await init(root, "claude-code")).code).toBe(0);
    const index = join(root, "agents", "backend", "MEMORY.md");
    await writeFile(index, `${await readFile(index, "utf8")}${LESSON}\n`);
    const { hooks } = parseJsonc(await readFile(join(root, ".claude", "settings.json"), "utf8")) as { hooks: HookGroups };

    const base = { session_id: "s-1", transcript_path: join(root, "t.jsonl"), cwd: sub };
    const session = await runHook(
      cairnCommand(hooks, "SessionStart"),
      { ...base, hook_event_name: "SessionStart", source: "compact" },
      sub,
      { CLAUDE_PROJECT_DIR: root, CAIRN_TOKEN: agent.token },
    );
    expect([session.code, session.stderr]).toEqual([0, ""]);
    const started = JSON.parse(session.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
    expect(started.hookSpecificOutput.hookEventName).toBe("SessionStart");
    expect(started.hookSpecificOutput.additionalContext).toContain(LESSON);

    const promptCommand = cairnCommand(hooks, "UserPromptSubmit");
    const prompt = { ...base, hook_event_name: "UserPromptSubmit", prompt: RELATED_PROMPT };
    const related = await runHook(promptCommand, prompt, sub, { CLAUDE_PROJECT_DIR: root, CAIRN_TOKEN: agent.token });
    expect(related.code).toBe(0);
    const answered = JSON.parse(related.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
    expect(answered.hookSpecificOutput.hookEventName).toBe("UserPromptSubmit");
    expect(answered.hookSpecificOutput.additionalContext).toMatch(/t_[0-9a-f]{32}/);
    expect(Buffer.byteLength(related.stdout)).toBeLessThanOrEqual(600);
    // Without the token the same hook says nothing, exits 0 and says why on stderr.
    const refused = await runHook(promptCommand, prompt, sub, { CLAUDE_PROJECT_DIR: root });
    expect([refused.code, refused.stdout]).toEqual([0, ""]);
    expect(refused.stderr).toContain("CAIRN_TOKEN");

    // Before an edit: the PAY-77 decision cites src/payments/checkout.ts (its refs), nothing cites refund.ts.
    const editCommand = cairnCommand(hooks, "PreToolUse");
    const edit = (file: string) => ({
      ...base,
      permission_mode: "default",
      hook_event_name: "PreToolUse",
      tool_name: "Edit",
      tool_input: { file_path: join(sub, file), old_string: "a", new_string: "b" },
      tool_use_id: "toolu_1",
    });
    const cited = await runHook(editCommand, edit("checkout.ts"), sub, { CLAUDE_PROJECT_DIR: root, CAIRN_TOKEN: agent.token });
    expect(cited.code, cited.stderr).toBe(0);
    const pointed = JSON.parse(cited.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
    expect(pointed.hookSpecificOutput.hookEventName).toBe("PreToolUse");
    expect(pointed.hookSpecificOutput.additionalContext).toContain("src/payments/checkout.ts");
    expect(pointed.hookSpecificOutput.additionalContext).toMatch(/t_[0-9a-f]{32} \([0-9-]+, backend, decision/);
    expect(Buffer.byteLength(cited.stdout)).toBeLessThanOrEqual(600);
    const uncited = await runHook(editCommand, edit("refund.ts"), sub, { CLAUDE_PROJECT_DIR: root, CAIRN_TOKEN: agent.token });
    expect([uncited.code, uncited.stdout]).toEqual([0, ""]);

    const { mcpServers } = JSON.parse(await readFile(join(root, ".mcp.json"), "utf8")) as {
      mcpServers: { cairn: { url: string; headers: Record<string, string> } };
    };
    const env = { CAIRN_TOKEN: agent.token };
    const headers = Object.fromEntries(Object.entries(mcpServers.cairn.headers).map(([k, v]) => [k, expandClaude(v, env)]));
    const tools = await listToolsWith(expandClaude(mcpServers.cairn.url, env), headers);
    expect(tools).toContain("query_raw_memories");
    expect(tools).toContain("get_memory");
    // The entry itself holds no credential: unexpanded, it is refused.
    await expect(listToolsWith(mcpServers.cairn.url, mcpServers.cairn.headers)).rejects.toThrow();

    // The capture hook on Stop, PreCompact and SessionEnd: the same command, which keeps the transcript's exchange once.
    const capture = cairnCommand(hooks, "Stop");
    expect([cairnCommand(hooks, "PreCompact"), cairnCommand(hooks, "SessionEnd")]).toEqual([capture, capture]);
    const line = (type: string, uuid: string, message: unknown) =>
      `${JSON.stringify({ type, uuid, sessionId: "s-1", isSidechain: false, timestamp: "2026-11-30T09:00:00.000Z", cwd: sub, message })}\n`;
    await writeFile(
      base.transcript_path,
      line("user", "u-1", { role: "user", content: "Which retry policy do payments use?" }) +
        line("assistant", "u-2", {
          role: "assistant",
          model: "claude-sonnet-4-5",
          content: [{ type: "text", text: "Three tries with an idempotency key." }],
        }),
    );
    const captureEnv = { CLAUDE_PROJECT_DIR: root, CAIRN_TOKEN: agent.token, XDG_STATE_HOME: join(root, ".git", "test-state") };
    for (const event of ["Stop", "SessionEnd"]) {
      const captured = await runHook(capture, { ...base, hook_event_name: event }, sub, captureEnv);
      expect([captured.code, captured.stdout]).toEqual([0, ""]);
      expect(captured.stderr).toContain(event === "Stop" ? `${event}: 1 stored` : `${event}: 0 stored`);
    }
    const kept = await http(cairn.url, "GET", "/v1/memories/recent?session_id=s-1&detail=full", { token: agent.token });
    expect((kept.body.turns as Array<{ prompt: string; tags: string[] }>).map((t) => [t.prompt, t.tags.includes("captured")])).toEqual([
      ["Which retry policy do payments use?", true],
    ]);
  });

  it("hooks never block: an unreachable Cairn or a missing index prints nothing and exits 0; without cairn-load on PATH the shell's 127 is not Claude Code's blocking 2", async () => {
    const { root, sub } = await freshProject();
    const dead = `http://127.0.0.1:${await closedPort()}`;
    const wired = await cairnCli(["init", "--project", root, "--agent", "backend", "--harness", "claude-code", "--url", dead]);
    expect(wired.code).toBe(0);
    const { hooks } = parseJsonc(await readFile(join(root, ".claude", "settings.json"), "utf8")) as { hooks: HookGroups };
    const env = { CLAUDE_PROJECT_DIR: root, CAIRN_TOKEN: agent.token };
    const prompt = { session_id: "s", cwd: sub, hook_event_name: "UserPromptSubmit", prompt: RELATED_PROMPT };

    const unreachable = await runHook(cairnCommand(hooks, "UserPromptSubmit"), prompt, sub, env);
    expect([unreachable.code, unreachable.stdout]).toEqual([0, ""]);
    expect(unreachable.stderr).toContain("unreachable");
    // The same hook against the live Cairn speaks: the silence above is the dead URL's.
    const live = await runHook(cairnCommand(hooks, "UserPromptSubmit").replace(dead, cairn.url.origin), prompt, sub, env);
    expect(live.stdout).toContain("UserPromptSubmit");

    const sessionCommand = cairnCommand(hooks, "SessionStart");
    const startup = { session_id: "s", cwd: sub, hook_event_name: "SessionStart", source: "startup" };
    expect((await runHook(sessionCommand, startup, sub, env)).stdout).toContain("SessionStart");
    await rm(join(root, "agents", "backend", "MEMORY.md"));
    const noIndex = await runHook(sessionCommand, startup, sub, env);
    expect([noIndex.code, noIndex.stdout]).toEqual([0, ""]);
    expect(noIndex.stderr).toContain("MEMORY.md is missing");

    const notInstalled = await run("/bin/sh", ["-c", sessionCommand], {
      cwd: sub,
      env: { PATH: SYSTEM_PATH, ...env },
      stdin: JSON.stringify(startup),
    });
    expect([notInstalled.code, notInstalled.stdout]).toEqual([127, ""]);
    expect(notInstalled.stderr).toContain("cairn-load");
  });
});

describe("cairn init: codex, opencode, generic", () => {
  it("codex: .codex/hooks.json and a managed [mcp_servers.cairn] table; a person's config.toml kept byte for byte; hooks run as Codex runs them", async () => {
    const { root, sub } = await freshProject();
    await mkdir(join(root, ".codex"));
    const personToml = `model = "o3"\n\n[mcp_servers.docs]\nurl = "http://127.0.0.1:1/mcp"\n`;
    await writeFile(join(root, ".codex", "config.toml"), personToml);
    const first = await init(root, "codex");
    expect(first.code, first.stderr).toBe(0);
    const files = await snapshot(root);
    expect(Object.keys(files).sort()).toEqual([".codex/config.toml", ".codex/hooks.json", "agents/backend/MEMORY.md"]);
    const toml = files[".codex/config.toml"]!;
    expect(toml.startsWith(personToml)).toBe(true);
    expect(toml).toContain('bearer_token_env_var = "CAIRN_TOKEN"');
    expectNoToken(files);
    expect((await init(root, "codex")).stdout.match(/^unchanged /gm)).toHaveLength(3);
    expect(await snapshot(root)).toEqual(files);

    await writeFile(join(root, "agents", "backend", "MEMORY.md"), `## Lessons\n${LESSON}\n`);
    const { hooks } = JSON.parse(files[".codex/hooks.json"]!) as { hooks: HookGroups };
    expect(hooks.SessionStart![0]!.matcher).toBe("startup|resume|clear|compact");
    // Codex's capture events are Stop and PreCompact: it has no SessionEnd.
    expect(cairnCommand(hooks, "Stop")).toContain("cairn-load --hook capture --harness codex");
    expect(cairnCommand(hooks, "PreCompact")).toBe(cairnCommand(hooks, "Stop"));
    expect(hooks.SessionEnd).toBeUndefined();
    // Codex sets no project variable: the hook finds the project from the JSON's cwd.
    const codexInput = { session_id: "s", transcript_path: null, cwd: sub, model: "o3", permission_mode: "default" };
    const session = await runHook(
      cairnCommand(hooks, "SessionStart"),
      { ...codexInput, hook_event_name: "SessionStart", source: "startup" },
      sub,
      {
        CAIRN_TOKEN: agent.token,
      },
    );
    expect(session.code).toBe(0);
    expect(JSON.parse(session.stdout).hookSpecificOutput.additionalContext).toContain(LESSON);
    const prompt = await runHook(
      cairnCommand(hooks, "UserPromptSubmit"),
      { ...codexInput, turn_id: "t", hook_event_name: "UserPromptSubmit", prompt: RELATED_PROMPT },
      sub,
      { CAIRN_TOKEN: agent.token },
    );
    expect(JSON.parse(prompt.stdout).hookSpecificOutput.additionalContext).toMatch(/t_[0-9a-f]{32}/);
    // Codex's edits are apply_patch calls, the patch in tool_input.command with paths relative to the cwd.
    expect(hooks.PreToolUse).toEqual([
      { matcher: "apply_patch", hooks: [{ type: "command", command: `cairn-load --hook edit --url '${cairn.url.origin}'`, timeout: 10 }] },
    ]);
    const patch = (file: string) => `*** Begin Patch\n*** Update File: ${file}\n@@\n-a\n+b\n*** End Patch\n`;
    const applyPatch = (file: string) => ({
      ...codexInput,
      turn_id: "t",
      hook_event_name: "PreToolUse",
      tool_name: "apply_patch",
      tool_input: { command: patch(file) },
      tool_use_id: "call-1",
    });
    const edited = await runHook(cairnCommand(hooks, "PreToolUse"), applyPatch("checkout.ts"), sub, { CAIRN_TOKEN: agent.token });
    expect(JSON.parse(edited.stdout).hookSpecificOutput.additionalContext).toContain("citing src/payments/checkout.ts");
    const notCited = await runHook(cairnCommand(hooks, "PreToolUse"), applyPatch("refund.ts"), sub, { CAIRN_TOKEN: agent.token });
    expect([notCited.code, notCited.stdout]).toEqual([0, ""]);

    // The table as Codex reads it: the URL, and the token from the variable it names.
    const block = toml.slice(toml.indexOf("# cairn:begin"));
    const url = /^url = "(.*)"$/m.exec(block)![1]!;
    const variable = /^bearer_token_env_var = "(.*)"$/m.exec(block)![1]!;
    const env: Record<string, string> = { CAIRN_TOKEN: agent.token };
    expect(await listToolsWith(url, { Authorization: `Bearer ${env[variable]}` })).toContain("query_raw_memories");
  });

  it("opencode: an mcp entry whose header reads {env:CAIRN_TOKEN} and the index under instructions; a person's keys kept", async () => {
    const { root } = await freshProject();
    const person = { $schema: "https://opencode.ai/config.json", theme: "tokyonight", instructions: ["CONTRIBUTING.md"] };
    await writeFile(join(root, "opencode.json"), `${JSON.stringify(person, null, 2)}\n`);
    expect((await init(root, "opencode")).code).toBe(0);
    const files = await snapshot(root);
    const config = JSON.parse(files["opencode.json"]!) as {
      theme: string;
      instructions: string[];
      mcp: { cairn: { type: string; url: string; headers: Record<string, string> } };
    };
    expect(config.theme).toBe("tokyonight");
    expect(config.instructions).toEqual(["CONTRIBUTING.md", "agents/backend/MEMORY.md"]);
    expect(config.mcp.cairn.type).toBe("remote");
    expectNoToken(files);
    expect((await init(root, "opencode")).stdout.match(/^unchanged /gm)).toHaveLength(2);
    expect(await snapshot(root)).toEqual(files);

    const env: Record<string, string> = { CAIRN_TOKEN: agent.token };
    const expand = (v: string) => v.replace(/\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => env[name] ?? "");
    const headers = Object.fromEntries(Object.entries(config.mcp.cairn.headers).map(([k, v]) => [k, expand(v)]));
    expect(await listToolsWith(config.mcp.cairn.url, headers)).toContain("query_raw_memories");
  });

  it("generic: the index template and printed instructions; cairn-load prints the index from any folder of the project", async () => {
    const { root, sub } = await freshProject();
    const result = await init(root, "generic");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("cairn-load --agent backend --harness generic");
    expect(result.stdout).toContain(new URL("/mcp", cairn.url).href);
    expect(Object.keys(await snapshot(root))).toEqual(["agents/backend/MEMORY.md"]);
    await writeFile(join(root, "agents", "backend", "MEMORY.md"), `${LESSON}\n`);
    const printed = await run(LOADER_BIN, ["--agent", "backend", "--harness", "generic"], { cwd: sub, env: { PATH: SYSTEM_PATH } });
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stdout).toContain(LESSON);
  });
});

describe("the documented install", () => {
  it("npm link in the clone puts cairn and cairn-load on PATH; from a project's folder, init wires it and the hook runs", async () => {
    const checkout = fileURLToPath(new URL("../../../", import.meta.url));
    const prefix = await mkdtemp(join(tmpdir(), "cairn-npm-prefix-"));
    // npm's global folder moved to a temp dir: the link is real, and nothing outside the test is touched.
    const linked = await run("npm", ["link", "--no-audit", "--no-fund"], {
      cwd: checkout,
      env: { PATH: process.env.PATH ?? SYSTEM_PATH, HOME: process.env.HOME ?? prefix, npm_config_prefix: prefix },
    });
    expect(linked.code, linked.stderr).toBe(0);
    const path = `${join(prefix, "bin")}:${SYSTEM_PATH}`;
    const { root, sub } = await freshProject();
    const wired = await run("cairn", ["init", "--agent", "backend", "--harness", "claude-code", "--url", cairn.url.origin], {
      cwd: root,
      env: { PATH: path },
    });
    expect(wired.code, wired.stderr).toBe(0);
    expect(wired.stdout).toContain("created .claude/settings.json");
    // cairn-load is on PATH: the reminder to install it is not printed.
    expect(wired.stdout).not.toContain("is not on PATH");
    await writeFile(join(root, "agents", "backend", "MEMORY.md"), `${LESSON}\n`);
    const { hooks } = parseJsonc(await readFile(join(root, ".claude", "settings.json"), "utf8")) as { hooks: HookGroups };
    const session = await run("/bin/sh", ["-c", cairnCommand(hooks, "SessionStart")], {
      cwd: sub,
      env: { PATH: path, CLAUDE_PROJECT_DIR: root },
      stdin: JSON.stringify({ session_id: "s", cwd: sub, hook_event_name: "SessionStart", source: "startup" }),
    });
    expect(session.code, session.stderr).toBe(0);
    expect(JSON.parse(session.stdout).hookSpecificOutput.additionalContext).toContain(LESSON);
    // Without it on PATH, init says how to install it.
    const other = await freshProject();
    const unlinked = await cairnCli(["init", "--project", other.root, "--agent", "backend", "--harness", "claude-code"], {
      PATH: SYSTEM_PATH,
    });
    expect(unlinked.stdout).toContain("cairn-load is not on PATH here: run `npm link`");
  });
});

describe("cairn init: what it will not do", () => {
  it("--dry-run prints what would change and writes nothing; the same run without it writes exactly that", async () => {
    const { root } = await freshProject();
    const dry = await init(root, "claude-code", "--dry-run");
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("would create .claude/settings.json");
    expect(dry.stdout).toMatch(/\+ +"command": "cairn-load --hook session --agent backend --harness claude-code"/);
    expect(dry.stdout).toContain("nothing written (3 of 3 files would change)");
    expect(await snapshot(root)).toEqual({});
    expect((await init(root, "claude-code")).code).toBe(0);
    expect(Object.keys(await snapshot(root)).sort()).toEqual([".claude/settings.json", ".mcp.json", "agents/backend/MEMORY.md"]);
  });

  it("keeps an index that exists, refuses a folder that is not a repository's top, a file that does not parse, and a URL with credentials, writing nothing", async () => {
    const { root, sub } = await freshProject();
    await mkdir(join(root, "agents", "backend"), { recursive: true });
    await writeFile(join(root, "agents", "backend", "MEMORY.md"), `${LESSON}\n`);
    expect((await init(root, "codex")).stdout).toContain("unchanged agents/backend/MEMORY.md");
    expect(await readFile(join(root, "agents", "backend", "MEMORY.md"), "utf8")).toBe(`${LESSON}\n`);

    const inside = await init(sub, "claude-code");
    expect(inside.code).toBe(2);
    expect(inside.stderr).toContain(`pass --project ${root}`);
    const plain = await mkdtemp(join(tmpdir(), "cairn-init-plain-"));
    const notGit = await init(plain, "claude-code");
    expect(notGit.code).toBe(2);
    expect(notGit.stderr).toContain("git init");
    expect(await snapshot(plain)).toEqual({});

    const broken = await freshProject();
    await mkdir(join(broken.root, ".claude"));
    await writeFile(join(broken.root, ".claude", "settings.json"), '{ "hooks": { ');
    const refused = await init(broken.root, "claude-code");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(".claude/settings.json does not parse");
    expect(await snapshot(broken.root)).toEqual({ ".claude/settings.json": '{ "hooks": { ' });

    const withPassword = await cairnCli([
      "init",
      "--project",
      broken.root,
      "--agent",
      "backend",
      "--harness",
      "generic",
      "--url",
      "http://u:p@127.0.0.1:8790",
    ]);
    expect(withPassword.code).toBe(2);
    expect(withPassword.stderr).toContain("CAIRN_TOKEN");
  });
});
