import type { ChromaStore } from "../store/chroma-store.js";
import { summaryId } from "./ids.js";
import { summaryDocument, summaryFromRecord, summaryMetadata } from "./summary-record.js";
import type { Summary } from "./types.js";

/** A workspace's session summaries in Chroma's `summaries` collection, one per session, read as `Summary`s. */
export class SummaryRepository {
  constructor(private readonly store: ChromaStore) {}

  /** The session's summary, when it has one. */
  async ofSession(workspace: string, sessionId: string): Promise<Summary | undefined> {
    const summaries = await this.store.collection(workspace, "summaries");
    const [record] = await summaries.get({ ids: [summaryId(sessionId)] });
    return record ? summaryFromRecord(record) : undefined;
  }

  /** Writes the summary, replacing the session's earlier one; `document` is what its vector was made from. */
  async put(workspace: string, summary: Summary, embedding: number[]): Promise<void> {
    const summaries = await this.store.collection(workspace, "summaries");
    await summaries.upsert([{ id: summary.id, embedding, document: summaryDocument(summary), metadata: summaryMetadata(summary) }]);
  }

  async delete(workspace: string, ids: readonly string[]): Promise<void> {
    const summaries = await this.store.collection(workspace, "summaries");
    await summaries.delete(ids);
  }

  async count(workspace: string): Promise<number> {
    return (await this.store.collection(workspace, "summaries")).count();
  }

  /** Every summary of the workspace, a page at a time; damaged ones left out (by the store). */
  async *pages(workspace: string, size: number): AsyncGenerator<Summary[]> {
    const summaries = await this.store.collection(workspace, "summaries");
    for await (const page of summaries.pages({ size })) yield page.map(summaryFromRecord);
  }
}
