import type { OperationInput } from "@cairn/openapi";
import type { Tombstones } from "../ledger/tombstones.js";
import type { ChromaStore, StoredRecord } from "../store/chroma-store.js";
import { assertWithinListing, encodeOffsetCursor, offsetFrom, type Listing } from "../records/cursor.js";
import type { ExportedRecord, ExportPage } from "../records/types.js";
import type { Storage } from "../storage.js";

/**
 * A workspace's records as stored, page by page, in the order they were added (Chroma's order for a `get`
 * without a filter): ids, documents, metadata untouched, vectors. Reads collections whatever their stamp,
 * so a workspace waiting for re-embedding can still be backed up.
 */
export class RecordExport {
  private readonly store: ChromaStore;
  private readonly tombs: Tombstones;

  constructor(storage: Pick<Storage, "store" | "tombstones">) {
    ({ store: this.store, tombstones: this.tombs } = storage);
  }

  async page(workspace: string, input: OperationInput<"export_records">): Promise<ExportPage> {
    const listing: Listing = { name: "export", workspace, scope: [input.collection] };
    const offset = input.after === undefined ? 0 : offsetFrom(input.after, "after", listing);
    if (input.collection === "tombstones") return this.tombstones(listing, offset, input.limit);
    const inspected = await this.store.inspect(workspace, input.collection);
    if (!inspected) return { workspace, collection: input.collection, stamp: this.store.stamp, records: [], total: 0, next_cursor: null };
    const read = () => inspected.records.get({ limit: input.limit, offset, withDocuments: true, withEmbeddings: input.include_embeddings });
    let page: StoredRecord[];
    let total: number;
    if (input.after === undefined) {
      [page, total] = await Promise.all([read(), inspected.records.count()]);
    } else {
      // Paging on, the count comes first: an offset past the end was never issued, and is not handed to Chroma.
      total = await inspected.records.count();
      assertWithinListing(offset, total, "after");
      page = await read();
    }
    return {
      workspace,
      collection: input.collection,
      stamp: inspected.stamp,
      records: page.map(exported),
      total,
      next_cursor: nextCursor(listing, offset, page.length, total),
    };
  }

  private async tombstones(listing: Listing, offset: number, limit: number): Promise<ExportPage> {
    const { workspace } = listing;
    // Forgetting is rare: the tombstones of a workspace are few, listed whole and cut here.
    const all = await this.tombs.all(workspace);
    assertWithinListing(offset, all.length, "after");
    const page = all.slice(offset, offset + limit);
    return {
      workspace,
      collection: "tombstones",
      stamp: null,
      records: page.map((t) => ({ id: t.memoryId, document: "", metadata: t.metadata })),
      total: all.length,
      next_cursor: nextCursor(listing, offset, page.length, all.length),
    };
  }
}

function exported(record: StoredRecord): ExportedRecord {
  return {
    id: record.id,
    document: record.document ?? "",
    metadata: record.metadata,
    ...(record.embedding ? { embedding: record.embedding } : {}),
  };
}

function nextCursor(listing: Listing, offset: number, read: number, total: number): string | null {
  return read > 0 && offset + read < total ? encodeOffsetCursor(listing, offset + read) : null;
}
