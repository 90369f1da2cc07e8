import { spawn } from "node:child_process";
import { stat } from "node:fs/promises";
import { CliError, usageError } from "../io.js";
import { citationOf, folderName, repositoryName } from "@cairn/loader/transcript/code-citation";
import { finalize, keyOf, ticketsIn, type AddMemoryRequest, type MemoryDraft } from "./draft.js";

/** One commit as `git log` tells it. */
export interface Commit {
  hash: string;
  parents: string[];
  authorName: string;
  authorEmail: string;
  authorDate: string;
  committedAt: string;
  subject: string;
  body: string;
  /** What the commit touched: `path` is where the file is after it (a rename's new path; `from`, its old one). */
  files: Array<{ path: string; from?: string; added: number | null; deleted: number | null }>;
}

/**
 * A commit that undoes another: the reverted commit's memory is marked outdated with this reason. The reason
 * names the revert by its id alone, never by its message: a reason is kept in the audit log, which holds no
 * memory's text (forget_memory cannot take it back from there), and the message is the revert's own memory.
 */
export interface Revert {
  revert: string;
  reverted: string;
  reason: string;
}

export interface GitImportPlan {
  /** The repository's identity: the root commit of the imported branch's first-parent line. */
  root: string;
  tip: string;
  commits: Array<{ hash: string; request: AddMemoryRequest }>;
  reverts: Revert[];
  /** Reverted commits outside `--since` that were added so that their reverts can mark them. */
  addedForReverts: number;
}

/** Files listed one by one in a memory; the rest are counted. */
const LISTED_FILES = 200;
const SEP = "\x1f";
const START = "\x1e";
const FORMAT = `${START}%H${SEP}%P${SEP}%an${SEP}%ae${SEP}%aI${SEP}%cI${SEP}%B${SEP}`;

/**
 * Reads the history of a branch into the memories it becomes: all of it is read and checked before anything is
 * written, so a bad path, branch or date stores nothing.
 */
export async function planGitImport(repo: string, options: { since?: string; branch?: string }): Promise<GitImportPlan> {
  const info = await stat(repo).catch(() => undefined);
  if (!info) throw usageError(`--repo: ${repo} does not exist`);
  if (!info.isDirectory()) throw usageError(`--repo: ${repo} is not a directory, so not a git repository`);
  const git = (args: string[], input?: string) => runGit(repo, args, input);
  try {
    await git(["rev-parse", "--git-dir"]);
  } catch (error) {
    if ((error as CliError).exitCode === 1 && /not installed|cannot run/.test((error as Error).message)) throw error;
    throw usageError(`--repo: ${repo} is not a git repository`);
  }
  const since = options.since === undefined ? undefined : sinceDate(options.since);
  const branch = options.branch ?? "HEAD";
  let tip: string;
  try {
    tip = (await git(["rev-parse", "--verify", "--quiet", "--end-of-options", `${branch}^{commit}`])).trim();
  } catch {
    throw options.branch === undefined
      ? new CliError(`--repo: ${repo} has no commits yet`, 2)
      : usageError(`--branch: ${repo} has no branch or commit "${branch}"`);
  }
  const root = (await git(["rev-list", "--max-parents=0", "--first-parent", tip])).trim().split("\n").at(-1)!;
  const where = await whereFrom(git, repo, branch);

  const commits = parseLog(await git(logArgs([...(since ? [`--since=${since}`] : []), "--reverse", tip])));
  const known = new Map(commits.map((c) => [c.hash, c]));

  // Every hash a message names, resolved once: reverted commits and the commits a fix names.
  const named = new Set<string>();
  for (const c of commits) for (const h of hashesIn(c.subject + "\n" + c.body)) named.add(h);
  const resolved = await resolveCommits(git, [...named]);

  const revertsOf = new Map<string, string[]>();
  const missing = new Set<string>();
  for (const c of commits) {
    const reverted = [...c.body.matchAll(/This reverts commit ([0-9a-f]{7,64})/g)]
      .map((m) => resolved.get(m[1]!))
      .filter((h): h is string => h !== undefined && h !== c.hash);
    if (reverted.length === 0) continue;
    revertsOf.set(c.hash, [...new Set(reverted)]);
    for (const h of reverted) if (!known.has(h)) missing.add(h);
  }
  // A revert inside the range marks its commit even when that commit is older than --since: it is imported too.
  const older = missing.size > 0 ? parseLog(await git(logArgs(["--no-walk=sorted", "--reverse", ...missing]))) : [];
  for (const c of older) known.set(c.hash, c);
  const ordered = [...older, ...commits];

  const reverts: Revert[] = [];
  const planned = ordered.map((c) => {
    const reverted = revertsOf.get(c.hash) ?? [];
    const fixes = isFix(c)
      ? [...hashesIn(c.subject + "\n" + c.body)]
          .map((h) => resolved.get(h))
          .filter((h): h is string => h !== undefined && h !== c.hash && !reverted.includes(h))
      : [];
    for (const h of reverted) {
      reverts.push({ revert: c.hash, reverted: h, reason: `Reverted by commit ${c.hash.slice(0, 12)} (the revert's memory says why).` });
    }
    return { hash: c.hash, request: finalize(commitDraft(c, root, where, reverted, [...new Set(fixes)])) };
  });
  return { root, tip, commits: planned, reverts, addedForReverts: older.length };
}

