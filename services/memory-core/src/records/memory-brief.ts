import { askedFirst } from "./code-citations.js";
import { isOutdated, isSuperseded, textOf, type StoredTurn } from "./stored-turn.js";
import type { MemoryBrief } from "./types.js";

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

/** Cited paths a brief names, at most; a path longer than CITED_PATH_CHARS keeps its end (the file's name). */
const CITED_SHOWN = 3;
const CITED_PATH_CHARS = 120;

/**
 * What a caller told about itself that a brief speaks to: the code paths it asked about (the brief names the
 * paths it cites, those first) and its branch and the default one (a memory written on a third is flagged).
 */
export interface BriefView {
  paths?: readonly string[];
  branch?: string;
  defaultBranch?: string;
}

export function briefOf(turn: StoredTurn, text: string, view: BriefView = {}): MemoryBrief {
  const brief: MemoryBrief = {
    id: turn.id,
    agent: turn.agent,
    session_id: turn.sessionId,
    // To the second: the milliseconds tell nothing a reader needs.
    recorded_at: toSecond(turn.recordedAt),
    text,
  };
  if (turn.occurredAt !== undefined) brief.occurred_at = toSecond(turn.occurredAt);
  if (turn.kind !== "turn") brief.kind = turn.kind;
  const flags: NonNullable<MemoryBrief["flags"]> = [];
  if (isOutdated(turn)) flags.push("outdated");
  if (isSuperseded(turn)) flags.push("superseded");
  if (!turn.trusted) flags.push("untrusted");
  if (turn.checkStatus === "failed") flags.push("checks_failed");
  if (turn.checkStatus === "passed") flags.push("checks_passed");
  const review = turn.review?.state;
  if (review === "pending") flags.push("pending_review");
  if (review === "rejected") flags.push("rejected");
  const branch = turn.code?.branch;
  const otherBranch = branch !== undefined && view.branch !== undefined && branch !== view.branch && branch !== view.defaultBranch;
  if (otherBranch) flags.push("other_branch");
  if (flags.length > 0) brief.flags = flags;
  if (view.paths !== undefined && turn.citedPaths.length > 0) {
    brief.cites = askedFirst(turn.citedPaths, view.paths)
      .slice(0, CITED_SHOWN)
      .map((path) => (path.length > CITED_PATH_CHARS ? `…${path.slice(path.length - CITED_PATH_CHARS + 1)}` : path));
  }
  if (otherBranch) brief.branch = branch;
  return brief;
}

const toSecond = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

/** The task of a turn, in a few words. */
export const taskText = (turn: StoredTurn): string => head(oneLine(textOf(turn).prompt), TASK_CHARS);

/** The task and the outcome of a turn, in a few words each. */
export function listingText(turn: StoredTurn): string {
  const { prompt, response } = textOf(turn);
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
