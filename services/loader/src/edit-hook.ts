import { realpath } from "node:fs/promises";
import { citesAny } from "@cairn/openapi/code-paths";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import { requestCairn } from "./cairn-request.js";
import { branchNote, checkoutOf, GitTimeout, movedSince } from "./git.js";
import { findProject } from "./project.js";
import { HOOK_OUTPUT_BYTES, type HookOutcome } from "./prompt-hook.js";

/**
 * The edit hook (`cairn-load --hook edit`): before an agent edits a file, a few pointers to what the team decided,
 * tried and failed, or learned about that file or its folder — and, from the repository itself, whether the code
 * moved since each was written and whether it was written on a branch not merged yet. For Claude Code's
 * `PreToolUse` on Edit, MultiEdit and Write, and Codex's `PreToolUse` on apply_patch. It prints nothing when
 * nothing cites the file, and never blocks the edit: whatever goes wrong, nothing on stdout, the reason for stderr.
 */

const POINTERS = 3;
/** What the contract lets one query ask about. */
const MAX_PATHS = 16;
/** The kinds of memory worth reading before an edit; a memory whose checks failed is worth it whatever its kind. */
const KINDS = ["decision", "attempt", "lesson"] as const;
/** A memory flagged so no longer holds: it is no pointer to follow. */
const NOT_LIVE = new Set(["outdated", "superseded", "rejected"]);
const CLAUDE_CODE_EDIT_TOOLS = new Set(["Edit", "MultiEdit", "Write"]);

export interface EditHookSettings {
  memoryCoreUrl: URL | undefined;
  token: string | undefined;
  timeoutMs: number;
  /** How the project is found, as for every hook mode (`findProject`). */
  projectFlag: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
}

interface Brief {
  id: string;
  agent: string;
  recorded_at: string;
  occurred_at?: string;
  kind?: string;
  flags?: string[];
  text: string;
  cites?: string[];
  branch?: string;
}

interface Full {
  code?: { branch?: string; commit?: string; paths?: Array<{ path: string }> };
}

class Silent extends Error {}

export async function editHook(stdin: string, settings: EditHookSettings): Promise<HookOutcome> {
  try {
    return { output: await run(stdin, settings) };
  } catch (error) {
    if (error instanceof Silent) return { silent: error.message };
    if (error instanceof GitTimeout || (error as Error).name === "TimeoutError") {
      return { silent: `no answer within ${settings.timeoutMs} ms` };
    }
    return { silent: (error as Error).message };
  }
}

async function run(stdin: string, settings: EditHookSettings): Promise<string> {
  const deadline = Date.now() + settings.timeoutMs;
  let input: { tool_name?: unknown; tool_input?: unknown; cwd?: unknown };
  try {
    input = JSON.parse(stdin) as typeof input;
  } catch {
    throw new Silent("stdin is not the hook's JSON");
  }
  if (typeof input !== "object" || input === null) throw new Silent("stdin is not the hook's JSON");
  const edited = editedFiles(input);
  if (edited.length === 0) throw new Silent(`no file to edit in the hook's JSON (tool ${String(input.tool_name)})`);
  if (!settings.memoryCoreUrl || !settings.token) throw new Silent("CAIRN_URL and CAIRN_TOKEN are not both set");

  const hookCwd = typeof input.cwd === "string" && input.cwd ? resolve(settings.cwd, input.cwd) : settings.cwd;
  const project = await findProject({ flag: settings.projectFlag, env: settings.env, hookCwd, cwd: settings.cwd });
  const checkout = await checkoutOf(project, deadline);
  if (!checkout) throw new Silent(`${project} is not in a git repository`);
  const { options: gitOptions, branch, mainBranch } = checkout;
  const paths = await repositoryPaths(gitOptions.cwd, edited, hookCwd);
  if (paths.length === 0) throw new Silent("the file is outside the repository");

  const ask = (filter: Record<string, string>) =>
    post<{ hits: Array<{ memory: Brief }> }>(settings, "/v1/memories/query", deadline, {
      paths,
      limit: POINTERS,
      detail: "brief",
      ...(branch ? { branch } : {}),
      ...(mainBranch ? { default_branch: mainBranch } : {}),
      ...filter,
    });
  const answers = await Promise.all([...KINDS.map((kind) => ask({ kind })), ask({ check_status: "failed" })]);
  const seen = new Map<string, Brief>();
  for (const { hits } of answers) {
    for (const { memory } of hits) if (!memory.flags?.some((f) => NOT_LIVE.has(f))) seen.set(memory.id, memory);
  }
  const briefs = [...seen.values()].sort((a, b) => Date.parse(when(b)) - Date.parse(when(a))).slice(0, POINTERS);
  if (briefs.length === 0) throw new Silent(`nothing live cites ${paths.join(", ")}`);

  const fulls = await Promise.all(briefs.map((b) => get<Full>(settings, `/v1/memories/${b.id}`, deadline)));
  const lines = await Promise.all(
    briefs.map(async (brief, i) => {
      const code = fulls[i]?.code;
      const notes: string[] = [];
      const moved = await movedSince(citedAmong(brief.cites, paths), { commit: code?.commit, time: when(brief) }, gitOptions);
      if (moved) notes.push(`code moved since: ${moved.commits} commit${moved.commits === 1 ? "" : "s"}, newest ${moved.newest}`);
      if (brief.flags?.includes("other_branch")) {
        const note = await branchNote(brief.branch ?? code?.branch, code?.commit, mainBranch, gitOptions);
        if (note) notes.push(note);
      }
      return { brief, notes };
    }),
  );
  const output = render(paths, lines);
  if (!output) throw new Silent("no pointer fits the budget");
  return output;
}

