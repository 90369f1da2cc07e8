import type { components } from "@cairn/openapi";

type ReembedProgress = components["schemas"]["ReembedProgress"];
import type { Io } from "../io.js";
import { ProgressBar } from "../progress.js";
import type { Target } from "../tokens.js";

export interface ReembedSummary {
  workspace: string;
  processed: number;
  total: number;
  resumedAt: number;
}

/**
 * Calls `reembed_records` batch after batch until each workspace carries the server's embedding stamp.
 * The progress lives in Chroma, not here: an interrupted run resumes where it stopped when run again.
 */
export async function reembed(targets: Target[], batch: number, io: Io): Promise<ReembedSummary[]> {
  const summaries: ReembedSummary[] = [];
  for (const { workspace, client } of targets) {
    let progress = await client.call("reembed_records", { limit: batch });
    const firstDone = reembedded(progress) - progress.processed;
    if (firstDone > 0 && !progress.done) {
      io.stderr.write(`reembed ${workspace}: resuming, ${firstDone} of ${total(progress)} records already re-embedded\n`);
    }
    const bar = new ProgressBar(io.stderr, `reembed ${workspace}`, total(progress));
    let processed = progress.processed;
    bar.update(reembedded(progress));
    while (!progress.done) {
      progress = await client.call("reembed_records", { limit: batch });
      processed += progress.processed;
      bar.setTotal(total(progress));
      bar.update(reembedded(progress));
    }
    bar.finish(`(${progress.embedder.model}, ${progress.embedder.dimension} dimensions)`);
    summaries.push({ workspace, processed, total: total(progress), resumedAt: firstDone });
  }
  return summaries;
}

const reembedded = (p: ReembedProgress) => p.collections.reduce((n, c) => n + c.reembedded, 0);
const total = (p: ReembedProgress) => p.collections.reduce((n, c) => n + c.total, 0);
