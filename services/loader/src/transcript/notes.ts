import { CAPTURE_MODEL, readUnitsBy, unitsOf, type ReadFunction } from "@cairn/reading";
import type { Exchange } from "./exchanges.js";

/**
 * What a person would name in an exchange when asked what it left behind: what was decided (and why, when the
 * sentence says so) and what was tried and dropped. Read from the assistant's own words — its reasoning, what
 * it said between tool calls and its answer — through @cairn/reading (services/reading). What its rules read (the
 * rules the extractive summaries read stored turns with) stands, and a linear model over those rules' predicates,
 * fitted on labelled sessions of many authors (`CAPTURE_MODEL`), adds what they missed: it carries to a new author's
 * way of stating a decision better than the rules alone. Tool lines and tool output are not read (a failing test on
 * the way to a fix is a check, not a dropped approach).
 * docs/benchmarks.md has the precision and recall on sessions fitted on and on sessions never seen.
 */
export interface Notes {
  decided: string[];
  dropped: string[];
}

const readByModel = readUnitsBy(CAPTURE_MODEL, { keepRules: true });

export function notesOf(exchange: Exchange, read: ReadFunction = readByModel): Notes {
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
