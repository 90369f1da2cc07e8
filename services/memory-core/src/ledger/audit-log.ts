import { randomUUID } from "node:crypto";
import { assertWithinListing, type ItemPosition } from "../records/cursor.js";
import type { Metadata } from "../store/chroma-store.js";
import type { StoredRecords } from "../records/stored-records.js";
import type { Schemas } from "../records/types.js";
import type { AppendRequest, Sequences } from "./sequences.js";
import { itemsOf } from "./slot-items.js";
import type { Tombstones } from "./tombstones.js";
import type { Quarantine } from "./quarantine.js";

/**
 * The audit log: an append-only sequence (`@audit`, see sequences.ts) in the ledger with one entry per mutation that took
 * effect — who, when, which memory, why — and never a memory's content.
 *
 * Corrections are logged after they succeeded. A new memory's `add` entry is written with its recency slot,
 * before the record, and is provisional: it stands only once the memory stored carries the entry's write id
 * (or, once forgotten, its tombstone does). A write cut off after its entry, retried, or beaten by a racing
 * writer of the same id therefore leaves exactly one `add` entry that stands, without a second pass after
 * the write. Entries retired by `repair_store` are marked `void` and skipped.
 */

/** An entry as the contract returns it. */
export type AuditEntry = Schemas["AuditEntry"];
export type AuditAction = AuditEntry["action"];

export interface AuditFilter {
  memoryId?: string;
  agent?: string;
  since?: number;
  until?: number;
}

export interface NewAuditEntry {
  action: AuditAction;
  actor: string;
  /** The memory it was done to; a message's entry names its messages instead. */
  memoryId?: string;
  reason?: string;
  /** For `named_replacement`: the memory it was named the replacement of. */
  replaces?: string;
  /** For `send_message` and `ack_messages`: the messages sent or marked read (a bounded list: ack_messages takes 100 at most). */
  messageIds?: readonly string[];
  /** For `send_message`: its recipient, an agent or `team`. */
  to?: string;
}

/**
 * The entry under a memory named the replacement of another (`supersede_memory` with `by`): its record changed (its
 * `supersedes` gained the other), so its own history says who did that and why, whoever wrote it.
 */
export const replacementEntry = (actor: string, memoryId: string, replaces: string, reason: string): NewAuditEntry => ({
  action: "named_replacement",
  actor,
  memoryId,
  replaces,
  reason,
});

export const AUDIT_STREAM = "@audit";
const PAGE = 500;
/** How many slots a read takes first, before it knows how many entries they hold. */
const FIRST_SPAN = 8;

const payloadOf = (e: NewAuditEntry): Metadata => ({
  action: e.action,
  actor: e.actor,
  ...(e.memoryId !== undefined ? { memory_id: e.memoryId } : {}),
  ...(e.replaces ? { replaces: e.replaces } : {}),
  ...(e.reason ? { reason: e.reason } : {}),
  // A slot's fields are flat values: message ids (which hold no comma) as one comma-separated string.
  ...(e.messageIds ? { message_ids: e.messageIds.join(",") } : {}),
  ...(e.to !== undefined ? { to: e.to } : {}),
});

/** An entry that stands as it is written, appended with the other slots of the change it records (see Sequences.appendAcross). */
export const auditAppend = (entry: NewAuditEntry): AppendRequest => ({ stream: AUDIT_STREAM, payload: payloadOf(entry) });

/**
 * An entry that stands once the memory it names is stored with the write id it is appended with (see above):
 * one of the slots a write takes at once (see Sequences.appendAcross).
 */
export const provisionalAuditAppend = (entry: NewAuditEntry): AppendRequest => ({
  stream: AUDIT_STREAM,
  payload: { ...payloadOf(entry), provisional: true },
});

export class AuditLog {
  constructor(
    private readonly stored: StoredRecords,
    private readonly sequences: Sequences,
    private readonly tombstones: Tombstones,
    private readonly quarantine: Quarantine,
  ) {}

  async append(workspace: string, entry: NewAuditEntry): Promise<void> {
    await this.sequences.append(workspace, AUDIT_STREAM, payloadOf(entry), randomUUID());
  }

  /** Several entries in one batch (a restore, a repair), in their order. */
  async appendMany(workspace: string, entries: readonly NewAuditEntry[]): Promise<void> {
    await this.sequences.appendMany(workspace, AUDIT_STREAM, entries.map(payloadOf), randomUUID());
  }

