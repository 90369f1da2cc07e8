import { randomUUID } from "node:crypto";
import { damageOf, hasPrefixOf, prefixOf, type FieldError } from "@cairn/openapi";
import type { Principal } from "../auth/principal.js";
import type { Embedder } from "../embeddings/embedder.js";
import { internal, validationFailed } from "../errors.js";
import type { AuditLog } from "../ledger/audit-log.js";
import { ChangeFeed, feedAppend } from "../ledger/change-feed.js";
import { TEAM, type Mailbox, type StoredMessage } from "../ledger/mailbox.js";
import type { Sequences } from "../ledger/sequences.js";
import type { Tombstones } from "../ledger/tombstones.js";
import { recencyAppend } from "../ledger/sequences.js";
import type { ExportedRecord, ImportRequest, ImportResult } from "../records/types.js";
import type { Storage } from "../storage.js";
import type { StoredRecords } from "../records/stored-records.js";
import type { TurnRepository } from "../records/turn-repository.js";
import type { EmbeddingStamp } from "../records/types.js";

/**
 * Exported records stored back, keeping ids, fields and the original `recorded_at`, and the derived
 * structures with them: each restored turn takes a slot in its agent's recency sequence (in the order of
 * its original `recorded_at`) and every record an entry in its collection's change feed, so recency and
 * the lexical indexes of every replica find it like any other write. A record whose id is present is
 * skipped, so importing twice stores nothing twice; a forgotten memory (tombstone) never comes back.
 */
export class RecordImport {
  private readonly stored: StoredRecords;
  private readonly turnsStored: TurnRepository;
  private readonly sequences: Sequences;
  private readonly feed: ChangeFeed;
  private readonly audit: AuditLog;
  private readonly tombs: Tombstones;
  private readonly mailbox: Mailbox;

  constructor(
    storage: Pick<Storage, "records" | "turns" | "sequences" | "feed" | "audit" | "tombstones" | "mailbox">,
    private readonly embedder: Embedder,
  ) {
    ({
      records: this.stored,
      turns: this.turnsStored,
      sequences: this.sequences,
      feed: this.feed,
      audit: this.audit,
      tombstones: this.tombs,
      mailbox: this.mailbox,
    } = storage);
  }

  async run(principal: Principal, request: ImportRequest): Promise<ImportResult> {
    const records = firstOfEachId(request.records);
    assertShapes(request.collection, records);
    const base = { workspace: principal.workspace, collection: request.collection };
    if (request.collection === "tombstones") return { ...base, ...(await this.tombstones(principal, records)) };
    if (request.collection === "messages") return { ...base, ...(await this.messages(principal.workspace, records)) };
    if (request.collection === "turns") return { ...base, ...(await this.turns(principal, records, request.stamp)) };
    return { ...base, ...(await this.summaries(principal.workspace, records, request.stamp)) };
  }

