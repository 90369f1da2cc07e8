import { constants, statSync } from "node:fs";
import { access, readFile, stat } from "node:fs/promises";
import { delimiter, dirname, join, resolve } from "node:path";
import { applyEdits, format, modify, parse, printParseErrorCode, type FormattingOptions, type ParseError } from "jsonc-parser";
import { AGENT_PATTERN } from "@cairn/memory-core/tokens-file";
import { writeAtomically } from "@cairn/loader/atomic-write";
import { gitTopLevel } from "@cairn/loader/project";
import { CliError, usageError, type Io } from "../io.js";

/**
 * `cairn init`: wires a project to Cairn for one agent and one harness. It writes the agent's index template,
 * the harness's hooks (which call `cairn-load` by name, so no machine path enters the project) and its MCP
 * entry (which reads the token from the environment, so no token enters the project). It owns only its own
 * entries: every other key, comment and line a person wrote stays; a second run changes no byte.
 */

export const INIT_HARNESSES = ["claude-code", "codex", "opencode", "generic"] as const;
export type InitHarness = (typeof INIT_HARNESSES)[number];

export interface InitOptions {
  project: string;
  agent: string;
  harness: InitHarness;
  /** memory-core's URL: a location, never a secret. */
  url: URL;
  dryRun: boolean;
}

/** The environment variable every generated entry reads the agent's token from. */
export const TOKEN_VARIABLE = "CAIRN_TOKEN";
/** Cairn's entries in a harness's files are recognised by this command name. */
const LOADER = "cairn-load";
/** Seconds a harness waits for a hook before it gives up on it (the prompt and edit hooks give up on Cairn sooner). */
const HOOK_TIMEOUT_SECONDS = 10;
/**
 * The tools the edit hook runs before, by the names each harness matches on: Claude Code's file tools, and
 * Codex's apply_patch (which Codex also lets `Edit` and `Write` match; its canonical name says what it is).
 */
const EDIT_MATCHERS = { "claude-code": "Edit|MultiEdit|Write", codex: "apply_patch" } as const;

interface Planned {
  /** Relative to the project. */
  path: string;
  before: string | undefined;
  after: string;
}

export async function init(options: InitOptions, io: Io): Promise<void> {
  if (!AGENT_PATTERN.test(options.agent)) {
    throw usageError(`init: "${options.agent}" is not an agent name (letters, digits, ., _ and -, up to 64)`);
  }
  if (options.url.username || options.url.password) {
    throw usageError("init: --url must not carry credentials: the token comes from $CAIRN_TOKEN, never from a project's files");
  }
  const project = await checkProject(options.project);
  const plans = await plan(project, options);
  const changed = plans.filter((p) => p.after !== p.before);
  if (options.dryRun) {
    for (const p of plans) {
      io.stdout.write(`${p.before === undefined ? "would create" : p.after === p.before ? "unchanged" : "would update"} ${p.path}\n`);
      if (p.after !== p.before) io.stdout.write(lineDiff(p.before ?? "", p.after));
    }
    io.stdout.write(`dry run: nothing written (${changed.length} of ${plans.length} files would change)\n`);
    return;
  }
  for (const p of changed) await writeAtomically(join(project, p.path), p.after);
  for (const p of plans) {
    io.stdout.write(`${p.before === undefined ? "created" : p.after === p.before ? "unchanged" : "updated"} ${p.path}\n`);
  }
  io.stdout.write(nextSteps(options, io.env));
}

/** A git repository's top folder: hooks find their project by it, so init wires nothing below or outside one. */
async function checkProject(dir: string): Promise<string> {
  const project = resolve(dir);
  const isDir = await stat(project).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!isDir) throw usageError(`init: --project ${project} is not a folder`);
  if (!(await exists(join(project, ".git")))) {
    const top = await gitTopLevel(dirname(project));
    throw usageError(
      top
        ? `init: ${project} is inside the git repository ${top}: pass --project ${top}`
        : `init: ${project} is not a git repository: run git init there first, or pass the repository's folder`,
    );
  }
  try {
    await access(project, constants.W_OK);
  } catch {
    throw new CliError(`init: ${project} cannot be written`);
  }
  return project;
}