function commitDraft(c: Commit, root: string, where: Where, reverted: string[], fixes: string[]): MemoryDraft {
  const message = `${c.subject}\n${c.body}`;
  const tags = ["git"];
  if (c.parents.length > 1) tags.push("merge");
  if (reverted.length > 0) tags.push("revert");
  if (fixes.length > 0 || isFix(c)) tags.push("fix");
  const files = [...c.files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const code = citationOf({ ...where, commit: c.hash, paths: files.map((f) => f.path) });
  // What a reader before an edit looks for (the edit hook asks for attempts and lessons): a revert records an
  // approach tried and dropped; a fix (its subject begins so, or it names the commit it fixes) what went wrong and how
  // it was mended, unless it swept over many files, where it is a lesson about none of them. Others are turns.
  const mends = (fixes.length > 0 || FIX_SUBJECT.test(c.subject)) && files.length <= SWEEP_FILES;
  const kind = reverted.length > 0 ? "attempt" : mends ? "lesson" : undefined;
  return {
    // A session per repository and day: the day's commits read together, as an agent's session would.
    session_id: `git:${root.slice(0, 12)}:${c.committedAt.slice(0, 10)}`,
    idempotency_key: keyOf("git", root, c.hash),
    prompt: c.subject || "(empty commit message)",
    thought: c.body || "(the commit message has no body)",
    response: changeSummary(c, files, reverted, fixes),
    occurred_at: c.committedAt,
    author: c.authorEmail ? `${c.authorName} <${c.authorEmail}>` : c.authorName,
    tags,
    refs: [c.hash, ...reverted.map((h) => `reverts:${h}`), ...fixes.map((h) => `fixes:${h}`), ...ticketsIn(message), ...files.map(named)],
    ...(code ? { code } : {}),
    ...(kind ? { kind } : {}),
  };
}

/** A file as the summary and `refs` name it: a rename with its old path. */
const named = (f: Commit["files"][number]) => (f.from === undefined ? f.path : `${f.path} (renamed from ${f.from})`);

/** Where the imported commits come from, as their citations name it. */
interface Where {
  repository?: string;
  branch?: string;
}

/**
 * The repository's name and the branch imported. The name comes from the URL of the branch's remote (its
 * upstream's, else `origin`, else the first remote), else the name of the repository's top folder. The branch is
 * the branch `--branch` (or HEAD) names, a remote-tracking one by its name on the remote; a commit, a tag or a
 * detached HEAD names none.
 */
async function whereFrom(git: (args: string[]) => Promise<string>, repo: string, branch: string): Promise<Where> {
  const quiet = (args: string[]) =>
    git(args).then(
      (out) => out.trim(),
      () => "",
    );
  const remotes = (await quiet(["remote"])).split("\n").filter(Boolean);
  const ref = (await quiet(["rev-parse", "--symbolic-full-name", "--end-of-options", branch]))
    .split("\n")
    .find((line) => line.startsWith("refs/"));
  let name: string | undefined;
  let remote: string | undefined;
  if (ref?.startsWith("refs/heads/")) {
    name = ref.slice("refs/heads/".length);
    remote = (await quiet(["config", "--get", `branch.${name}.remote`])) || undefined;
  } else if (ref?.startsWith("refs/remotes/")) {
    const rest = ref.slice("refs/remotes/".length);
    remote = remotes.filter((r) => rest.startsWith(`${r}/`)).sort((a, b) => b.length - a.length)[0];
    if (remote) name = rest.slice(remote.length + 1);
  }
  if (!remote || !remotes.includes(remote)) remote = remotes.includes("origin") ? "origin" : remotes[0];
  const url = remote ? await quiet(["remote", "get-url", "--", remote]) : "";
  const top = (await quiet(["rev-parse", "--show-toplevel"])) || repo;
  const repository = (url ? repositoryName(url) : undefined) ?? folderName(top);
  return { ...(repository ? { repository } : {}), ...(name && name !== "HEAD" ? { branch: name } : {}) };
}

function changeSummary(c: Commit, files: Commit["files"], reverted: string[], fixes: string[]): string {
  const added = files.reduce((n, f) => n + (f.added ?? 0), 0);
  const deleted = files.reduce((n, f) => n + (f.deleted ?? 0), 0);
  const lines = [
    `Commit ${c.hash} by ${c.authorName}, authored ${c.authorDate}.`,
    files.length === 0
      ? c.parents.length > 1
        ? `A merge of ${c.parents.length} parents (${c.parents.map((p) => p.slice(0, 12)).join(", ")}).`
        : "No file changed."
      : `${files.length} ${files.length === 1 ? "file" : "files"} changed, +${added} -${deleted}${c.parents.length > 1 ? ` (a merge of ${c.parents.length} parents)` : ""}:`,
  ];
  for (const f of files.slice(0, LISTED_FILES))
    lines.push(f.added === null ? `${named(f)} (binary)` : `${named(f)} +${f.added} -${f.deleted}`);
  if (files.length > LISTED_FILES) lines.push(`... and ${files.length - LISTED_FILES} more files`);
  for (const h of reverted) lines.push(`Reverts commit ${h}.`);
  for (const h of fixes) lines.push(`Fixes commit ${h}.`);
  return lines.join("\n");
}

const isFix = (c: Commit) => /\b(?:bug|hot)?fix(?:e[sd]|ing)?\b/i.test(`${c.subject}\n${c.body}`);
/** A subject that says the commit is a fix: `fix: …`, `fix(auth): …`, `Fix the race …`, `Hotfix …`, `Fixes #12`. */
const FIX_SUBJECT = /^(?:[a-z]+(?:\([^)]*\))?!?:\s*)?(?:bug|hot)?fix(?:e[sd]|ing)?\b/i;
/** A fix touching more files than this is a sweep (a lint, a rename, a batch of mends), not a lesson about each file. */
const SWEEP_FILES = 12;

