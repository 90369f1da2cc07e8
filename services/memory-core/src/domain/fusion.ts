export type Retriever = "lexical" | "semantic";

export interface RankedList {
  retriever: Retriever;
  ids: readonly string[];
  weight: number;
}

export interface Fused {
  id: string;
  score: number;
  matchedBy: Retriever[];
  /** 1-based rank in each list that holds the id. */
  ranks: Partial<Record<Retriever, number>>;
}

/** Reciprocal rank fusion (Cormack et al. 2009): sum of weight / (k + rank) over the lists; best first. */
export function reciprocalRankFusion(lists: readonly RankedList[], k = 60): Fused[] {
  const fused = new Map<string, Fused>();
  for (const list of lists) {
    list.ids.forEach((id, index) => {
      const entry = fused.get(id) ?? { id, score: 0, matchedBy: [], ranks: {} };
      entry.score += list.weight / (k + index + 1);
      entry.matchedBy.push(list.retriever);
      entry.ranks[list.retriever] = index + 1;
      fused.set(id, entry);
    });
  }
  return [...fused.values()].sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
}