/** Everything is read and planned before anything is written: a file that does not parse leaves all as it was. */
async function plan(project: string, options: InitOptions): Promise<Planned[]> {
  const { agent, harness, url } = options;
  const plans: Planned[] = [];
  const index = join("agents", agent, "MEMORY.md");
  const existingIndex = await readOptional(project, index);
  plans.push({ path: index, before: existingIndex, after: existingIndex ?? indexTemplate(agent) });
  const mcpUrl = new URL("/mcp", url).href;
  const captureCommand = `${LOADER} --hook capture --harness ${harness} --url '${url.origin}'`;
  const sessionCommand = `${LOADER} --hook session --agent ${agent} --harness ${harness}`;
  const promptCommand = `${LOADER} --hook prompt --url '${url.origin}'`;
  const editCommand = `${LOADER} --hook edit --url '${url.origin}'`;

  if (harness === "claude-code" || harness === "codex") {
    const hooksPath = harness === "claude-code" ? join(".claude", "settings.json") : join(".codex", "hooks.json");
    const before = await readOptional(project, hooksPath);
    let text = orEmptyObject(before);
    text = setHookGroup(text, hooksPath, "SessionStart", {
      matcher: "startup|resume|clear|compact",
      hooks: [{ type: "command", command: sessionCommand, timeout: HOOK_TIMEOUT_SECONDS }],
    });
    // The capture hook keeps the session's exchanges from its transcript; Codex has no SessionEnd event.
    for (const event of harness === "claude-code" ? ["Stop", "PreCompact", "SessionEnd"] : ["Stop", "PreCompact"]) {
      text = setHookGroup(text, hooksPath, event, { hooks: [{ type: "command", command: captureCommand, timeout: HOOK_TIMEOUT_SECONDS }] });
    }
    text = setHookGroup(text, hooksPath, "UserPromptSubmit", {
      hooks: [{ type: "command", command: promptCommand, timeout: HOOK_TIMEOUT_SECONDS }],
    });
    text = setHookGroup(text, hooksPath, "PreToolUse", {
      matcher: EDIT_MATCHERS[harness],
      hooks: [{ type: "command", command: editCommand, timeout: HOOK_TIMEOUT_SECONDS }],
    });
    plans.push({ path: hooksPath, before, after: text });
  }
  if (harness === "claude-code") {
    const path = ".mcp.json";
    const before = await readOptional(project, path);
    const entry = { type: "http", url: mcpUrl, headers: { Authorization: `Bearer \${${TOKEN_VARIABLE}}` } };
    plans.push({ path, before, after: setValue(orEmptyObject(before), path, ["mcpServers", "cairn"], entry) });
  }
  if (harness === "codex") {
    const path = join(".codex", "config.toml");
    const before = await readOptional(project, path);
    plans.push({ path, before, after: upsertTomlBlock(before ?? "", path, codexMcpBlock(mcpUrl)) });
  }
  if (harness === "opencode") {
    const path = (await readOptional(project, "opencode.jsonc")) !== undefined ? "opencode.jsonc" : "opencode.json";
    const before = await readOptional(project, path);
    let text = before ?? `${JSON.stringify({ $schema: "https://opencode.ai/config.json" }, null, 2)}\n`;
    const entry = {
      type: "remote",
      url: mcpUrl,
      headers: { Authorization: `Bearer {env:${TOKEN_VARIABLE}}` },
      oauth: false,
      enabled: true,
    };
    text = setValue(text, path, ["mcp", "cairn"], entry);
    // OpenCode reads every file under `instructions` at session start: the index itself, never a copy of it.
    const instructions = (parseJson(text, path) as { instructions?: unknown }).instructions;
    const indexPath = index.split("\\").join("/");
    if (!Array.isArray(instructions)) text = setValue(text, path, ["instructions"], [indexPath]);
    else if (!instructions.includes(indexPath)) {
      text = insert(text, ["instructions", instructions.length], indexPath);
    }
    plans.push({ path, before, after: text });
  }
  return plans;
}

/**
 * Puts Cairn's one matcher group under `hooks.<event>`. Cairn's hooks are those whose command runs
 * `cairn-load`: an identical group already there, wherever it sits, changes nothing; otherwise Cairn's hooks are taken out
 * (a group left empty goes with them) and the new group goes last. Every other group stays as it was.
 */
