import type { Retriever } from "./fusion.js";
import type { Confidence } from "./types.js";

/**
 * How sure a hit is, from what the two retrievers saw:
 * - semantic: the cosine similarity against floors calibrated per embedding model (bench/ measures them);
 * - lexical: the share of the query's terms the record holds;
 * - agreement: a record both retrievers found is raised one level.
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
const COVERAGE_FLOORS: Floors = { high: 1.01, medium: 0.75, low: 0.4 };

const LEVELS: readonly Confidence[] = ["none", "low", "medium", "high"];
const rank = (c: Confidence) => LEVELS.indexOf(c);

export interface HitEvidence {
  matchedBy: readonly Retriever[];
  /** Cosine similarity, when the semantic retriever found the record. */
  similarity?: number;
  /** Share of query terms held, when the lexical retriever found the record. */
  coverage?: number;
}

export function hitConfidence(evidence: HitEvidence, embeddingModel: string): Confidence {
  const semantic =
    evidence.similarity === undefined ? "none" : level(evidence.similarity, SEMANTIC_FLOORS[embeddingModel] ?? DEFAULT_SEMANTIC_FLOORS);
  const lexical = evidence.coverage === undefined ? "none" : level(evidence.coverage, COVERAGE_FLOORS);
  const best = Math.max(rank(semantic), rank(lexical));
  const agreed = evidence.matchedBy.length > 1 && best > 0 ? best + 1 : best;
  return LEVELS[Math.min(agreed, LEVELS.length - 1)]!;
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
