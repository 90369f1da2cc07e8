import { createHash } from "node:crypto";
import type { OperationInput } from "@cairn/openapi";
import type { Ledger } from "../ledger/ledger.js";
import { mailEntryOf, type MailEntry } from "../ledger/mailbox.js";
import type { Tombstones } from "../ledger/tombstones.js";
import { assertWithinListing, encodeOffsetCursor, offsetFrom, type Listing } from "../records/cursor.js";
import type { StoredRecords } from "../records/stored-records.js";
import type { ExportedRecord, ExportPage } from "../records/types.js";
import type { Storage } from "../storage.js";

/**
 * A workspace's records as stored, page by page, in the order they were added (Chroma's order for a `get`
 * without a filter): ids, documents, metadata untouched, vectors. Reads collections whatever their stamp,
 * so a workspace waiting for re-embedding can still be backed up.
 */
export class RecordExport {
  private readonly stored: StoredRecords;
  private readonly tombs: Tombstones;
  private readonly ledger: Ledger;

  constructor(storage: Pick<Storage, "records" | "tombstones" | "ledger">) {
    ({ records: this.stored, tombstones: this.tombs, ledger: this.ledger } = storage);
  }

  async page(workspace: string, input: OperationInput<"export_records">): Promise<ExportPage> {
    const listing: Listing = { name: "export", workspace, scope: [input.collection] };
    const offset = input.after === undefined ? 0 : offsetFrom(input.after, "after", listing);
    if (input.collection === "tombstones") return this.tombstones(listing, offset, input.limit);
    if (input.collection === "messages") return this.messages(listing, offset, input.limit);
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

  /**
   * The mailbox's messages and read marks: a page of `ledger-mail`'s entries in the order they were added, its
   * stream slots left out (a restore posts each message again). A message comes before its read marks, which
   * are added after it.
   */
  private async messages(listing: Listing, offset: number, limit: number): Promise<ExportPage> {
    const { workspace } = listing;
    const { entries, total } = await this.ledger.page(workspace, "ledger-mail", offset, limit, (n) =>
      assertWithinListing(offset, n, "after"),
    );
    return {
      workspace,
      collection: "messages",
      stamp: null,
      records: entries.flatMap((e) => {
        const entry = mailEntryOf(e.id, e.metadata);
        return entry ? [exportedOf(entry)] : [];
      }),
      total,
      next_cursor: nextCursor(listing, offset, entries.length, total),
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

/** A message or a read mark as `export_records` lists it (openapi/src/stored-records.ts). */
function exportedOf(entry: MailEntry): ExportedRecord {
  if (entry.kind === "read") {
    return {
      id: readMarkRecordId(entry.reader, entry.messageId),
      document: "",
      metadata: { kind: "read", reader: entry.reader, message_id: entry.messageId },
    };
  }
  const m = entry.message;
  return {
    id: m.id,
    document: m.body,
    metadata: {
      kind: "message",
      from: m.from,
      to: m.to,
      subject: m.subject,
      digest: m.digest,
      sent_at: m.sentAt,
      memory_ids: m.memoryIds.join(","),
      session_ids: JSON.stringify(m.sessionIds),
    },
  };
}

/** A read mark's id in a backup: an `m_` id of its own, the same for the same reader and message wherever it is exported. */
export const readMarkRecordId = (reader: string, messageId: string) =>
  `m_${createHash("sha256").update(`read\u0000${reader}\u0000${messageId}`, "utf8").digest("hex").slice(0, 32)}`;

function nextCursor(listing: Listing, offset: number, read: number, total: number): string | null {
  return read > 0 && offset + read < total ? encodeOffsetCursor(listing, offset + read) : null;
}
