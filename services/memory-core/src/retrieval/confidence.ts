import type { Retriever } from "./fusion.js";
import type { Confidence } from "../records/types.js";

/**
 * How sure a hit is, from what the two retrievers saw:
 * - semantic: the cosine similarity against floors calibrated per embedding model (bench/ measures them);
 * - lexical: the share of the query's information the record holds — the idf of the query terms it holds over
 *   the idf of all of them, a term nowhere in the store counting as one held once (`informative`). Sharing a
 *   question's common words ("support", "group") while its specific ones (a name, "sourdough") are absent
 *   from the store is not support;
 * - agreement: high needs both retrievers to vouch for the record strongly. Similarity without lexical support
 *   is `low` (a weak embedder finds every chat about feelings similar to every other), or `medium` when the
 *   embedder is sure (similarity at the model's high floor) and nothing lexical contradicts it: no record holds
 *   the query's information at the lexical `low` floor or above, so the words point nowhere else.
 * A hit's own level is then made to follow its rank (`followingRank`): no hit ranks above one of higher
 * confidence. A response's confidence is its best hit's, which is its first; `min_confidence` keeps a prefix of
 * the ranking.
 */

interface Floors {
  high: number;
  medium: number;
  low: number;
}

const SEMANTIC_FLOORS: Record<string, Floors> = {
  // Universal Sentence Encoder lite: unrelated English sentences mostly score 0.05-0.35.
  "use-lite-512": { high: 0.6, medium: 0.48, low: 0.38 },
};
// OpenAI-compatible embedding models typically spread unrelated text higher.
const DEFAULT_SEMANTIC_FLOORS: Floors = { high: 0.75, medium: 0.62, low: 0.5 };

export interface ConfidenceTuning {
  /** Floors on `informative` (share of the query's idf held). */
  lexical: Floors;
  /** The semantic level at which similarity alone (no lexical support) reads as `low`. */
  semanticAlone: "low" | "medium" | "high";
  /**
   * Similarity alone at the semantic `high` level reads as `medium` when no record holds the query's information
   * at the lexical `low` floor (nothing lexical contradicts it).
   */
  semanticSure: boolean;
}

export const DEFAULT_CONFIDENCE: ConfidenceTuning = {
  lexical: { high: 0.9, medium: 0.7, low: 0.43 },
  semanticAlone: "medium",
  semanticSure: true,
};

const LEVELS: readonly Confidence[] = ["none", "low", "medium", "high"];
const rank = (c: Confidence) => LEVELS.indexOf(c);

export interface HitEvidence {
  matchedBy: readonly Retriever[];
  /** Cosine similarity, when the semantic retriever found the record. */
  similarity?: number;
  /** Share of the query's information held (LexicalHit.informative), when the lexical retriever found it. */
  informative?: number;
  /**
   * The largest share of the query's information any lexical candidate holds (0 when there is none); absent when
   * the lexical side was not asked (semantic mode), so that nothing is known to leave the words unclaimed.
   */
  bestInformative?: number;
}

const semanticFloors = (embeddingModel: string): Floors => SEMANTIC_FLOORS[embeddingModel] ?? DEFAULT_SEMANTIC_FLOORS;

/** The cosine similarity at which a record reaches `level` for this embedding model. */
export const semanticFloor = (embeddingModel: string, level: "low" | "medium" | "high") => semanticFloors(embeddingModel)[level];

export function hitConfidence(evidence: HitEvidence, embeddingModel: string, tuning: ConfidenceTuning = DEFAULT_CONFIDENCE): Confidence {
  const semantic = evidence.similarity === undefined ? "none" : level(evidence.similarity, semanticFloors(embeddingModel));
  const lexical = evidence.informative === undefined ? "none" : level(evidence.informative, tuning.lexical);
  if (lexical === "none") {
    // The embedder sure, and no record's words hold the query: a paraphrase, not noise.
    if (
      semantic === "high" &&
      tuning.semanticSure &&
      evidence.bestInformative !== undefined &&
      evidence.bestInformative < tuning.lexical.low
    )
      return "medium";
    return rank(semantic) >= rank(tuning.semanticAlone) ? "low" : "none";
  }
  if (semantic === "high" && rank(lexical) >= rank("medium")) return "high";
  if (rank(semantic) >= rank("medium") || lexical === "high") return "medium";
  return "low";
}

function level(value: number, floors: Floors): Confidence {
  if (value >= floors.high) return "high";
  if (value >= floors.medium) return "medium";
  if (value >= floors.low) return "low";
  return "none";
}

/**
 * The hits' levels, in rank order, made non-increasing: where a hit ranks above one of higher confidence, the run
 * of hits involved is pooled at its mean level, rounded (half up) — the closest non-increasing sequence, in least
 * squares, to the levels the evidence gave (pool adjacent violators). The ranking stays as the fusion made it:
 * ordering by confidence would rank by a coarser judgement than the fusion's (docs/benchmarks.md).
 */
export function followingRank(levels: readonly Confidence[]): Confidence[] {
  const pools: Array<{ sum: number; count: number }> = [];
  for (const level of levels) {
    pools.push({ sum: rank(level), count: 1 });
    while (pools.length > 1 && mean(pools.at(-2)!) < mean(pools.at(-1)!)) {
      const last = pools.pop()!;
      pools.at(-1)!.sum += last.sum;
      pools.at(-1)!.count += last.count;
    }
  }
  return pools.flatMap((pool) => Array<Confidence>(pool.count).fill(LEVELS[Math.round(mean(pool))]!));
}

const mean = (pool: { sum: number; count: number }) => pool.sum / pool.count;

export const atLeast = (confidence: Confidence, minimum: Confidence) => rank(confidence) >= rank(minimum);

export const bestOf = (confidences: readonly Confidence[]): Confidence =>
  confidences.reduce<Confidence>((best, c) => (rank(c) > rank(best) ? c : best), "none");
