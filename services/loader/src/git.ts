import { execFile } from "node:child_process";
import { gitTopLevel } from "./project.js";
import { folderName, repositoryName } from "./transcript/code-citation.js";

/**
 * What the loader asks of the repository it runs in, through the `git` command: every call is a child process
 * with a deadline (killed when it passes) and a bounded output, so a hook that asks git still never hangs its
 * harness. Paths are pathspecs taken literally (`GIT_LITERAL_PATHSPECS`): a file named `*.ts` means that file.
 */

/** More than any answer asked for here (a few hashes, branch names, a count): a larger one is an error. */
const MAX_OUTPUT_BYTES = 1024 * 1024;

export class GitTimeout extends Error {
  override name = "GitTimeout";
}

export interface GitOptions {
  /** The repository's top folder: where git runs. */
  cwd: string;
  /** The instant (`Date.now()` scale) by which the answer must have come. */
  deadline: number;
}

interface GitResult {
  code: number;
  stdout: string;
}

/** One git command. Exit codes are the caller's to read; a timeout throws `GitTimeout`, a missing git throws. */
export function git(args: string[], options: GitOptions): Promise<GitResult> {
  const timeout = Math.max(1, options.deadline - Date.now());
  return new Promise((resolve, reject) => {
    execFile(
      "git",
      args,
      {
        cwd: options.cwd,
        timeout,
        killSignal: "SIGKILL",
        maxBuffer: MAX_OUTPUT_BYTES,
        encoding: "utf8",
        env: { ...process.env, GIT_LITERAL_PATHSPECS: "1", GIT_OPTIONAL_LOCKS: "0", LC_ALL: "C" },
      },
      (error, stdout) => {
        if (!error) return resolve({ code: 0, stdout });
        const failure = error as NodeJS.ErrnoException & { killed?: boolean; code?: number | string };
        if (failure.killed) return reject(new GitTimeout(`git ${args[0]} gave no answer in time`));
        if (typeof failure.code === "number") return resolve({ code: failure.code, stdout });
        reject(new Error(`git ${args[0]} could not run: ${failure.message}`));
      },
    );
  });
}

/** The repository a hook runs in, as the hooks name it to Cairn. */
export interface Checkout {
  /** Where git runs: the repository's top folder, with the hook's deadline. */
  options: GitOptions;
  /** The branch checked out; undefined on a detached HEAD. */
  branch: string | undefined;
  /** The default branch (`defaultBranch`). */
  mainBranch: string | undefined;
}

/**
 * The git repository holding `project`, with its checked-out and default branches; undefined when the project is
 * in none. A git that cannot run or answer in time throws (`GitTimeout`): each hook decides what that means to it.
 */
export async function checkoutOf(project: string, deadline: number): Promise<Checkout | undefined> {
  const top = await gitTopLevel(project);
  if (!top) return undefined;
  const options = { cwd: top, deadline };
  const [branch, mainBranch] = await Promise.all([currentBranch(options), defaultBranch(options)]);
  return { options, branch, mainBranch };
}

/**
 * The repository's name as a citation gives it: from the URL of `origin`, else of the first remote (the URL's
 * path, never its credentials or host: `repositoryName`), else the name of its top folder.
 */
export async function repositoryOf(options: GitOptions): Promise<string | undefined> {
  const remotes = await git(["remote"], options);
  const names = remotes.code === 0 ? remotes.stdout.split("\n").filter(Boolean) : [];
  const remote = names.includes("origin") ? "origin" : names[0];
  const url = remote ? await git(["remote", "get-url", "--", remote], options) : undefined;
  return (url?.code === 0 && url.stdout.trim() ? repositoryName(url.stdout.trim()) : undefined) ?? folderName(options.cwd);
}

/** The branch checked out, or undefined on a detached HEAD. */
export async function currentBranch(options: GitOptions): Promise<string | undefined> {
  const { code, stdout } = await git(["symbolic-ref", "--quiet", "--short", "HEAD"], options);
  return code === 0 && stdout.trim() ? stdout.trim() : undefined;
}

/**
 * The repository's default branch: what `origin/HEAD` points at, else `init.defaultBranch`, `main` or `master`,
 * the first that exists as a local branch. Undefined when none does.
 */