/** Hex runs that may name a commit (at least one letter, so plain numbers are not taken for hashes). */
function hashesIn(text: string): Set<string> {
  return new Set([...text.matchAll(/\b[0-9a-f]{7,64}\b/g)].map((m) => m[0]).filter((h) => /[a-f]/.test(h)));
}

/** Full hashes of the names that are commits of the repository, in one `git cat-file --batch-check`. */
async function resolveCommits(git: (args: string[], input?: string) => Promise<string>, names: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (names.length === 0) return out;
  const answer = (await git(["cat-file", "--batch-check=%(objectname) %(objecttype)"], names.map((n) => `${n}^{commit}`).join("\n") + "\n"))
    .split("\n")
    .filter(Boolean);
  names.forEach((name, i) => {
    const [hash, type] = (answer[i] ?? "").split(" ");
    if (type === "commit" && hash && /^[0-9a-f]{40,64}$/.test(hash)) out.set(name, hash);
  });
  return out;
}

const logArgs = (rest: string[]) => [
  "-c",
  "log.showSignature=false",
  "log",
  "-z",
  "--numstat",
  // Rename detection spelled out, so that the same commit reads the same whatever the local configuration.
  "-M",
  "--no-color",
  "--no-mailmap",
  "--encoding=UTF-8",
  `--format=${FORMAT}`,
  ...rest,
  "--",
];

