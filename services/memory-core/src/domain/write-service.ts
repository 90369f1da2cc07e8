import type { Principal } from "../auth/principal.js";
import type { Embedder } from "../embeddings/embedder.js";
import { internal } from "../errors.js";
import type { Logger } from "../logger.js";
import { summaryId } from "../records/ids.js";
import { summaryDocument } from "../records/summary-record.js";
import type { AddMemoryRequest, Summary } from "../records/types.js";
import { writeAdvice } from "../records/write-advice.js";
import type { HybridRetrieval } from "../retrieval/hybrid-retrieval.js";
import type { Storage } from "../storage.js";
import type { AddMemoriesResult, BulkWrites } from "./bulk-writes.js";
import { possibleSupersessions } from "./supersession-candidates.js";
import type { AddMemoryOutcome } from "./turn-writes.js";

export type { AddMemoryOutcome } from "./turn-writes.js";

export type NewSummary = Omit<Summary, "id" | "covered_through" | "dropped"> & { covered_through?: string; dropped?: Summary["dropped"] };

/** What agents, importers and the summarizer write: turns, once whatever the retries, and sessions' summaries. */
export class WriteService {
  constructor(
    private readonly storage: Pick<Storage, "summaries" | "feed">,
    private readonly embedder: Embedder,
    private readonly bulk: BulkWrites,
    private readonly retrieval: HybridRetrieval,
    private readonly now: () => number,
    private readonly log: Logger | undefined,
  ) {}

  /** Stores the turn (once, whatever the retries) and says how it will recall, when it will recall badly. */
  async addMemory(principal: Principal, request: AddMemoryRequest): Promise<AddMemoryOutcome> {
    // Concurrent calls on this replica are written together, each judged as if alone (bulk-writes.ts).
    const outcome = await this.bulk.writeOne(principal, request);
    const advice = writeAdvice(request);
    const possible = await possibleSupersessions(this.retrieval, principal.workspace, request, outcome.result.id, this.now()).catch(
      (error: unknown) => {
        // The write is stored: a failed look for earlier decisions costs the hint, never the write.
        this.log?.warn("no look for decisions a write may supersede", { error: String(error) });
        return [];
      },
    );
    return {
      ...outcome,
      result: {
        ...outcome.result,
        ...(advice.length > 0 ? { advice } : {}),
        ...(possible.length > 0 ? { possible_supersedes: possible } : {}),
      },
    };
  }

  /** Many turns, each stored as addMemory stores it, in few Chroma requests; one result per item (see bulk-writes.ts). */
  addMemories(principal: Principal, requests: readonly AddMemoryRequest[]): Promise<AddMemoriesResult> {
    return this.bulk.write(principal, requests);
  }

  /**
   * Writes (or replaces) a session's summary. The summarizer's entry point. `covered_through` defaults to
   * the last turn's time.
   */
  async putSummary(workspace: string, summary: NewSummary): Promise<Summary> {
    const full: Summary = {
      ...summary,
      dropped: summary.dropped ?? [],
      covered_through: summary.covered_through ?? summary.last_turn_at,
      id: summaryId(summary.session_id),
    };
    const document = summaryDocument(full);
    const [embedding] = await this.embedder.embed([document]);
    if (!embedding) throw internal();
    // A summary may be replaced in place.
    await this.storage.feed.announcedRewrite(workspace, "summaries", { record_id: full.id }, () =>
      this.storage.summaries.put(workspace, full, embedding),
    );
    return full;
  }

  /** Removes a session's summary (its turns were all forgotten): from the store and, via the feed, every index. */
  async removeSummary(workspace: string, sessionId: string): Promise<void> {
    const id = summaryId(sessionId);
    await this.storage.feed.append(workspace, "summaries", { record_id: id, op: "remove" });
    await this.storage.summaries.delete(workspace, [id]);
  }
}