export async function defaultBranch(options: GitOptions): Promise<string | undefined> {
  const [refs, configured] = await Promise.all([
    git(["for-each-ref", "--format=%(refname) %(symref)", "refs/heads/", "refs/remotes/origin/HEAD"], options),
    git(["config", "--get", "init.defaultBranch"], options),
  ]);
  const lines = refs.code === 0 ? refs.stdout.split("\n").filter(Boolean) : [];
  const originHead = lines.map((l) => l.split(" ")).find(([ref]) => ref === "refs/remotes/origin/HEAD")?.[1];
  if (originHead?.startsWith("refs/remotes/origin/")) return originHead.slice("refs/remotes/origin/".length);
  const local = new Set(lines.map((l) => l.split(" ")[0]!).filter((r) => r.startsWith("refs/heads/")));
  const candidates = [configured.code === 0 ? configured.stdout.trim() : "", "main", "master"];
  return candidates.find((name) => name && local.has(`refs/heads/${name}`));
}

/** True when `commit` names a commit this repository has. */
export async function hasCommit(commit: string, options: GitOptions): Promise<boolean> {
  if (!/^[0-9a-f]{4,64}$/.test(commit)) return false;
  return (await git(["cat-file", "-e", `${commit}^{commit}`], options)).code === 0;
}

export interface Moved {
  /** Commits on HEAD that touched the paths after the point asked. */
  commits: number;
  /** The newest of them, abbreviated. */
  newest: string;
}

/**
 * Whether commits on HEAD touched `paths` after `since`: after a commit (those not reachable from it) when it is
 * one this repository has, else after an instant (committer time, from the next whole second). Undefined when
 * none did, or when neither is given.
 */
export async function movedSince(
  paths: string[],
  since: { commit?: string | undefined; time?: string | undefined },
  options: GitOptions,
): Promise<Moved | undefined> {
  let range: string[];
  const at = since.time === undefined ? NaN : Date.parse(since.time);
  if (since.commit && (await hasCommit(since.commit, options))) range = [`${since.commit}..HEAD`];
  // Commit times have whole seconds: "after" is from the next second on, so a commit made in the same second
  // as the memory (the one it was written about, often) does not count as a later change.
  else if (!Number.isNaN(at)) range = [`--since=@${Math.floor(at / 1000) + 1}`, "HEAD"];
  else return undefined;
  const [count, newest] = await Promise.all([
    git(["rev-list", "--count", ...range, "--", ...paths], options),
    git(["log", "-1", "--format=%h", ...range, "--", ...paths], options),
  ]);
  const commits = count.code === 0 ? Number(count.stdout.trim()) : 0;
  if (!(commits > 0) || newest.code !== 0 || !newest.stdout.trim()) return undefined;
  return { commits, newest: newest.stdout.trim() };
}

/**
 * Whether `commit` is on `branch` already (`git merge-base --is-ancestor`), against the local branch, else
 * `origin/<branch>`. Undefined when git cannot tell (the commit or the branch is not here).
 */
export async function isMergedInto(commit: string, branch: string, options: GitOptions): Promise<boolean | undefined> {
  if (!(await hasCommit(commit, options))) return undefined;
  for (const ref of [`refs/heads/${branch}`, `refs/remotes/origin/${branch}`]) {
    const { code } = await git(["merge-base", "--is-ancestor", commit, ref], options);
    if (code === 0) return true;
    if (code === 1) return false;
  }
  return undefined;
}

/**
 * What a memory written on another branch (`on`, at `commit`) says to a caller: `on branch X, not merged` while
 * its commit is not on the default branch, nothing once it is, and `on branch X` alone when git cannot tell (no
 * commit named, or not in this clone).
 */
export async function branchNote(
  on: string | undefined,
  commit: string | undefined,
  mainBranch: string | undefined,
  options: GitOptions,
): Promise<string | undefined> {
  if (!on) return undefined;
  const merged = commit && mainBranch ? await isMergedInto(commit, mainBranch, options) : undefined;
  if (merged === true) return undefined;
  return `on branch ${on}${merged === false ? ", not merged" : ""}`;
}
