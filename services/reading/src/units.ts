import { CHECKS_HEADING, HEADING, OPTIONS_LEAD } from "./rules.js";

/** A sentence of an agent's prose, or one item of a list it wrote (an item says one thing, in one or more sentences). */
export interface Unit {
  text: string;
  /** It is part of the answer (what the agent reports at the end), not reasoning or narration on the way. */
  answer: boolean;
  item: boolean;
  /** What the list an item belongs to holds, when its lead line or heading says: options to weigh, or checks made. */
  list?: "options" | "checks";
}

/**
 * A text as the agent wrote it, in units: each list item whole (its continuation lines joined), each other
 * line's sentences one by one. Headings, tables and code blocks say nothing to note.
 */
export function unitsOf(text: string, answer: boolean): Unit[] {
  const units: Unit[] = [];
  let item: string[] | undefined;
  let fenced = false;
  /** What the list being read holds, as the line or heading before it says. */
  let list: Unit["list"];
  const close = () => {
    if (item) units.push({ text: clean(item.join(" ")), answer, item: true, ...(list ? { list } : {}) });
    item = undefined;
  };
  for (const line of text.split("\n")) {
    if (/^\s*(?:```|~~~)/.test(line)) {
      close();
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    const marker = /^\s*(?:[-*•]|\d+[.)])\s+(.*)$/.exec(line);
    const heading = HEADING.exec(line);
    if (marker) {
      close();
      item = [marker[1]!];
    } else if (heading) {
      close();
      list = CHECKS_HEADING.test(heading[1] ?? heading[2]!) ? "checks" : undefined;
    } else if (!/\S/.test(line) || /^\s*\|/.test(line)) close();
    else if (item && /^\s+\S/.test(line)) item.push(line.trim());
    else {
      close();
      list = OPTIONS_LEAD.test(line.trim()) ? "options" : undefined;
      for (const sentence of sentencesOf(line)) units.push({ text: sentence, answer, item: false });
    }
  }
  close();
  return units.filter((u) => u.text.length > 0);
}

const clean = (text: string) => text.replace(/\*\*/g, "").trim();

/** A line's sentences. */
export function sentencesOf(text: string): string[] {
  return (
    clean(text)
      // A sentence may open with an identifier in lower case ("charlock_holmes uses ICU"); abbreviations end none.
      .split(/(?<![.\s](?:e\.g|i\.e|vs|etc|cf|approx))(?<=[.!?])\s+(?=[A-Za-z0-9`"(])/)
      .map((s) => s.trim())
      .filter((s) => s.length > 0)
  );
}
