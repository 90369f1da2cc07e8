import type { Bm25Params } from "./bm25-index.js";

/** The lexical side's knobs (part of the retrieval tuning, retrieval/retrieval-tuning.ts, where the defaults are). */
export interface LexicalTuning {
  /** How much a match in each field of a turn counts for BM25. */
  turnFields: { agent: number; prompt: number; thought: number; response: number; labels: number };
  summaryFields: { title: number; summary: number; details: number; agents: number };
  /**
   * Turn context: a turn's lexical score gains this share of its best neighbour's (the turns just before and
   * after it in its session), so that an answer is found beside the question it answers.
   */
  neighbourShare: number;
  /**
   * Pseudo-relevance feedback on turns (RM3-like): the first lexical pass's best `hits` lend up to `terms` of
   * their distinctive terms (held by at least `minHits` of them), the best weighing `weight`, to a second
   * pass. 0 terms: one pass.
   */
  feedback: { hits: number; terms: number; minHits: number; weight: number };
  /** BM25+ parameters: term-frequency saturation k, length normalisation b, lower bound d. */
  bm25: Bm25Params;
}