/**
 * The files an edit is about to touch. Claude Code's Edit, MultiEdit and Write carry `tool_input.file_path`
 * (absolute); Codex's apply_patch carries the patch in `tool_input.command`, whose file headers name paths
 * relative to the session's cwd.
 */
export function editedFiles(input: { tool_name?: unknown; tool_input?: unknown }): string[] {
  const toolInput = (typeof input.tool_input === "object" && input.tool_input !== null ? input.tool_input : {}) as Record<string, unknown>;
  if (typeof input.tool_name === "string" && CLAUDE_CODE_EDIT_TOOLS.has(input.tool_name)) {
    return typeof toolInput.file_path === "string" && toolInput.file_path ? [toolInput.file_path] : [];
  }
  if (input.tool_name === "apply_patch" && typeof toolInput.command === "string") {
    const files = [...toolInput.command.matchAll(/^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+)$/gm)].map((m) => m[1]!.trim());
    return [...new Set(files.filter(Boolean))];
  }
  return [];
}

/** Repository-relative, `/`-separated paths of the edited files that lie inside the repository, at most MAX_PATHS. */
async function repositoryPaths(top: string, files: string[], cwd: string): Promise<string[]> {
  const realTop = await realpath(top).catch(() => top);
  const out = new Set<string>();
  for (const file of files) {
    const absolute = resolve(cwd, file);
    // A file about to be written may not exist yet: its folder, or the nearest that exists, says where it is.
    let rel = relative(top, absolute);
    if (rel.startsWith("..") || isAbsolute(rel)) rel = relative(realTop, await realFile(absolute));
    if (!rel || rel.startsWith("..") || isAbsolute(rel)) continue;
    out.add(rel.split(sep).join("/"));
    if (out.size === MAX_PATHS) break;
  }
  return [...out];
}

async function realFile(path: string): Promise<string> {
  let dir = dirname(path);
  let rest = path.slice(dir.length);
  for (;;) {
    try {
      return (await realpath(dir)) + rest;
    } catch {
      const parent = dirname(dir);
      if (parent === dir) return path;
      rest = dir.slice(parent.length) + rest;
      dir = parent;
    }
  }
}

/** The paths a memory cites that bear on the files asked (by the rule memory-core found it by); else those files. */
function citedAmong(cites: string[] | undefined, asked: string[]): string[] {
  const bearing = (cites ?? []).filter((c) => citesAny([c], asked));
  return bearing.length > 0 ? bearing : asked;
}

/** When the memory says it happened, else when Cairn stored it. */
const when = (m: Brief) => m.occurred_at ?? m.recorded_at;

async function post<T>(settings: EditHookSettings, path: string, deadline: number, body: unknown): Promise<T> {
  return call<T>(settings, path, deadline, { method: "POST", body });
}

async function get<T>(settings: EditHookSettings, path: string, deadline: number): Promise<T | undefined> {
  // A pointer stands without its memory's code: no answer here only leaves the git notes out.
  return call<T>(settings, path, deadline, { method: "GET" }).catch((error: unknown) => {
    if ((error as Error).name === "TimeoutError") throw error;
    return undefined;
  });
}

async function call<T>(
  settings: EditHookSettings,
  path: string,
  deadline: number,
  init: { method: "GET" | "POST"; body?: unknown },
): Promise<T> {
  let response: Response;
  try {
    response = await requestCairn(settings.memoryCoreUrl!, settings.token!, path, deadline, init);
  } catch (error) {
    if ((error as Error).name === "TimeoutError") throw error;
    throw new Silent("Cairn is unreachable");
  }
  if (!response.ok) throw new Silent(`Cairn answered ${response.status}`);
  try {
    return (await response.json()) as T;
  } catch (error) {
    if ((error as Error).name === "TimeoutError") throw error;
    throw new Silent("Cairn's answer is not JSON");
  }
}

/**
 * One line per memory — id, day, who, kind, what git says, then the point in a few words. Over the budget, the
 * longest point is shortened first, so that three short pointers beat two long ones; a point cut to a stub drops
 * the last pointer instead.
 */
function render(paths: string[], lines: Array<{ brief: Brief; notes: string[] }>): string | undefined {
  const subject = paths.length === 1 ? paths[0]! : `${paths[0]} and ${paths.length - 1} more`;
  const header = `Cairn memories citing ${subject} (open with get_memory):`;
  const pointers = lines.map(({ brief, notes }) => {
    const kind = [
      brief.kind,
      brief.flags?.includes("checks_failed") ? "checks failed" : undefined,
      // Imported history (a commit's memory): data to check, not yet a person's verdict.
      brief.flags?.includes("untrusted") ? "imported" : undefined,
    ]
      .filter(Boolean)
      .join(", ");
    const head = `- ${brief.id} (${when(brief).slice(0, 10)}, ${brief.agent}${kind ? `, ${kind}` : ""}${notes.length ? `; ${notes.join("; ")}` : ""}): `;
    const words = brief.text.replace(/\s+/g, " ").trim();
    return { head, words, cut: words };
  });
  const wrap = () =>
    `${JSON.stringify({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        additionalContext: [header, ...pointers.map((p) => p.head + (p.cut.length < p.words.length ? `${p.cut}…` : p.cut))].join("\n"),
      },
    })}\n`;
  while (pointers.length > 0) {
    const output = wrap();
    if (Buffer.byteLength(output) <= HOOK_OUTPUT_BYTES) return output;
    const longest = pointers.reduce((a, b) => (b.cut.length > a.cut.length ? b : a));
    const shorter = longest.cut.slice(0, Math.floor(longest.cut.length * 0.9)).trimEnd();
    if (shorter.length < Math.min(12, longest.words.length) || shorter === longest.cut) {
      pointers.pop();
      for (const p of pointers) p.cut = p.words;
    } else longest.cut = shorter;
  }
  return undefined;
}
