import type { Retriever } from "./fusion.js";
import type { Confidence } from "../records/types.js";

/**
 * How sure a hit is, from what the two retrievers saw:
 * - semantic: the cosine similarity against floors calibrated per embedding model (bench/ measures them);
 * - lexical: the share of the query's information the record holds — the idf of the query terms it holds over
 *   the idf of all of them, a term nowhere in the store counting as one held once (`informative`). Sharing a
 *   question's common words ("support", "group") while its specific ones (a name, "sourdough") are absent
 *   from the store is not support;
 * - agreement: high needs both retrievers to vouch for the record strongly; similarity without lexical
 *   support is at most `low` (a weak embedder finds every chat about feelings similar to every other).
 * A response's confidence is its best hit's; `min_confidence` drops hits below a level.
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
}

export const DEFAULT_CONFIDENCE: ConfidenceTuning = {
  lexical: { high: 0.9, medium: 0.7, low: 0.5 },
  semanticAlone: "medium",
};

const LEVELS: readonly Confidence[] = ["none", "low", "medium", "high"];
const rank = (c: Confidence) => LEVELS.indexOf(c);

export interface HitEvidence {
  matchedBy: readonly Retriever[];
  /** Cosine similarity, when the semantic retriever found the record. */
  similarity?: number;
  /** Share of the query's information held (LexicalHit.informative), when the lexical retriever found it. */
  informative?: number;
}

const semanticFloors = (embeddingModel: string): Floors => SEMANTIC_FLOORS[embeddingModel] ?? DEFAULT_SEMANTIC_FLOORS;

/** The cosine similarity at which a record reaches `level` for this embedding model. */
export const semanticFloor = (embeddingModel: string, level: "low" | "medium" | "high") => semanticFloors(embeddingModel)[level];

export function hitConfidence(evidence: HitEvidence, embeddingModel: string, tuning: ConfidenceTuning = DEFAULT_CONFIDENCE): Confidence {
  const semantic = evidence.similarity === undefined ? "none" : level(evidence.similarity, semanticFloors(embeddingModel));
  const lexical = evidence.informative === undefined ? "none" : level(evidence.informative, tuning.lexical);
  // No lexical support: similarity alone is at most low.
  if (lexical === "none") return rank(semantic) >= rank(tuning.semanticAlone) ? "low" : "none";
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

export const atLeast = (confidence: Confidence, minimum: Confidence) => rank(confidence) >= rank(minimum);

export const bestOf = (confidences: readonly Confidence[]): Confidence =>
  confidences.reduce<Confidence>((best, c) => (rank(c) > rank(best) ? c : best), "none");
