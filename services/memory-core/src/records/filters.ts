import type { Where } from "../store/chroma-store.js";

/** A value a filter reads: what a record's metadata holds under a key. */
export type FactValue = string | number | boolean;
/** A record's fields as filters read them: flat, by key. */
export type Facts = Record<string, FactValue>;

/**
 * A metadata filter said once and applied twice: as Chroma's `where` on the dense side and as a predicate
 * on the lexical side, so both retrievers see exactly the same records.
 */
export type Condition =
  { field: string; op: "eq"; value: string | number | boolean } | { field: string; op: "gte" | "gt" | "lt" | "lte"; value: number };

export function toWhere(conditions: readonly Condition[]): Where | undefined {
  const clauses: Where[] = conditions.map((c) => (c.op === "eq" ? { [c.field]: c.value } : { [c.field]: { [`$${c.op}`]: c.value } }));
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
