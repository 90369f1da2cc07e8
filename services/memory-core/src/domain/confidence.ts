import type { Retriever } from "./fusion.js";
import type { Confidence } from "./types.js";

/**
 * How sure a hit is, from what the two retrievers saw:
 * - semantic: the cosine similarity against floors calibrated per embedding model (bench/ measures them);
 * - lexical: the share of the query's terms the record holds (coverage);
 * - agreement: high needs both retrievers to vouch for the record strongly.
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
const COVERAGE_FLOORS: Floors = { high: 1, medium: 0.75, low: 0.4 };

const LEVELS: readonly Confidence[] = ["none", "low", "medium", "high"];
const rank = (c: Confidence) => LEVELS.indexOf(c);

export interface HitEvidence {
  matchedBy: readonly Retriever[];
  /** Cosine similarity, when the semantic retriever found the record. */
  similarity?: number;
  /** Share of query terms held, when the lexical retriever found the record. */
  coverage?: number;
}

const semanticFloors = (embeddingModel: string): Floors => SEMANTIC_FLOORS[embeddingModel] ?? DEFAULT_SEMANTIC_FLOORS;

/** The cosine similarity at which a record reaches `level` for this embedding model. */
export const semanticFloor = (embeddingModel: string, level: "low" | "medium" | "high") =>
  semanticFloors(embeddingModel)[level];

export function hitConfidence(evidence: HitEvidence, embeddingModel: string): Confidence {
  const semantic =
    evidence.similarity === undefined ? "none" : level(evidence.similarity, semanticFloors(embeddingModel));
  const lexical = evidence.coverage === undefined ? "none" : level(evidence.coverage, COVERAGE_FLOORS);
  const both = evidence.matchedBy.length > 1;
  if (both && semantic === "high" && rank(lexical) >= rank("medium")) return "high";
  if (both && rank(semantic) >= rank("medium") && rank(lexical) >= rank("low")) return "medium";
  if (semantic === "high" || lexical === "high") return "medium";
  return rank(semantic) >= rank("low") || rank(lexical) >= rank("low") ? "low" : "none";
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
