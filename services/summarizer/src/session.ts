import type { SessionTurn, Summary } from "@cairn/memory-core";

export type { SessionTurn } from "@cairn/memory-core";

/** What a summary must cover to be current: every turn there is, up to the newest one recorded. */
export interface Coverage {
  turnCount: number;
  coveredThrough: number;
}

export function coverageOf(turns: readonly SessionTurn[]): Coverage {
  return { turnCount: turns.length, coveredThrough: Math.max(...turns.map((t) => t.recordedAt)) };
}

/** Unchanged since its summary: same number of turns, none recorded after what it covers. */
export const isCovered = (summary: Pick<Summary, "turn_count" | "covered_through">, coverage: Coverage) =>
  summary.turn_count === coverage.turnCount && Date.parse(summary.covered_through) === coverage.coveredThrough;
