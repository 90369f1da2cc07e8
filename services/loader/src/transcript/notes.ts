import type { Exchange } from "./exchanges.js";

/**
 * What a person would name in an exchange when asked what it left behind: what was decided (and why, when the
 * sentence says so) and what was tried and dropped. Read from the assistant's own words — its reasoning, what
 * it said between tool calls and its answer — sentence by sentence, by the wording people use for each; tool
 * lines and tool output are not read (a failing test on the way to a fix is a check, not a dropped approach).
 * The rules were fixed on the tuning sessions of bench/fixtures/capture (docs/benchmarks.md has their precision
 * and recall).
 */
export interface Notes {
  decided: string[];
  dropped: string[];
}

const DECIDED =
  /\b(?:decided to|decision is|chose|choosing|going with|go with|went with|settled on|settle on|opted|we(?:'ll| will| should) (?:use|keep|go)|switch(?:ed|ing)?\b[^.]{0,60}\bto|stick with|sticking with|in favou?r of|stays? (?:on|off|in|with|as|at))\b/i;
/** What the change made true, said as the new state of the code: "the limiter now keeps…", "misses are now coalesced". */
const NEW_STATE = /\bnow (?!(?:i|we|you|let|pass(?:es)?|fails?)\b)[a-z]+(?:s|ed)\b/i;
/** A new state of the tests or the build is a check's result, not a decision. */
const CHECK_STATE = /\b(?:tests?|suite|build|ci|checks?)\b[^.]{0,40}\bnow\b/i;
const DROPPED =
  /\b(?:didn't work|did not work|doesn't work|does not work|didn't help|did not help|doesn't help|does not help|made no difference|no difference|reverted|reverting|rolled back|rolling back|backed (?:it |them )?out|dropped|dropping|abandoned|gave up|giving up|dead end|not worth|won't work|will not work|ruled out|decided against|chose not to)\b/i;
/** Sentences about the next step or the reading of code, which use the same verbs without deciding anything. */
const NOT_A_NOTE = /^(?:let me|let's|i'll (?:read|check|look|run|start)|first,? i|now i|next,? i)\b/i;
/** A note says what it is about: "I reverted it." alone names nothing. */
const MIN_WORDS = 5;

/** At most this many characters of a sentence are kept as a note. */
const NOTE_CHARS = 240;

export function notesOf(exchange: Exchange): Notes {
  const texts = [...exchange.thought.filter((t) => !/^\s*(?:- |failed: )/.test(t)), ...exchange.pending];
  const decided: string[] = [];
  const dropped: string[] = [];
  for (const sentence of texts.flatMap(sentencesOf)) {
    if (NOT_A_NOTE.test(sentence) || sentence.split(/\s+/).length < MIN_WORDS) continue;
    const note = sentence.length <= NOTE_CHARS ? sentence : `${sentence.slice(0, NOTE_CHARS - 1)}…`;
    const isDropped = DROPPED.test(sentence);
    if (isDropped && !dropped.includes(note)) dropped.push(note);
    const isDecided = DECIDED.test(sentence) || (NEW_STATE.test(sentence) && !CHECK_STATE.test(sentence));
    // "Decided against X" is X dropped, not decided.
    if (isDecided && !/\b(?:decided against|chose not to)\b/i.test(sentence) && !decided.includes(note)) decided.push(note);
  }
  return { decided, dropped };
}

function sentencesOf(text: string): string[] {
  return text
    .replace(/\*\*/g, "")
    .split(/\n+|(?<=[.!?])\s+(?=[A-Z`"(])/)
    .map((s) => s.replace(/^\s*(?:[-*•]|\d+\.)\s+/, "").trim())
    .filter((s) => s.length >= 12);
}

/** The notes as lines heading a memory's thought, and the kind they make it. */
export function notesBlock(notes: Notes): { head: string; kind: "decision" | "attempt" | undefined } {
  const lines = [...notes.decided.map((d) => `Decided: ${d}`), ...notes.dropped.map((d) => `Tried and dropped: ${d}`)];
  return {
    head: lines.join("\n"),
    kind: notes.decided.length > 0 ? "decision" : notes.dropped.length > 0 ? "attempt" : undefined,
  };
}
