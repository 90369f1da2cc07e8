export type Retriever = "lexical" | "semantic";

export interface RankedList {
  retriever: Retriever;
  ids: readonly string[];
  weight: number;
  /** This list's own k (default: the fusion's). A small k keeps this list's order at the top. */
  k?: number;
  /** Per entry, a factor on `weight` (how sure the retriever is of that entry). */
  weights?: readonly number[];
}

export interface Fused {
  id: string;
  score: number;
  matchedBy: Retriever[];
  /** 1-based rank in each list that holds the id. */
  ranks: Partial<Record<Retriever, number>>;
}

/**
 * Reciprocal rank fusion (Cormack et al. 2009): sum of weight / (k + rank) over the lists; best first. Each list
 * may have its own k and a weight per entry.
 */
export function reciprocalRankFusion(lists: readonly RankedList[], k = 60): Fused[] {
  const fused = new Map<string, Fused>();
  for (const list of lists) {
    list.ids.forEach((id, index) => {
      const entry = fused.get(id) ?? { id, score: 0, matchedBy: [], ranks: {} };
      entry.score += (list.weight * (list.weights?.[index] ?? 1)) / ((list.k ?? k) + index + 1);
      entry.matchedBy.push(list.retriever);
      entry.ranks[list.retriever] = index + 1;
      fused.set(id, entry);
    });
  }
  return [...fused.values()].sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
}

/**
 * The fused list with `head` (a list's first ids, in its order) first: that retriever's best hits keep their
 * places, and the others' votes re-rank what follows them. Scores stay as fused, so a head hit may score below
 * one after it.
 */
export function withHead(fused: Fused[], head: readonly string[]): Fused[] {
  if (head.length === 0) return fused;
  const byId = new Map(fused.map((f) => [f.id, f]));
  const first = head.flatMap((id) => byId.get(id) ?? []);
  const inHead = new Set(head);
  return [...first, ...fused.filter((f) => !inHead.has(f.id))];
}