  /**
   * Entries from `from` on (a slot, and the entry of it to start at), oldest first, that pass the filter; `next` is
   * where to go on from: the next entry of the slot the page ended in, or the next slot's start.
   */
  async read(
    workspace: string,
    filter: AuditFilter,
    limit: number,
    from: ItemPosition,
  ): Promise<{ entries: AuditEntry[]; next: ItemPosition | null }> {
    const length = await this.sequences.length(workspace, AUDIT_STREAM);
    // The walk below reads every position from `from` on: one the log never reached was never issued, nor an entry
    // within a slot the log does not hold yet.
    assertWithinListing(from.item > 0 ? from.at + 1 : from.at, length, "after");
    const passes = (entry: Metadata) => {
      const at = Number(entry.recorded_at);
      return !(
        (filter.memoryId !== undefined && entry.memory_id !== filter.memoryId) ||
        (filter.agent !== undefined && entry.actor !== filter.agent) ||
        (filter.since !== undefined && at < filter.since) ||
        (filter.until !== undefined && at >= filter.until)
      );
    };
    const entries: AuditEntry[] = [];
    let position = from;
    // A slot may hold a whole batch's entries, so a short page reads a few slots first and more only when those
    // did not fill it.
    let span = Math.min(PAGE, Math.max(FIRST_SPAN, limit));
    while (position.at < length && entries.length < limit) {
      const start = position;
      const seqs = Array.from({ length: Math.min(span, length - start.at) }, (_, i) => start.at + i);
      span = Math.min(PAGE, span * 2);
      const slots = await this.sequences.read(workspace, AUDIT_STREAM, seqs);
      const itemsAt = new Map([...slots].map(([seq, slot]) => [seq, itemsOf(slot)]));
      const standing = await this.standing(workspace, [...itemsAt.values()].flat().filter(passes));
      walk: for (const seq of seqs) {
        const items = itemsAt.get(seq) ?? [];
        // An entry past the slot's last (only a forged cursor names one) reads as the slot's end.
        for (let item = seq === start.at ? start.item : 0; item < items.length; item++) {
          const entry = items[item]!;
          if (!passes(entry) || !standing(entry)) continue;
          entries.push(entryOf(entry));
          if (entries.length >= limit) {
            position = item + 1 < items.length ? { at: seq, item: item + 1 } : { at: seq + 1, item: 0 };
            break walk;
          }
        }
        position = { at: seq + 1, item: 0 };
      }
    }
    return { entries, next: position.at < length ? position : null };
  }

  /**
   * Which of these entries stand: not void, and, when provisional, written by the write that the memory (or
   * its tombstone, or its copy in quarantine) holds. One lookup of each for the whole batch. An entry is
   * a flat slot or one of a batch slot's entries (`itemsOf`), each with the write id of its own write.
   */
  async standing(workspace: string, entries: readonly Metadata[]): Promise<(entry: Metadata) => boolean> {
    const provisional = [...new Set(entries.filter((e) => e.provisional === true && e.void !== true).map((e) => String(e.memory_id)))];
    const writeOf = new Map<string, unknown>();
    if (provisional.length > 0) {
      for (const [id, writeId] of await this.stored.writeIds(workspace, provisional, { withDamaged: true })) writeOf.set(id, writeId);
      const missing = provisional.filter((id) => !writeOf.has(id));
      for (const [memoryId, tombstone] of await this.tombstones.of(workspace, missing)) writeOf.set(memoryId, tombstone.writeId);
      const unknown = missing.filter((id) => !writeOf.has(id));
      for (const q of await this.quarantine.of(workspace, unknown)) writeOf.set(q.recordId, q.writeId);
    }
    return (entry) => stands(entry, writeOf);
  }
}

/**
 * Whether an entry (a flat slot, or one of a batch slot's entries) stands, given the write id each memory (or its
 * tombstone) holds.
 */
export const stands = (entry: Metadata, writeOf: ReadonlyMap<string, unknown>) =>
  entry.void !== true && (entry.provisional !== true || writeOf.get(String(entry.memory_id)) === entry.write_id);

/** An entry (a flat slot, or one of a batch slot's entries) as the contract returns it. */
export function entryOf(entry: Metadata): AuditEntry {
  return {
    action: String(entry.action) as AuditAction,
    actor: String(entry.actor),
    ...(typeof entry.memory_id === "string" ? { memory_id: entry.memory_id } : {}),
    ...(typeof entry.replaces === "string" ? { replaces: entry.replaces } : {}),
    ...(typeof entry.reason === "string" ? { reason: entry.reason } : {}),
    ...(typeof entry.message_ids === "string" ? { message_ids: entry.message_ids.split(",").filter(Boolean) } : {}),
    ...(typeof entry.to === "string" ? { to: entry.to } : {}),
    at: new Date(Number(entry.recorded_at)).toISOString(),
  };
}
