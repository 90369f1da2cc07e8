import { readUnits, unitsOf, type ReadFunction } from "@cairn/reading";
import type { Exchange } from "./exchanges.js";

/**
 * What a person would name in an exchange when asked what it left behind: what was decided (and why, when the
 * sentence says so) and what was tried and dropped. Read from the assistant's own words — its reasoning, what
 * it said between tool calls and its answer — by the rules of @cairn/reading (services/reading: what a sentence
 * does, the same rules the extractive summaries read stored turns with); tool lines and tool output are not read
 * (a failing test on the way to a fix is a check, not a dropped approach). An exchange that changed files and says
 * no decision in so many words decided what its answer says first.
 * docs/benchmarks.md has the precision and recall on sessions the rules were fixed on and on sessions never seen.
 */
export interface Notes {
  decided: string[];
  dropped: string[];
}

export function notesOf(exchange: Exchange, read: ReadFunction = readUnits): Notes {
  const units = [
    ...exchange.thought.filter((t) => !/^\s*(?:- |failed: )/.test(t)).flatMap((t) => unitsOf(t, false)),
    ...exchange.pending.flatMap((t) => unitsOf(t, true)),
  ];
  const readings = read(units, { wrote: exchange.edited.length > 0, headline: "any" });
  return {
    decided: readings.filter((r) => r.kind === "decided").map((r) => r.text),
    dropped: readings.filter((r) => r.kind === "dropped").map((r) => r.text),
  };
}

/** The notes as lines heading a memory's thought, and the kind they make it. */
export function notesBlock(notes: Notes): { head: string; kind: "decision" | "attempt" | undefined } {
  const lines = [...notes.decided.map((d) => `Decided: ${d}`), ...notes.dropped.map((d) => `Tried and dropped: ${d}`)];
  return {
    head: lines.join("\n"),
    kind: notes.decided.length > 0 ? "decision" : notes.dropped.length > 0 ? "attempt" : undefined,
  };
}
