import { execFileSync } from "node:child_process";

/**
 * Real git on a test repository, as one author, with nothing from the machine's or the user's git config (HOME is
 * the test's own directory). `date`, when given, is each commit's author and committer date.
 */
export function gitIn(repo: string, home: string, date?: () => string | undefined): (...args: string[]) => string {
  return (...args) => {
    const at = date?.();
    return execFileSync("git", ["-C", repo, ...args], {
      encoding: "utf8",
      env: {
        PATH: process.env.PATH ?? "",
        HOME: home,
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_AUTHOR_NAME: "Ada Lovelace",
        GIT_AUTHOR_EMAIL: "ada@example.com",
        GIT_COMMITTER_NAME: "Ada Lovelace",
        GIT_COMMITTER_EMAIL: "ada@example.com",
        ...(at ? { GIT_AUTHOR_DATE: at, GIT_COMMITTER_DATE: at } : {}),
      },
    }).trim();
  };
}
