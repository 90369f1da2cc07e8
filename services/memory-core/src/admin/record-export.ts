import type { OperationInput } from "@cairn/openapi";
import type { Tombstones } from "../ledger/tombstones.js";
import { assertWithinListing, encodeOffsetCursor, offsetFrom, type Listing } from "../records/cursor.js";
import type { StoredRecords } from "../records/stored-records.js";
import type { ExportPage } from "../records/types.js";
import type { Storage } from "../storage.js";

/**
 * A workspace's records as stored, page by page, in the order they were added (Chroma's order for a `get`
 * without a filter): ids, documents, metadata untouched, vectors. Reads collections whatever their stamp,
 * so a workspace waiting for re-embedding can still be backed up.
 */
export class RecordExport {
  private readonly stored: StoredRecords;
  private readonly tombs: Tombstones;

  constructor(storage: Pick<Storage, "records" | "tombstones">) {
    ({ records: this.stored, tombstones: this.tombs } = storage);
  }

  async page(workspace: string, input: OperationInput<"export_records">): Promise<ExportPage> {
    const listing: Listing = { name: "export", workspace, scope: [input.collection] };
    const offset = input.after === undefined ? 0 : offsetFrom(input.after, "after", listing);
    if (input.collection === "tombstones") return this.tombstones(listing, offset, input.limit);
    const stored = await this.stored.page(workspace, input.collection, {
      offset,
      limit: input.limit,
      withEmbeddings: input.include_embeddings,
      // Paging on, the count comes first: an offset past the end was never issued, and is not handed to Chroma.
      ...(input.after === undefined ? {} : { checkOffset: (total: number) => assertWithinListing(offset, total, "after") }),
    });
    if (!stored) return { workspace, collection: input.collection, stamp: this.stored.stamp, records: [], total: 0, next_cursor: null };
    return {
      workspace,
      collection: input.collection,
      stamp: stored.stamp,
      records: stored.records,
      total: stored.total,
      next_cursor: nextCursor(listing, offset, stored.records.length, stored.total),
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

function nextCursor(listing: Listing, offset: number, read: number, total: number): string | null {
  return read > 0 && offset + read < total ? encodeOffsetCursor(listing, offset + read) : null;
}
