import type { LexicalTuning } from "../lexical/lexical-tuning.js";
import { DEFAULT_CONFIDENCE, type ConfidenceTuning } from "./confidence.js";

/**
 * The knobs of hybrid retrieval, in one place. The defaults are what bench/ measured best on the LoCoMo
 * development file (docs/benchmarks.md); they are not per-deployment settings.
 */
export interface RetrievalTuning extends LexicalTuning {
  /**
   * Reciprocal rank fusion: each retriever's weight, and k (optionally one per retriever: a small lexical k
   * keeps BM25's order at the top, so the weak dense vote re-ranks near-ties only); `similarityScaled`: a dense
   * entry weighs by how far its similarity stands above the noise floor. `lexicalHead`: the lexical list's first
   * hits keep the first places of a fused answer, in BM25's order (the dense vote re-ranks only below them).
   * `semanticPerHit`: the dense list enters the fusion with at most this many entries per asked hit (its
   * nearest, above the gate); all of the dense candidates still inform confidence. `weakLexical`: when no
   * lexical candidate holds `below` of the query's information (LexicalHit.informative), the query's words are
   * not the store's, and the dense list weighs `semantic` instead, gated at `gate` (default: `semanticGate`), and
   * no lexical head is kept.
   */
  fusion: {
    lexical: number;
    semantic: number;
    k: number;
    lexicalK?: number;
    semanticK?: number;
    similarityScaled?: boolean;
    lexicalHead?: number;
    semanticPerHit?: number;
    weakLexical?: { below: number; semantic: number; gate?: "low" | "medium" | "high" };
  };
  /** What confidence a hit reads (confidence.ts). */
  confidence: ConfidenceTuning;
  /**
   * The dense list that enters the fusion holds only records at least this confident (a calibrated cosine
   * floor): below it, nearest neighbours are noise that rank fusion would weigh like a real match.
   */
  semanticGate: "low" | "medium" | "high";
}

export const DEFAULT_TUNING: RetrievalTuning = {
  fusion: {
    lexical: 1,
    semantic: 0.1,
    k: 60,
    lexicalK: 20,
    semanticK: 5,
    lexicalHead: 3,
    semanticPerHit: 1,
    weakLexical: { below: 0.05, semantic: 0.1, gate: "low" },
  },
  confidence: DEFAULT_CONFIDENCE,
  semanticGate: "medium",
  turnFields: { agent: 2, prompt: 0.5, thought: 1, response: 1, labels: 1 },
  summaryFields: { title: 2, summary: 1, details: 1, agents: 1 },
  neighbourShare: 0.3,
  feedback: { hits: 10, terms: 5, minHits: 2, weight: 0.3 },
  bm25: { k: 1.2, b: 0.7, d: 0.5, idfCoordination: true },
};
