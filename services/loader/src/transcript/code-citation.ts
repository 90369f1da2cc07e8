import { posix } from "node:path";
import { CITATION_NAMES } from "@cairn/openapi/code-paths";
import type { AddMemoryRequest } from "./draft.js";
import { redact } from "./redact.js";

export type CodeCitation = NonNullable<AddMemoryRequest["code"]>;

/** The contract's `CodeCitation.paths.maxItems`: the most paths one memory cites. */
export const CITED_PATHS = 64;

/**
 * The citation a memory sends, every name redacted first (what is sent is what the writer's redaction would
 * leave, so the request it checks is the request memory-core stores): a name the contract would refuse, or one
 * redaction changed into something it would refuse, is left out rather than refusing the memory. Undefined when
 * no path is left (the contract's citation needs one).
 */
export function citationOf(raw: {
  repository?: string;
  branch?: string;
  commit?: string;
  paths: readonly string[];
}): CodeCitation | undefined {
  const paths = citedPaths(raw.paths.map((p) => redact(p)).filter(CITATION_NAMES.path));
  if (paths.length === 0) return undefined;
  const repository = raw.repository === undefined ? undefined : redact(raw.repository);
  const branch = raw.branch === undefined ? undefined : redact(raw.branch);
  return {
    ...(repository && CITATION_NAMES.repository(repository) ? { repository } : {}),
    ...(branch && CITATION_NAMES.branch(branch) ? { branch } : {}),
    ...(raw.commit && CITATION_NAMES.commit(raw.commit) && redact(raw.commit) === raw.commit ? { commit: raw.commit } : {}),
    paths: paths.map((path) => ({ path })),
  };
}

/**
 * At most CITED_PATHS paths for the files of one change, in name order. Up to that many, the files themselves.
 * Beyond, files are named by their folders, deepest folders first and, at one depth, the folders holding the
 * most of the files first, until the list fits: a commit that touched 300 files under `vendor/lib/` and 10 under
 * `src/` cites `vendor/lib/` and the 10 files. A folder holding a single entry is not named in its place (that
 * saves nothing). When even the top-level folders and files are too many, the CITED_PATHS of them holding the
 * most files are kept (ties by name).
 */
export function citedPaths(files: readonly string[]): string[] {
  let entries = new Map<string, number>([...new Set(files)].map((f) => [f, 1]));
  if (entries.size <= CITED_PATHS) return [...entries.keys()].sort(byName);
  const depth = (entry: string) => entry.replace(/\/$/, "").split("/").length;
  const deepest = Math.max(...[...entries.keys()].map(depth));
  for (let level = deepest - 1; level >= 1 && entries.size > CITED_PATHS; level--) {
    const groups = new Map<string, string[]>();
    for (const entry of entries.keys()) {
      if (depth(entry) <= level) continue;
      const folder = `${entry.split("/").slice(0, level).join("/")}/`;
      const group = groups.get(folder);
      if (group) group.push(entry);
      else groups.set(folder, [entry]);
    }
    const candidates = [...groups].filter(([, group]) => group.length > 1).sort(([a, x], [b, y]) => y.length - x.length || byName(a, b));
    const next = new Map(entries);
    for (const [folder, group] of candidates) {
      if (next.size <= CITED_PATHS) break;
      let count = 0;
      for (const entry of group) {
        count += next.get(entry)!;
        next.delete(entry);
      }
      next.set(folder, count);
    }
    entries = next;
  }
  const kept = [...entries].sort(([a, x], [b, y]) => y - x || byName(a, b)).slice(0, CITED_PATHS);
  return kept.map(([entry]) => entry).sort(byName);
}

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * A repository's name from its remote's URL: the URL's path (`acme/api` from `https://host/acme/api.git`,
 * `git@host:acme/api.git` or `ssh://git@host:22/acme/api`), never its scheme, credentials, host or port. A
 * remote that is a local path or a `file:` URL gives its folder's name. Characters the contract does not take
 * in a name become `-`; undefined when nothing is left.
 */
export function repositoryName(url: string): string | undefined {
  const text = url.trim().replace(/[?#].*$/, "");
  let path: string;
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(text);
  // scp-like `[user@]host:path`: a colon before any slash, and not a Windows drive (`C:\…`, `C:/…`).
  const scpLike = /^(?:[^@/]+@)?([^:/]+):(.*)$/.exec(text);
  if (scheme) {
    // The credentials run to the last `@` (a password may hold `/` and `@`): all of it goes, with the host and port.
    const rest = text.slice(scheme[0].length);
    const afterUser = rest.slice(rest.lastIndexOf("@") + 1);
    const slash = afterUser.indexOf("/");
    const host = slash < 0 ? afterUser : afterUser.slice(0, slash);
    const tail = slash < 0 ? "" : afterUser.slice(slash);
    path = host === "" || scheme[1]!.toLowerCase() === "file" ? posix.basename(tail.replace(/\/+$/, "")) : tail;
  } else if (scpLike && !/^[A-Za-z]$/.test(scpLike[1]!)) path = scpLike[2]!;
  else path = posix.basename(text.replace(/\\/g, "/").replace(/\/+$/, ""));
  return nameOf(path);
}

/** A folder's name as a repository's name (the fallback when a repository has no remote). */
export const folderName = (folder: string): string | undefined => nameOf(posix.basename(folder.replace(/\\/g, "/").replace(/\/+$/, "")));

function nameOf(path: string): string | undefined {
  const name = path
    .replace(/\/+$/, "")
    .replace(/\.git$/, "")
    .replace(/[^A-Za-z0-9._~/-]/g, "-")
    .replace(/\/{2,}/g, "/")
    .replace(/^\/+|\/+$/g, "")
    .slice(0, 200)
    .replace(/\/+$/, "");
  return name && name !== "." && name !== ".." ? name : undefined;
}
