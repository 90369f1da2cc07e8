import type { components } from "@cairn/openapi";
import type { Io } from "../io.js";
import { ProgressBar } from "../progress.js";
import type { Target } from "../tokens.js";

type MemoryBrief = components["schemas"]["MemoryBrief"];

/** The filters `cairn review` passes on: those of `query_review_queue` and `review_matching`. */
export interface ReviewFilter {
  source?: "agent" | "human" | "import";
  agent?: string;
  session_id?: string;
  since?: string;
  until?: string;
}

export const REVIEW_SOURCES = ["agent", "human", "import"] as const;

/** One page of what waits for review (the oldest), and how many wait, per workspace. */
export async function listReview(targets: Target[], filter: ReviewFilter, limit: number, json: boolean, io: Io): Promise<void> {
  const answers = [];
  for (const { workspace, client } of targets) {
    const queue = await client.call("query_review_queue", { ...filter, limit });
    answers.push({ workspace, total: queue.total, pending: queue.pending, memories: queue.memories as MemoryBrief[] });
  }
  if (json) {
    io.stdout.write(`${JSON.stringify(answers.length === 1 ? answers[0] : answers, null, 2)}\n`);
    return;
  }
  for (const a of answers) {
    const filtered = a.total === a.pending ? "" : ` (${a.pending} in all)`;
    io.stdout.write(
      `${a.workspace}: ${a.total} waiting for review${filtered}${a.memories.length < a.total ? `, the oldest ${a.memories.length}:` : a.total > 0 ? ":" : ""}\n`,
    );
    for (const m of a.memories) {
      io.stdout.write(`  ${m.id}  ${m.recorded_at}  ${m.agent}  ${m.session_id}  ${oneLine(m.text)}\n`);
    }
  }
}

export interface ReviewRun {
  workspace: string;
  /** What matched when the run began. */
  matched: number;
  reviewed: number;
  /** What still matches: above 0 only when memory-core stopped making progress. */
  remaining: number;
}

/**
 * `review_matching` call after call until nothing that matches waits, with progress on stderr; a dry run asks
 * once. Each call reviews a bound memory-core chooses, so an interrupted run resumes where it stopped when run
 * again, and a run repeated after it completed changes nothing.
 */
export async function reviewAll(
  targets: Target[],
  request: ReviewFilter & { decision: "approve" | "reject"; reason: string; dry_run: boolean },
  io: Io,
): Promise<ReviewRun[]> {
  const runs: ReviewRun[] = [];
  for (const { workspace, client } of targets) {
    let answer = await client.call("review_matching", request);
    const run = { workspace, matched: answer.matched, reviewed: answer.reviewed, remaining: answer.remaining };
    if (!request.dry_run && answer.matched > 0) {
      const bar = new ProgressBar(io.stderr, `review ${request.decision} ${workspace}`, answer.matched);
      bar.update(run.reviewed);
      // A call that reviews nothing while some still match (they changed under it) ends the run rather than loop.
      while (answer.remaining > 0 && answer.reviewed > 0) {
        answer = await client.call("review_matching", request);
        run.reviewed += answer.reviewed;
        bar.setTotal(Math.max(run.matched, run.reviewed + answer.remaining));
        bar.update(run.reviewed);
      }
      run.remaining = answer.remaining;
      bar.finish();
    }
    runs.push(run);
  }
  return runs;
}

const oneLine = (text: string) => {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 100 ? `${flat.slice(0, 99)}…` : flat;
};
