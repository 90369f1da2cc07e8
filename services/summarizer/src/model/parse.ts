import type { StructuredSummary } from "../structured.js";

/** The model answered, but not with a summary we can use: asked again, then the extractive fallback. */
export class MalformedAnswerError extends Error {
  override name = "MalformedAnswerError";
}

const MAX_TITLE = 120;
const MAX_TEXT = 4_000;
const MAX_ITEMS = 20;

/**
 * Reads a summary out of whatever the server sent: a bare JSON object, one inside a code fence, or one
 * inside prose (servers without structured output). Fields are checked and trimmed; a missing title is
 * taken from the summary's first sentence; lists given as one string become one item.
 */
export function parseSummaryAnswer(text: string): StructuredSummary {
  const value = findJsonObject(text);
  if (!value) throw new MalformedAnswerError("the answer holds no JSON object");
  const summary = str(value.summary);
  if (!summary) throw new MalformedAnswerError("the answer has no summary");
  const title = str(value.title) || firstSentence(summary);
  return {
    title: cut(title, MAX_TITLE),
    summary: cut(summary, MAX_TEXT),
    decisions: list(value.decisions)
      .map((d) => (typeof d === "string" ? { decision: d.trim() } : decision(d)))
      .filter((d): d is StructuredSummary["decisions"][number] => Boolean(d && d.decision)),
    dropped: list(value.dropped)
      .map((d) => (typeof d === "string" ? { approach: cut(d.trim(), MAX_TEXT) } : dropped(d)))
      .filter((d): d is StructuredSummary["dropped"][number] => Boolean(d && d.approach)),
    open_questions: strings(value.open_questions),
    next_steps: strings(value.next_steps),
  };
}

function findJsonObject(text: string): Record<string, unknown> | undefined {
  const unfenced = text.replace(/```(?:json)?/gi, "");
  for (let start = unfenced.indexOf("{"); start !== -1; start = unfenced.indexOf("{", start + 1)) {
    const end = matchingBrace(unfenced, start);
    if (end === -1) return undefined;
    try {
      const parsed = JSON.parse(unfenced.slice(start, end + 1)) as unknown;
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // not this brace: try the next one
    }
  }
  return undefined;
}

/** The index of the brace closing the one at `start`, skipping braces inside strings; -1 if it never closes. */
function matchingBrace(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return i;
  }
  return -1;
}

function decision(value: unknown): StructuredSummary["decisions"][number] | undefined {
  if (!value || typeof value !== "object") return undefined;
  const record = value as Record<string, unknown>;
  const text = str(record.decision);
  if (!text) return undefined;
  const evidence = str(record.evidence);
  return evidence ? { decision: cut(text, MAX_TEXT), evidence: cut(evidence, MAX_TEXT) } : { decision: cut(text, MAX_TEXT) };
}

function dropped(value: unknown): StructuredSummary["dropped"][number] | undefined {
  if (!value || typeof value !== "object") return undefined;
  const record = value as Record<string, unknown>;
  const approach = str(record.approach);
  if (!approach) return undefined;
  const reason = str(record.reason);
  return reason ? { approach: cut(approach, MAX_TEXT), reason: cut(reason, MAX_TEXT) } : { approach: cut(approach, MAX_TEXT) };
}

const str = (value: unknown) => (typeof value === "string" ? value.trim() : "");
const list = (value: unknown): unknown[] =>
  (Array.isArray(value) ? value : typeof value === "string" && value.trim() ? [value] : []).slice(0, MAX_ITEMS);
const strings = (value: unknown) =>
  list(value)
    .map(str)
    .filter(Boolean)
    .map((s) => cut(s, MAX_TEXT));
const cut = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`);
const firstSentence = (text: string) => text.split(/(?<=[.!?])\s/)[0] ?? text;
