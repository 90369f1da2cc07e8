import { citesAny, pathOfRef } from "@cairn/openapi/code-paths";
import type { CodeCitation } from "./types.js";

/**
 * The code paths a memory cites, as memory-core stores them. A memory cites the paths its `code` names and its
 * `refs` that are repository-relative paths (`pathOfRef`); how a path asked about matches them is the contract
 * package's rule (`@cairn/openapi/code-paths`). The cited paths are stored with the turn, one per line
 * (`CITED_PATHS_FIELD`), so that the lexical index finds a path's memories without reading their lists.
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

/** The cited paths a caller asked about first, then the rest, in their order. */
export function askedFirst(cited: readonly string[], asked: readonly string[]): string[] {
  if (asked.length === 0) return [...cited];
  const first = cited.filter((c) => citesAny([c], asked));
  return [...first, ...cited.filter((c) => !first.includes(c))];
}