function setHookGroup(text: string, file: string, event: string, group: Record<string, unknown>): string {
  const config = parseJson(text, file) as { hooks?: Record<string, unknown> };
  if (config.hooks !== undefined && (typeof config.hooks !== "object" || config.hooks === null || Array.isArray(config.hooks))) {
    throw new CliError(`init: ${file}: "hooks" is not an object; fix it by hand, then run init again`);
  }
  const groups = config.hooks?.[event];
  if (groups === undefined) return setValue(text, file, ["hooks", event], [group]);
  if (!Array.isArray(groups)) throw new CliError(`init: ${file}: "hooks.${event}" is not a list; fix it by hand, then run init again`);
  const ours = (hook: unknown) =>
    typeof hook === "object" && hook !== null && typeof (hook as { command?: unknown }).command === "string"
      ? (hook as { command: string }).command.includes(LOADER)
      : false;
  const hooksOf = (g: unknown): unknown[] =>
    typeof g === "object" && g !== null && Array.isArray((g as { hooks?: unknown }).hooks) ? (g as { hooks: unknown[] }).hooks : [];
  const withOurs = groups.map((g, i) => ({ i, g })).filter(({ g }) => hooksOf(g).some(ours));
  if (withOurs.length === 1 && JSON.stringify(withOurs[0]!.g) === JSON.stringify(group)) {
    return text;
  }
  let next = text;
  for (const { i, g } of [...withOurs].reverse()) {
    const hooks = hooksOf(g);
    if (hooks.every(ours)) {
      next = remove(next, ["hooks", event, i]);
      continue;
    }
    for (let j = hooks.length - 1; j >= 0; j--) if (ours(hooks[j])) next = remove(next, ["hooks", event, i, "hooks", j]);
  }
  const remaining = ((parseJson(next, file) as { hooks: Record<string, unknown[]> }).hooks[event] ?? []).length;
  return remaining === 0 ? insert(next, ["hooks", event], [group]) : insert(next, ["hooks", event, remaining], group);
}

/** A JSON file that does not exist yet, or holds nothing but blanks, starts as an empty object. */
const orEmptyObject = (text: string | undefined) => (text === undefined || text.trim() === "" ? "{}\n" : text);

/** Sets one value by its path, unless it already holds exactly that value. */
function setValue(text: string, file: string, path: string[], value: unknown): string {
  let current: unknown = parseJson(text, file);
  for (const [i, key] of path.entries()) {
    if (current === undefined) break;
    if (typeof current !== "object" || current === null || Array.isArray(current)) {
      throw new CliError(`init: ${file}: "${path.slice(0, i).join(".")}" is not an object; fix it by hand, then run init again`);
    }
    current = (current as Record<string, unknown>)[key];
  }
  if (JSON.stringify(current) === JSON.stringify(value)) return text;
  return insert(text, path, value);
}

/**
 * Sets a value (or, with a numeric last key, inserts it into a list) and lays out only the text it adds, in
 * the file's own indentation: the lines around it stay byte for byte. An empty object is written whole.
 */
function insert(text: string, path: Array<string | number>, value: unknown): string {
  const options = formatting(text);
  if (/^\s*\{\s*\}\s*$/.test(text)) {
    const object = {};
    let cursor: Record<string, unknown> = object;
    for (const key of path.slice(0, -1)) cursor = cursor[String(key)] = {};
    cursor[String(path.at(-1))] = value;
    return `${JSON.stringify(object, null, options.insertSpaces ? options.tabSize : "\t")}\n`;
  }
  const edits = modify(text, path, value, { isArrayInsertion: typeof path.at(-1) === "number" });
  let next = applyEdits(text, edits);
  for (const edit of edits) {
    if (edit.content)
      next = applyEdits(next, format(next, { offset: edit.offset, length: edit.content.length }, { ...options, keepLines: false }));
  }
  return next;
}

/** Takes one entry out; its neighbours' lines are laid out again so no stray comma or bracket is left. */
function remove(text: string, path: Array<string | number>): string {
  return applyEdits(text, modify(text, path, undefined, { formattingOptions: formatting(text) }));
}

/** JSON with comments (Claude Code's and OpenCode's files may hold them); anything else is refused, not guessed at. */
function parseJson(text: string, file: string): unknown {
  const errors: ParseError[] = [];
  const value: unknown = parse(text, errors, { allowTrailingComma: true });
  if (errors.length > 0) {
    throw new CliError(
      `init: ${file} does not parse (${printParseErrorCode(errors[0]!.error)} at offset ${errors[0]!.offset}); fix it, then run init again`,
    );
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new CliError(`init: ${file} is not a JSON object; fix it, then run init again`);
  }
  return value;
}

/** The file's own indentation, so that what init adds looks like what a person wrote. */
function formatting(text: string): FormattingOptions {
  const indent = /\n([ \t]+)\S/.exec(text)?.[1];
  if (indent?.startsWith("\t")) return { insertSpaces: false, tabSize: 1, eol: "\n" };
  return { insertSpaces: true, tabSize: indent ? indent.length : 2, eol: "\n" };
}

const TOML_BEGIN = "# cairn:begin (managed by cairn init; the token is read from $CAIRN_TOKEN, never written here)";
const TOML_END = "# cairn:end";

function codexMcpBlock(mcpUrl: string): string {
  return `[mcp_servers.cairn]\nurl = ${JSON.stringify(mcpUrl)}\nbearer_token_env_var = "${TOKEN_VARIABLE}"`;
}