/** `git log -z --numstat` in FORMAT: a record per commit, its numstat entries NUL-terminated after the header. */
export function parseLog(output: string): Commit[] {
  const commits: Commit[] = [];
  for (const record of output.split(START).slice(1)) {
    const parts = record.split(SEP);
    if (parts.length < 8 || !/^[0-9a-f]{40,64}$/.test(parts[0]!)) throw new CliError("git log gave output this importer cannot read");
    const [hash, parents, authorName, authorEmail, authorDate, committedAt] = parts as [string, string, string, string, string, string];
    const message = parts.slice(6, -1).join(SEP).replace(/\r\n/g, "\n").trim();
    const newline = message.indexOf("\n");
    const subject = (newline < 0 ? message : message.slice(0, newline)).trim();
    const body = newline < 0 ? "" : message.slice(newline + 1).trim();
    commits.push({
      hash,
      parents: parents.split(" ").filter(Boolean),
      authorName,
      authorEmail,
      authorDate: isoDate(authorDate),
      committedAt: isoDate(committedAt),
      subject,
      body,
      files: parseNumstat(parts.at(-1)!),
    });
  }
  return commits;
}

function parseNumstat(text: string): Commit["files"] {
  const tokens = text.split("\0");
  const files: Commit["files"] = [];
  for (let i = 0; i < tokens.length; i++) {
    const m = /^\n?(\d+|-)\t(\d+|-)\t([\s\S]*)$/.exec(tokens[i]!);
    if (!m) continue;
    const counts = { added: m[1] === "-" ? null : Number(m[1]), deleted: m[2] === "-" ? null : Number(m[2]) };
    // A rename: its path is empty and the old and new paths follow as two more entries.
    if (m[3] === "") {
      const from = tokens[++i] ?? "";
      const to = tokens[++i] ?? "";
      files.push({ path: to, from, ...counts });
    } else files.push({ path: m[3]!, ...counts });
  }
  return files;
}

const isoDate = (text: string) => {
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? text : new Date(ms).toISOString();
};

/** `--since` as an RFC 3339 date or day: git would read almost anything as a date, and a typo would import nothing. */
function sinceDate(raw: string): string {
  const ms = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/.test(raw.trim())
    ? Date.parse(raw.trim())
    : NaN;
  if (Number.isNaN(ms)) throw usageError(`--since must be a date such as 2026-11-01 or 2026-11-01T12:00:00Z, not "${raw}"`);
  return new Date(ms).toISOString();
}

/** git as a child process, arguments as a list (never a shell string); stdout, or a CliError with git's first line. */
function runGit(repo: string, args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", ["-C", repo, ...args], { stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.on("error", (error: NodeJS.ErrnoException) =>
      reject(
        new CliError(
          error.code === "ENOENT" ? "git is not installed (the git importer runs git)" : `cannot run git (${error.code ?? error.message})`,
        ),
      ),
    );
    child.on("close", (code) => {
      if (code === 0) resolve(Buffer.concat(out).toString("utf8"));
      else
        reject(
          new CliError(
            `git ${args.find((a) => !a.startsWith("-") && !a.includes("=")) ?? ""} failed: ${firstLine(Buffer.concat(err).toString("utf8"))}`,
          ),
        );
    });
    child.stdin.on("error", () => undefined);
    child.stdin.end(input ?? "");
  });
}

const firstLine = (text: string) => text.trim().split("\n")[0] || "no message";
