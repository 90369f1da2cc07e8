import type { AdminClient } from "../client.js";
import { RefusedError } from "../client.js";
import type { AddMemoryRequest } from "./draft.js";

/** What became of one memory sent: stored now, there already (a replay), or there already with other content. */
export type Written = { id: string; outcome: "stored" | "replayed" } | { id: undefined; outcome: "conflict" };

export interface WriteTotals {
  stored: number;
  replayed: number;
  conflicts: number;
}

/**
 * Writes the memories one at a time, in order, through `add_memory`. The one place the importers write: a bulk
 * write path can take its place without the importers changing. Each carries its idempotency key, so a
 * second run (or a run after an interruption) replays what is there instead of storing it again.
 */
export async function storeMemories(
  client: AdminClient,
  memories: readonly AddMemoryRequest[],
  onProgress: (done: number) => void = () => undefined,
): Promise<Written[]> {
  const written: Written[] = [];
  for (const memory of memories) {
    try {
      const answer = await client.call("add_memory", memory);
      written.push({ id: answer.id, outcome: answer.replayed ? "replayed" : "stored" });
    } catch (error) {
      // Stored before with other content (an importer that reads the source differently now): left as it was.
      if (error instanceof RefusedError && error.code === "idempotency_conflict") written.push({ id: undefined, outcome: "conflict" });
      else throw error;
    }
    onProgress(written.length);
  }
  return written;
}

export const totalsOf = (written: readonly Written[]): WriteTotals => ({
  stored: written.filter((w) => w.outcome === "stored").length,
  replayed: written.filter((w) => w.outcome === "replayed").length,
  conflicts: written.filter((w) => w.outcome === "conflict").length,
});