/**
 * Codex's config is TOML: Cairn's table sits between comment markers, replaced in place on a later run and
 * added at the end the first time (a TOML table runs to the next header, so the end is where it cannot
 * capture a person's keys). A `[mcp_servers.cairn]` a person wrote outside the markers is refused.
 */
function upsertTomlBlock(existing: string, file: string, content: string): string {
  const block = `${TOML_BEGIN}\n${content}\n${TOML_END}`;
  const start = existing.indexOf(TOML_BEGIN);
  const stop = existing.indexOf(TOML_END, start);
  if (start >= 0 !== stop >= 0) {
    throw new CliError(`init: ${file} holds a cairn marker without its pair; fix or remove it by hand, then run init again`);
  }
  const outside = start >= 0 ? existing.slice(0, start) + existing.slice(stop + TOML_END.length) : existing;
  if (/^\s*\[\s*mcp_servers\s*\.\s*"?cairn"?\s*\]/m.test(outside)) {
    throw new CliError(`init: ${file} already defines [mcp_servers.cairn] outside Cairn's markers; remove it, then run init again`);
  }
  if (start >= 0) return existing.slice(0, start) + block + existing.slice(stop + TOML_END.length);
  if (existing.length === 0) return `${block}\n`;
  const separator = existing.endsWith("\n\n") ? "" : existing.endsWith("\n") ? "\n" : "\n\n";
  return `${existing}${separator}${block}\n`;
}

/** The index every session starts with: the format, and no made-up lessons for an agent to believe. */
export function indexTemplate(agent: string): string {
  return `<!-- The index of ${agent}: what ${agent} must know before doing anything, read at every session start.
Keep it short (the loader warns over budget). One lesson a line, what to do or avoid and why in a few words,
with a pointer to the evidence in Cairn: a memory id (t_ and 32 hex digits, opened with get_memory) or a
session (session:<id>, opened with get_session). For example:
  - Retry payment calls only with an idempotency key: a retry without one charged twice (t_0123456789abcdef0123456789abcdef).
Replace this comment's example with real lessons; \`cairn-load --agent ${agent} --harness generic\` with CAIRN_URL
set checks every pointer. -->

## Lessons

## Tried and dropped

## Next
`;
}

function nextSteps(options: InitOptions, env: Io["env"]): string {
  const lines = ["", "next:"];
  lines.push(
    `- give the harness the agent's token in ${TOKEN_VARIABLE} (\`cairn tokens add --agent ${options.agent}\` prints one); no file holds it`,
  );
  if (!onPath(LOADER, env)) {
    lines.push(`- ${LOADER} is not on PATH here: run \`npm link\` once in the Cairn clone, or the harness reports the hooks as failing`);
  }
  if (options.harness === "claude-code") {
    lines.push("- Claude Code asks once before it uses the project's .mcp.json server: approve cairn (or later in /mcp)");
  }
  if (options.harness === "codex") {
    lines.push(
      "- Codex reads .codex/ only in a project you trust, and runs a project's hooks once you have reviewed them;",
      `  or put the [mcp_servers.cairn] table of .codex/config.toml into ~/.codex/config.toml`,
    );
  }
  if (options.harness === "generic") {
    const mcpUrl = new URL("/mcp", options.url).href;
    lines.push(
      `- at session start (and after a compaction), add what \`${LOADER} --agent ${options.agent} --harness generic\` prints`,
      `- MCP: streamable HTTP at ${mcpUrl} with the header "Authorization: Bearer $${TOKEN_VARIABLE}"`,
    );
  }
  lines.push(`- write ${options.agent}'s lessons into agents/${options.agent}/MEMORY.md`);
  return `${lines.join("\n")}\n`;
}

function onPath(command: string, env: Io["env"]): boolean {
  return (env.PATH ?? "")
    .split(delimiter)
    .some((dir) => dir !== "" && statSync(join(dir, command), { throwIfNoEntry: false })?.isFile() === true);
}

/** A diff-like view: the lines before the first and after the last difference are left out. */
function lineDiff(before: string, after: string): string {
  const a = before.length ? before.replace(/\n$/, "").split("\n") : [];
  const b = after.replace(/\n$/, "").split("\n");
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const out = [`@@ line ${head + 1} @@`];
  for (const line of a.slice(head, a.length - tail)) out.push(`- ${line}`);
  for (const line of b.slice(head, b.length - tail)) out.push(`+ ${line}`);
  return `${out.map((l) => `    ${l}`).join("\n")}\n`;
}

async function readOptional(project: string, path: string): Promise<string | undefined> {
  try {
    return await readFile(join(project, path), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new CliError(`init: ${path} cannot be read`);
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
