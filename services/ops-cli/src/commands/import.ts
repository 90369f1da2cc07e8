import type { RestClient } from "@cairn/openapi";
import type { Io } from "../io.js";
import { ProgressBar } from "../progress.js";
import { planGitImport } from "../import/git-history.js";
import { planTranscriptImport, type Harness } from "../import/transcripts.js";
import { RedactingClient, storeMemories, totalsOf, type WriteTotals } from "../import/writer.js";
import type { AddMemoryRequest } from "../import/draft.js";

export interface GitImportSummary extends WriteTotals {
  root: string;
  commits: number;
  reverts: number;
  /** Reverted commits marked outdated (again, harmlessly, on a second run). */
  marked: number;
  addedForReverts: number;
}

/** A branch's history into memory: every commit, then each revert marks the memory of the commit it reverted. */
export async function importGit(
  client: RestClient,
  repo: string,
  options: { since?: string; branch?: string },
  io: Io,
): Promise<GitImportSummary> {
  const plan = await planGitImport(repo, options);
  const sender = new RedactingClient(client);
  const written = await write(
    sender,
    plan.commits.map((c) => c.request),
    "import git",
    io,
  );
  const ids = new Map(plan.commits.map((c, i) => [c.hash, written[i]]));
  let marked = 0;
  for (const r of plan.reverts) {
    const write = ids.get(r.reverted);
    if (!write?.id) continue;
    // A memory stored before may carry this revert's mark already, under a reason worded otherwise or with
    // other corrections after it: the revert is recorded once, so a second run leaves the corrections as they were.
    if (write.outcome === "replayed" && (await markedBy(sender, write.id, r.revert))) {
      marked++;
      continue;
    }
    await sender.call("mark_outdated", { memory_id: write.id, reason: r.reason, commit: r.revert });
    marked++;
  }
  return {
    root: plan.root,
    commits: plan.commits.length,
    reverts: plan.reverts.length,
    marked,
    addedForReverts: plan.addedForReverts,
    ...totalsOf(written),
  };
}

/** Whether the memory has an `outdated` correction naming the revert's commit. */
async function markedBy(client: RedactingClient, memoryId: string, revert: string): Promise<boolean> {
  const memory = await client.call("get_memory", { memory_id: memoryId });
  return memory.corrections.some((c) => c.kind === "outdated" && c.commit === revert);
}

export interface TranscriptImportSummary extends WriteTotals {
  files: number;
  sessions: number;
  exchanges: number;
  unanswered: number;
}

export async function importTranscripts(client: RestClient, harness: Harness, path: string, io: Io): Promise<TranscriptImportSummary> {
  const plan = await planTranscriptImport(harness, path);
  const written = await write(new RedactingClient(client), plan.memories, "import transcripts", io);
  return { files: plan.files, sessions: plan.sessions, exchanges: plan.memories.length, unanswered: plan.unanswered, ...totalsOf(written) };
}

/** The writes, with a progress bar on a terminal (and silence in logs and pipes, where the summary says it all). */
async function write(client: RedactingClient, memories: AddMemoryRequest[], label: string, io: Io) {
  const bar = io.stderr.isTTY ? new ProgressBar(io.stderr, label, memories.length) : undefined;
  const written = await storeMemories(client, memories, (done) => bar?.update(done));
  bar?.finish();
  return written;
}
