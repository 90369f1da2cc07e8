import { pathOfRef } from "@cairn/openapi/code-paths";
import type { CodeCitation } from "./types.js";

export { pathOfRef };

/**
 * The code paths a memory cites, and how a path asked about matches them.
 *
 * A memory cites a path when its `code` names it, or when one of its `refs` is a repository-relative path
 * (`src/auth/refresh.ts`, `README.md`, `src/auth/`; a line suffix such as `:42` or `#L40-58` is dropped). A
 * folder is cited with a trailing `/`. The cited paths are stored with the turn, one per line
 * (`CITED_PATHS_FIELD`), so that the lexical index finds a path's memories without reading their lists.
 *
 * A path asked about, Q, matches a memory citing C when:
 * - C is Q;
 * - Q names a folder (with or without its trailing `/`) and C lies under it;
 * - C is the folder Q lies directly in (a memory about `src/auth/` is about each of its files).
 * An ancestor folder further up does not match: a memory citing `src/` would otherwise answer for every file.
 */

/** The metadata field holding a turn's cited paths, one per line. */
export const CITED_PATHS_FIELD = "cited_paths";

/** Paths as a memory's `code` and `refs` cite them, normalised, each once, in the order given. */
export function citedPathsOf(code: CodeCitation | undefined, refs: readonly string[]): string[] {
  const cited = new Set<string>();
  for (const entry of code?.paths ?? []) cited.add(entry.path);
  for (const ref of refs) {
    const path = pathOfRef(ref);
    if (path !== undefined) cited.add(path);
  }
  return [...cited];
}

/** Cited paths as stored: one per line (a path holds no control character). */
export const joinCited = (paths: readonly string[]): string => paths.join("\n");
export const splitCited = (stored: unknown): string[] => (typeof stored === "string" && stored !== "" ? stored.split("\n") : []);

/** The folder a path lies directly in, with its trailing `/`; undefined at the repository's top. */
function folderOf(path: string): string | undefined {
  const trimmed = path.endsWith("/") ? path.slice(0, -1) : path;
  const slash = trimmed.lastIndexOf("/");
  return slash < 0 ? undefined : trimmed.slice(0, slash + 1);
}

/**
 * The keys an index files a cited path under: the path itself (`=`), and each folder above it as a folder that
 * holds something cited (`<`). A path asked about is looked up by `lookupKeys`.
 */
export function citationKeys(cited: string): string[] {
  const keys = [`=${cited}`];
  for (let folder = folderOf(cited); folder !== undefined; folder = folderOf(folder)) keys.push(`<${folder}`);
  return keys;
}

/** The keys whose memories match a path asked about (see the rules above). */
export function lookupKeys(asked: string): string[] {
  const folder = asked.endsWith("/") ? asked : `${asked}/`;
  const keys = [`=${asked}`, `<${folder}`];
  if (!asked.endsWith("/")) keys.push(`=${folder}`);
  const parent = folderOf(asked);
  if (parent !== undefined) keys.push(`=${parent}`);
  return keys;
}

/** Whether a memory citing `cited` matches any of the paths asked about: the rules above, without an index. */
export function citesAny(cited: readonly string[], asked: readonly string[]): boolean {
  if (cited.length === 0) return false;
  for (const q of asked) {
    const wanted = new Set(lookupKeys(q));
    for (const c of cited) for (const key of citationKeys(c)) if (wanted.has(key)) return true;
  }
  return false;
}

/** The cited paths a caller asked about first, then the rest, in their order. */
export function askedFirst(cited: readonly string[], asked: readonly string[]): string[] {
  if (asked.length === 0) return [...cited];
  const first = cited.filter((c) => citesAny([c], asked));
  return [...first, ...cited.filter((c) => !first.includes(c))];
}
