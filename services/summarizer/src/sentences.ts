/** A sentence of a turn, with where it came from. */
export interface Sentence {
  text: string;
  turn: number;
  field: "prompt" | "thought" | "response";
  /** Position within the turn, for reading order. */
  position: number;
}

const MAX_SENTENCE = 300;
const MIN_WORDS = 3;

/**
 * A sentence end before a lower-case word: agents start sentences with identifiers ("size-limit runs in CI"), so
 * a full stop after a word of two or more letters ends one, unless the word is an abbreviation ("e.g.", "vs.").
 */
const LOWER_CASE_START = /(?<=[A-Za-z0-9)'`"]{2}[.!?])(?<!\b(?:etc|vs|approx|cf|incl|resp|ca|no|fig|eq|al)\.)\s+(?=[a-z])/;
const SENTENCE_END = new RegExp(`(?<=[.!?])\\s+(?=["'\`([]?[A-Z0-9])|${LOWER_CASE_START.source}|\\n+`);

/** Sentences of one field: split at sentence ends and line breaks; fragments too short to say anything dropped. */
export function splitSentences(text: string): string[] {
  return text
    .split(SENTENCE_END)
    .map((s) =>
      s
        .replace(/^[-*•>#\s]+/, "")
        .replace(/\s+/g, " ")
        .trim(),
    )
    .filter((s) => s.split(" ").length >= MIN_WORDS)
    .map((s) => (s.length <= MAX_SENTENCE ? s : `${s.slice(0, MAX_SENTENCE - 1).trimEnd()}…`));
}

/** What a decision can rest on: a number, a measurement, a check, a review. */
export const EVIDENCE_CUE =
  /\b\d+(\.\d+)?\s?(ms|s|sec|seconds|min|minutes|%|x|kb|mb|gb|rows|rps|qps|times)\b|\b(because|since|measured|benchmark\w*|profil\w*|p9\d|latency|throughput|tests?|tested|passed|failed|review(er|ed)?|evidence|shows?|showed|confirmed|reproduc\w*)\b/i;
/** What comes next. */
export const NEXT_CUE =
  /\b(next( step)?|todo|to do|follow[- ]up|then (we|i) (will|should)|will (add|write|fix|check|run|try|move|open|update|ask)|remaining|still need|plan(ned)? to)\b/i;
/** What is still open. */
export const OPEN_CUE = /\?$|\b(open question|unclear|not sure|unsure|unknown|undecided|doubt|need(s)? to find out|to be decided|tbd)\b/i;
