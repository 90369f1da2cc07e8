import type { StoredRecord } from "../store/chroma-store.js";
import { isOutdated, isSuperseded, reviewOf, turnFields } from "./turn-record.js";
import type { Kind, MemoryBrief } from "./types.js";

/**
 * A memory in a few words (`detail: brief`), the default of listings and searches: an agent pays for every byte
 * it is given, and most hits it is given are not the one it opens. What to tell the memory by (id, when, who,
 * session, kind, flags) and one short text; `get_memory` has the rest.
 */

/** A listing's text: the head of the task and the tail of the outcome, where the next step is written. */
const TASK_CHARS = 48;
const OUTCOME_CHARS = 90;
/** A search hit's text: the stretch of the memory that holds most of the query's words. */
export const SNIPPET_CHARS = 200;

export function briefOf(record: StoredRecord, text: string): MemoryBrief {
  const m = record.metadata;
  const brief: MemoryBrief = {
    id: record.id,
    agent: String(m.agent),
    session_id: String(m.session_id),
    // To the second: the milliseconds tell nothing a reader needs.
    recorded_at: toSecond(Number(m.recorded_at)),
    text,
  };
  if (typeof m.occurred_at === "number") brief.occurred_at = toSecond(m.occurred_at);
  if (m.kind !== "turn" && typeof m.kind === "string") brief.kind = m.kind as Kind;
  const flags: NonNullable<MemoryBrief["flags"]> = [];
  if (isOutdated(m)) flags.push("outdated");
  if (isSuperseded(m)) flags.push("superseded");
  if (m.trusted === false) flags.push("untrusted");
  if (m.check_status === "failed") flags.push("checks_failed");
  if (m.check_status === "passed") flags.push("checks_passed");
  const review = reviewOf(m)?.state;
  if (review === "pending") flags.push("pending_review");
  if (review === "rejected") flags.push("rejected");
  if (flags.length > 0) brief.flags = flags;
  return brief;
}

const toSecond = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

/** The task of a turn, in a few words. */
export const taskText = (record: StoredRecord): string => head(oneLine(turnFields(record).prompt), TASK_CHARS);

/** The task and the outcome of a turn, in a few words each. */
export function listingText(record: StoredRecord): string {
  const { prompt, response } = turnFields(record);
  return `${head(oneLine(prompt), TASK_CHARS)} → ${tail(oneLine(response), OUTCOME_CHARS)}`;
}

export const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();

function head(text: string, chars: number): string {
  if (text.length <= chars) return text;
  const cut = text.slice(0, chars);
  const space = cut.lastIndexOf(" ");
  return `${(space > chars / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

function tail(text: string, chars: number): string {
  if (text.length <= chars) return text;
  const cut = text.slice(text.length - chars);
  const space = cut.indexOf(" ");
  return `…${(space >= 0 && space < chars / 2 ? cut.slice(space + 1) : cut).trimStart()}`;
}
