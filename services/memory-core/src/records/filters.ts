import type { Where } from "../store/chroma-store.js";
import { citesAny } from "@cairn/openapi/code-paths";
import { CITED_PATHS_FIELD, splitCited } from "./code-citations.js";

/** A value a filter reads: what a record's metadata holds under a key. */
export type FactValue = string | number | boolean;
/** A record's fields as filters read them: flat, by key. */
export type Facts = Record<string, FactValue>;

/**
 * A metadata filter said once and applied twice: as Chroma's `where` on the dense side and as a predicate
 * on the lexical side, so both retrievers see exactly the same records.
 */
export type Condition =
  | { field: string; op: "eq"; value: string | number | boolean }
  | { field: string; op: "gte" | "gt" | "lt" | "lte"; value: number }
  | CitesCondition;

/**
 * The record cites one of these code paths (code-citations.ts has the rules). Chroma cannot judge it (its
 * metadata holds the cited paths as one string): the dense side judges it on the lexical index's facts.
 */
export interface CitesCondition {
  field: typeof CITED_PATHS_FIELD;
  op: "cites";
  paths: readonly string[];
}

export const citesCondition = (paths: readonly string[]): CitesCondition => ({ field: CITED_PATHS_FIELD, op: "cites", paths });

/** Chroma's `where` for the conditions Chroma can judge (all but `cites`, which the caller judges on what comes back). */
export function toWhere(conditions: readonly Condition[]): Where | undefined {
  const clauses = conditions.flatMap((c): Where[] =>
    c.op === "cites" ? [] : c.op === "eq" ? [{ [c.field]: c.value }] : [{ [c.field]: { [`$${c.op}`]: c.value } }],
  );
  if (clauses.length === 0) return undefined;
  if (clauses.length === 1) return clauses[0];
  return { $and: clauses };
}

export function matches(facts: Facts, conditions: readonly Condition[]): boolean {
  // A plain loop: lexical ranking asks this of every contender for a page.
  for (const c of conditions) if (!holds(facts[c.field], c)) return false;
  return true;
}

export function holds(value: FactValue | undefined, c: Condition): boolean {
  if (c.op === "eq") return value === c.value;
  if (c.op === "cites") return citesAny(splitCited(value), c.paths);
  if (typeof value !== "number") return false;
  switch (c.op) {
    case "gte":
      return value >= c.value;
    case "gt":
      return value > c.value;
    case "lt":
      return value < c.value;
    case "lte":
      return value <= c.value;
  }
}
