import { stat } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";

/**
 * The project a loader run belongs to, so that `--index-dir` and `--target` mean the same folder whatever the
 * working directory a harness starts a hook in. In order: `--project DIR`; `$CLAUDE_PROJECT_DIR` (Claude Code
 * sets it for every hook); the git repository holding the hook JSON's `cwd` (Claude Code and Codex send it);
 * the git repository holding the working directory; the working directory itself.
 */
export async function findProject(options: {
  flag: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  hookCwd: string | undefined;
  cwd: string;
}): Promise<string> {
  if (options.flag) return resolve(options.cwd, options.flag);
  const fromHarness = options.env.CLAUDE_PROJECT_DIR?.trim();
  if (fromHarness) return resolve(options.cwd, fromHarness);
  for (const start of [options.hookCwd, options.cwd]) {
    if (!start) continue;
    const top = await gitTopLevel(resolve(options.cwd, start));
    if (top) return top;
  }
  return options.cwd;
}

/** The nearest folder at or above `dir` that holds `.git` (a folder, or the file of a worktree). */
export async function gitTopLevel(dir: string): Promise<string | undefined> {
  let current = dir;
  for (;;) {
    if (
      await stat(join(current, ".git")).then(
        () => true,
        () => false,
      )
    )
      return current;
    const parent = dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

/** The `cwd` field of a hook's JSON input, when there is one. */
export function hookCwd(stdin: string): string | undefined {
  try {
    const cwd = (JSON.parse(stdin) as { cwd?: unknown }).cwd;
    return typeof cwd === "string" && cwd.length > 0 ? cwd : undefined;
  } catch {
    return undefined;
  }
}
