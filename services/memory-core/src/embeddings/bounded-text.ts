import { isLowSurrogate } from "../text.js";

/** How many stretches of a long text are embedded in its place (see `representativeText`). */
const WINDOWS = 4;

/**
 * What the local model embeds for `text`: the text itself when it has at most `maxChars` characters; else
 * WINDOWS stretches of it, evenly spaced from its first character to its last and cut at word boundaries,
 * joined by newlines, at most `maxChars` characters in all. A stored turn is prompt, thought and response in
 * that order, so its opening and its ending both stay in what is embedded. The model's tokenizer and its
 * attention both cost more than linearly in the length of one text: bounding the text bounds the time and
 * memory one text can take (docs/design.md, "Embeddings").
 */
export function representativeText(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const width = Math.floor((maxChars - (WINDOWS - 1)) / WINDOWS);
  const stretches: string[] = [];
  for (let k = 0; k < WINDOWS; k++) {
    const start = Math.round((k * (text.length - width)) / (WINDOWS - 1));
    stretches.push(wholeWords(text, start, start + width));
  }
  return stretches.join("\n");
}

/** text[start, end), less a word cut at either end when a word boundary lies inside; never half a surrogate pair. */
function wholeWords(text: string, start: number, end: number): string {
  let from = start;
  if (from > 0 && !/\s/.test(text[from - 1]!)) {
    const space = text.slice(from, end).search(/\s/);
    if (space >= 0) from += space + 1;
  }
  let to = end;
  if (to < text.length && !/\s/.test(text[to]!)) {
    const piece = text.slice(from, to);
    const space = Math.max(piece.lastIndexOf(" "), piece.lastIndexOf("\n"), piece.lastIndexOf("\t"));
    if (space > 0) to = from + space;
  }
  if (isLowSurrogate(text.charCodeAt(from))) from += 1;
  if (to < text.length && isLowSurrogate(text.charCodeAt(to))) to -= 1;
  return text.slice(from, Math.max(from, to)).trim();
}