  private async turns(principal: Principal, records: ExportedRecord[], stamp: EmbeddingStamp | undefined) {
    const workspace = principal.workspace;
    const ids = records.map((r) => r.id);
    const present = await this.stored.present(workspace, "turns", ids);
    const forgotten = new Set((await this.tombs.of(workspace, ids)).keys());
    // Oldest first, so that each agent's sequence takes them in the order they were first recorded.
    const fresh = records
      .filter((r) => !present.has(r.id) && !forgotten.has(r.id))
      .sort(
        (a, b) =>
          Number(a.metadata.recorded_at) - Number(b.metadata.recorded_at) || Number(a.metadata.seq ?? 0) - Number(b.metadata.seq ?? 0),
      );
    const skippedForgotten = records.filter((r) => !present.has(r.id) && forgotten.has(r.id)).length;
    if (fresh.length === 0) return { stored: 0, skipped: present.size, forgotten: skippedForgotten, reembedded: 0 };

    const { vectors, reembedded } = await this.vectorsFor(fresh, stamp);
    const writeId = randomUUID();
    // As for any write, the slots come before the records (see domain/bulk-writes.ts): each turn's slot
    // in its agent's sequence and its change-feed entry, all in one round trip.
    const slots = await this.sequences.appendAcross(
      workspace,
      [
        ...fresh.map((r) => recencyAppend(String(r.metadata.agent), r.id)),
        ...fresh.map((r) => feedAppend("turns", { record_id: r.id, op: "put" })),
      ],
      writeId,
    );
    const seqOf = new Map(fresh.map((r, i) => [r.id, slots[i]!.seq]));
    await this.stored.add(
      workspace,
      "turns",
      fresh.map((r, i) => ({
        id: r.id,
        embedding: vectors[i]!,
        document: r.document,
        metadata: { ...r.metadata, seq: seqOf.get(r.id)!, write_id: writeId },
      })),
    );
    // A record another writer stored meanwhile under the same id stays as it was: only ours count as stored.
    const writeIds = await this.stored.writeIds(
      workspace,
      fresh.map((r) => r.id),
    );
    const ours = fresh.filter((r) => writeIds.get(r.id) === writeId).map((r) => r.id);
    await this.audit.appendMany(
      workspace,
      ours.map((memoryId) => ({ action: "restore" as const, actor: principal.agent, memoryId, reason: "restored from a backup" })),
    );
    return {
      stored: ours.length,
      skipped: records.length - ours.length - skippedForgotten,
      forgotten: skippedForgotten,
      reembedded: reembedded.filter((i) => ours.includes(fresh[i]!.id)).length,
    };
  }

  private async summaries(workspace: string, records: ExportedRecord[], stamp: EmbeddingStamp | undefined) {
    const present = await this.stored.present(
      workspace,
      "summaries",
      records.map((r) => r.id),
    );
    const fresh = records.filter((r) => !present.has(r.id));
    if (fresh.length === 0) return { stored: 0, skipped: present.size, forgotten: 0, reembedded: 0 };
    const { vectors, reembedded } = await this.vectorsFor(fresh, stamp);
    await this.feed.appendMany(
      workspace,
      "summaries",
      fresh.map((r) => ({ record_id: r.id, op: "put" })),
    );
    await this.stored.add(
      workspace,
      "summaries",
      fresh.map((r, i) => ({ ...r, embedding: vectors[i]! })),
    );
    return { stored: fresh.length, skipped: present.size, forgotten: 0, reembedded: reembedded.length };
  }

  /**
   * Messages stored and posted again as they were sent (one present is skipped), then read marks left again:
   * a mark that is there already, or whose message is not here in its reader's inbox (to it or to the team), is
   * skipped: a reader's unread count is its inbox's length less its marks.
   */
  private async messages(workspace: string, records: ExportedRecord[]) {
    const messages = records.filter((r) => r.metadata.kind === "message").map(messageOfRecord);
    const stored = await this.mailbox.restore(workspace, messages, randomUUID());
    const marks = records
      .filter((r) => r.metadata.kind === "read")
      .map((r) => ({ reader: String(r.metadata.reader), messageId: String(r.metadata.message_id) }));
    const here = await this.mailbox.messages(
      workspace,
      marks.map((m) => m.messageId),
    );
    const marked = await this.mailbox.restoreReadMarks(
      workspace,
      marks.filter((m) => [m.reader, TEAM].includes(here.get(m.messageId)?.to ?? "")),
      randomUUID(),
    );
    const storedCount = stored.length + marked;
    return { stored: storedCount, skipped: records.length - storedCount, forgotten: 0, reembedded: 0 };
  }

