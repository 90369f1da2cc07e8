import { round } from "./stats.js";

/** LoCoMo's data format, and how a conversation becomes Cairn memories and scored questions. */

export interface DialogTurn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}
export interface Question {
  question: string;
  category: number;
  evidence?: string[];
}
export type Conversation = Record<string, unknown> & { sample_id: string; speaker_a: string; speaker_b: string; qa: Question[] };

export const CATEGORIES: Record<number, string> = { 1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop" };

export interface Score {
  n: number;
  recall_at_5: number;
  recall_at_10: number;
  any_at_5: number;
  mrr: number;
}

/** The annotated evidence turns of a question (some annotations list several in one string). */
export const evidenceOf = (qa: Question) =>
  new Set((qa.evidence ?? []).flatMap((e) => e.split(/[;,\s]+/)).filter((e) => /^D\d+:\d+$/.test(e)));

export const workspaceOf = (c: Conversation) => `locomo-${c.sample_id.toLowerCase().replace(/[^a-z0-9_-]/g, "-")}`;
export const agentOf = (speaker: string) => speaker.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 64);

/**
 * A dialog turn as an agent's memory: what was said to the speaker (the previous utterance, its context) is
 * the prompt, who spoke to whom and when is the thought, and what the speaker said (with any shared image's
 * caption) is the response. The session is the session, its date the occurred_at, the dia_id a ref.
 */
export function importWrites(c: Conversation) {
  const writes: Array<{ agent: string; body: Record<string, unknown> }> = [];
  for (let n = 1; Array.isArray(c[`session_${n}`]) || c[`session_${n}_date_time`] !== undefined; n++) {
    const turns = (c[`session_${n}`] as DialogTurn[] | undefined) ?? [];
    const when = parseLocomoDate(String(c[`session_${n}_date_time`] ?? ""));
    turns.forEach((turn, i) => {
      const previous = turns[i - 1];
      const other = turn.speaker === c.speaker_a ? c.speaker_b : c.speaker_a;
      const said = turn.blip_caption ? `${turn.text} [shared an image: ${turn.blip_caption}]` : turn.text;
      writes.push({
        agent: agentOf(turn.speaker),
        body: {
          session_id: `session-${n}`,
          prompt: previous ? `${previous.speaker}: ${previous.text}` : `(start of session ${n})`,
          thought: `${turn.speaker} to ${other}, ${when ? when.toISOString().slice(0, 10) : "date unknown"}`,
          response: said.trim() || "(no text)",
          refs: [turn.dia_id],
          idempotency_key: `${c.sample_id}:${turn.dia_id}`,
          ...(when ? { occurred_at: new Date(when.getTime() + i * 1000).toISOString() } : {}),
        },
      });
    });
  }
  return writes;
}

/** "1:56 pm on 8 May, 2023" */
function parseLocomoDate(text: string): Date | undefined {
  const m = text.match(/(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})/i);
  if (!m) return undefined;
  const [, h, min, ampm, day, month, year] = m;
  const hours = (Number(h) % 12) + (ampm!.toLowerCase() === "pm" ? 12 : 0);
  const date = new Date(`${day} ${month} ${year} ${hours}:${min}:00 UTC`);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

export function score(ranked: string[], evidence: Set<string>): Score {
  const inTop = (k: number) => ranked.slice(0, k).filter((id) => evidence.has(id)).length;
  const first = ranked.findIndex((id) => evidence.has(id));
  return {
    n: 1,
    recall_at_5: inTop(5) / evidence.size,
    recall_at_10: inTop(10) / evidence.size,
    any_at_5: inTop(5) > 0 ? 1 : 0,
    mrr: first >= 0 ? 1 / (first + 1) : 0,
  };
}

export function mean(scores: Score[]): Score {
  const n = scores.length;
  const avg = (key: keyof Score) => round(scores.reduce((a, s) => a + s[key], 0) / Math.max(1, n), 3);
  return { n, recall_at_5: avg("recall_at_5"), recall_at_10: avg("recall_at_10"), any_at_5: avg("any_at_5"), mrr: avg("mrr") };
}

/** A question of categories 1-4 with annotated evidence: one the bench scores. */
export const isAnswerable = (qa: Question) => qa.category in CATEGORIES && evidenceOf(qa).size > 0;

/**
 * Questions asked of a conversation's workspace whose evidence is not there: every 4th answerable question of
 * each other conversation. LoCoMo's conversations share generic words (family, work, a trip, "support"), and
 * two of the development file's share a speaker's name, so these are not trivially unrelated.
 */
export function foreignQuestions(conversations: readonly Conversation[], c: Conversation): Question[] {
  return conversations.filter((o) => o !== c).flatMap((o) => o.qa.filter(isAnswerable).filter((_, i) => i % 4 === 0));
}

/** Share of responses that answered `none`. */
export const noneRate = (confidences: readonly string[]) =>
  round(confidences.filter((c) => c === "none").length / Math.max(1, confidences.length), 3);

export function bump(counts: Map<string, number>, key: string) {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}
