import { listingText, oneLine, SNIPPET_CHARS } from "../records/memory-brief.js";
import { textOf, type StoredTurn } from "../records/stored-turn.js";
import { isHighSurrogate, isLowSurrogate } from "../text.js";
import { terms, tokenize, toTerm } from "./text-analysis.js";

/**
 * What a search hit's text is looked for in: the first FIELD_SCAN_CHARS of each field, so that the work a hit costs
 * is bounded whatever its length (this runs for every hit of every brief query, on the request thread), while the
 * head of each field, where a turn states its task, its reasons and its outcome, is read.
 */
const FIELD_SCAN_CHARS = 1024;
/**
 * A run of text without spaces longer than this (a page of Chinese or Thai, a blob) is looked at in pieces of this
 * length, so that a word found in it places the snippet near it rather than at the run's start.
 */
const PIECE_CHARS = 64;
/** Shown before the first word found, for its sense; a space is looked for no further back than as much again. */
const LEAD_CHARS = 40;

/**
 * The stretch of the turn that holds the most distinct words of the query, cut at word boundaries where there are
 * any; without any (a match by meaning alone), the listing's text. Words are looked for in the head of each field
 * only (FIELD_SCAN_CHARS).
 */
export function snippetText(turn: StoredTurn, query: string): string {
  const wanted = new Set(terms(query));
  const { prompt, thought, response } = textOf(turn);
  const fields = [prompt, thought, response].map(oneLine).filter((field) => field.length > 0);
  const text = fields.join(" · ");
  if (text.length <= SNIPPET_CHARS) return text;
  const hits: Array<{ at: number; term: string }> = [];
  // A text repeats its words: each distinct one is analysed once.
  const found = new Map<string, string[]>();
  const look = (piece: string, at: number) => {
    let matched = found.get(piece);
    if (!matched) {
      matched = [];
      for (const token of tokenize(piece)) {
        const term = toTerm(token);
        if (term !== null && wanted.has(term)) matched.push(term);
      }
      found.set(piece, matched);
    }
    for (const term of matched) hits.push({ at, term });
  };
  let fieldStart = 0;
  for (const field of fields) {
    for (const match of field.slice(0, FIELD_SCAN_CHARS).matchAll(/\S+/g)) {
      const word = match[0];
      const at = fieldStart + match.index;
      if (word.length <= PIECE_CHARS) look(word, at);
      else for (const [offset, piece] of pieces(word)) look(piece, at + offset);
    }
    fieldStart += field.length + 3;
  }
  if (hits.length === 0) return listingText(turn);
  // The window of SNIPPET_CHARS that starts at a hit and covers the most distinct query terms.
  let best = { start: hits[0]!.at, score: -1 };
  for (let i = 0, j = 0; i < hits.length; i++) {
    while (j < hits.length && hits[j]!.at < hits[i]!.at + SNIPPET_CHARS) j++;
    const score = new Set(hits.slice(i, j).map((h) => h.term)).size;
    if (score > best.score) best = { start: hits[i]!.at, score };
  }
  // A little of what comes before the first word found, from a space when one is near.
  const lead = Math.max(0, best.start - LEAD_CHARS);
  const before = text.lastIndexOf(" ", lead);
  let start = lead === 0 ? 0 : lead - before <= LEAD_CHARS ? before + 1 : lead;
  if (isLowSurrogate(text.charCodeAt(start))) start += 1;
  const cut = text.slice(start, start + SNIPPET_CHARS);
  const more = start + cut.length < text.length;
  // Cut after the last whole word, unless that drops most of it (a run without spaces).
  const space = more ? cut.lastIndexOf(" ") : -1;
  let end = cut.length;
  if (space > SNIPPET_CHARS / 2) end = space;
  else if (more && isHighSurrogate(cut.charCodeAt(end - 1))) end -= 1;
  return `${start > 0 ? "…" : ""}${cut.slice(0, end).trimEnd()}${more ? "…" : ""}`;
}

/** A long run without spaces in pieces of PIECE_CHARS (a character outside the basic plane is not cut in two), with their offsets. */
function* pieces(word: string): Generator<[number, string]> {
  for (let at = 0; at < word.length;) {
    let end = Math.min(word.length, at + PIECE_CHARS);
    if (end < word.length && isHighSurrogate(word.charCodeAt(end - 1))) end += 1;
    yield [at, word.slice(at, end)];
    at = end;
  }
}