  /** A tombstone restored forgets its memory again where a copy of it is still stored. */
  private async tombstones(principal: Principal, records: ExportedRecord[]) {
    const workspace = principal.workspace;
    const known = await this.tombs.of(
      workspace,
      records.map((r) => r.id),
    );
    const fresh = records.filter((r) => !known.has(r.id));
    if (fresh.length === 0) return { stored: 0, skipped: records.length, forgotten: 0, reembedded: 0 };
    // A copy still stored here gives the tombstone its write id (see ledger/tombstones.ts).
    const writeOf = await this.stored.writeIds(
      workspace,
      fresh.map((r) => r.id),
    );
    await this.tombs.leave(
      workspace,
      fresh.map((r) => ({
        memoryId: r.id,
        forgotten: {
          at: r.metadata.forgotten_at!,
          by: r.metadata.forgotten_by!,
          reason: r.metadata.reason ?? "",
          writeId: writeOf.get(r.id),
        },
      })),
    );
    const stillStored = [...writeOf.keys()];
    if (stillStored.length > 0) {
      await this.feed.appendMany(
        workspace,
        "turns",
        stillStored.map((id) => ({ record_id: id, op: "remove" })),
      );
      await this.turnsStored.delete(workspace, stillStored);
      const reasons = new Map(fresh.map((r) => [r.id, String(r.metadata.reason ?? "")]));
      await this.audit.appendMany(
        workspace,
        stillStored.map((memoryId) => ({
          action: "forget" as const,
          actor: principal.agent,
          memoryId,
          reason: `restored tombstone: ${reasons.get(memoryId)}`,
        })),
      );
    }
    return { stored: fresh.length, skipped: records.length - fresh.length, forgotten: stillStored.length, reembedded: 0 };
  }

  /** The exported vectors when they were made by this server's model; else the documents embedded again. */
  private async vectorsFor(records: ExportedRecord[], stamp: EmbeddingStamp | undefined) {
    const fits = (r: ExportedRecord) => stamp !== undefined && this.stored.fits(stamp, r.embedding);
    const reembedded = records.flatMap((r, i) => (fits(r) ? [] : [i]));
    const made = await this.embedder.embed(reembedded.map((i) => records[i]!.document));
    if (made.length !== reembedded.length) throw internal();
    const vectors = records.map((r) => r.embedding ?? []);
    reembedded.forEach((i, k) => (vectors[i] = made[k]!));
    return { vectors, reembedded };
  }
}

/** A message as `export_records` listed it (its checks passed), as the mailbox stores it. */
function messageOfRecord(r: ExportedRecord): StoredMessage {
  const f = r.metadata;
  return {
    id: r.id,
    from: String(f.from),
    to: String(f.to),
    subject: String(f.subject),
    body: r.document,
    memoryIds: String(f.memory_ids ?? "")
      .split(",")
      .filter(Boolean),
    sessionIds: f.session_ids === undefined ? [] : (JSON.parse(String(f.session_ids)) as string[]),
    digest: String(f.digest),
    sentAt: Number(f.sent_at),
    writeId: "",
    posted: false,
  };
}

function firstOfEachId(records: readonly ExportedRecord[]): ExportedRecord[] {
  const seen = new Set<string>();
  return records.filter((r) => !seen.has(r.id) && Boolean(seen.add(r.id)));
}

/**
 * What the rest of memory-core relies on in a stored record (openapi/src/stored-records.ts), checked before anything
 * is written: one record that fails refuses the whole batch, naming each record and field, and nothing is stored.
 */
function assertShapes(collection: ImportRequest["collection"], records: readonly ExportedRecord[]): void {
  const errors: FieldError[] = [];
  records.forEach((r, i) => {
    if (!hasPrefixOf(collection, r.id))
      errors.push({ path: `records/${i}/id`, message: `must start with ${prefixOf(collection)} for ${collection}` });
    for (const { field, problem } of damageOf(collection, r.metadata, "write")) {
      errors.push({ path: `records/${i}/metadata/${field}`, message: `of ${r.id} ${problem}` });
    }
  });
  if (errors.length > 0) {
    throw validationFailed(
      errors.slice(0, 20),
      "Nothing of this batch was stored. Import records exactly as export_records listed them; a backup whose records fail these checks was changed or damaged after it was written: restore an earlier one, or mend or leave out the records named.",
    );
  }
}
