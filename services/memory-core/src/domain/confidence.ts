import type { Confidence } from "./types.js";

/** Cosine-similarity floors for each confidence level, per embedding model (calibrated in bench/). */
interface Floors {
  high: number;
  medium: number;
  low: number;
}

const FLOORS: Record<string, Floors> = {
  // Universal Sentence Encoder lite: unrelated English sentences mostly score 0.05-0.35.
  "use-lite-512": { high: 0.6, medium: 0.48, low: 0.38 },
};
// Typical OpenAI-compatible embedding models spread unrelated text higher.
const DEFAULT_FLOORS: Floors = { high: 0.75, medium: 0.62, low: 0.5 };

const RANK: Record<Confidence, number> = { none: 0, low: 1, medium: 2, high: 3 };

export function semanticConfidence(similarity: number, model: string): Confidence {
  const floors = FLOORS[model] ?? DEFAULT_FLOORS;
  if (similarity >= floors.high) return "high";
  if (similarity >= floors.medium) return "medium";
  if (similarity >= floors.low) return "low";
  return "none";
}

export const atLeast = (confidence: Confidence, minimum: Confidence) => RANK[confidence] >= RANK[minimum];
