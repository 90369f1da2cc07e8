import { randomUUID } from "node:crypto";
import { assertWithinListing } from "../records/cursor.js";
import type { ChromaStore, Metadata } from "../store/chroma-store.js";
import type { Schemas } from "../records/types.js";
import type { AppendRequest, Sequences } from "./sequences.js";
import { Tombstones } from "./tombstones.js";

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
  memoryId: string;
  reason?: string;
}

export const AUDIT_STREAM = "@audit";
const PAGE = 500;

const payloadOf = (e: NewAuditEntry): Metadata => ({
  action: e.action,
  actor: e.actor,
  memory_id: e.memoryId,
  ...(e.reason ? { reason: e.reason } : {}),
});

/**
 * An entry that stands once the memory it names is stored with the write id it is appended with (see above):
 * one of the slots a write takes at once (see Sequences.appendAcross).
 */
export const provisionalAuditAppend = (entry: NewAuditEntry): AppendRequest => ({
  stream: AUDIT_STREAM,
  payload: { ...payloadOf(entry), provisional: true },
});

export class AuditLog {
  private readonly tombstones: Tombstones;

  constructor(
    private readonly store: ChromaStore,
    private readonly sequences: Sequences,
  ) {
    this.tombstones = new Tombstones(store);
  }

  async append(workspace: string, entry: NewAuditEntry): Promise<void> {
    await this.sequences.append(workspace, AUDIT_STREAM, payloadOf(entry), randomUUID());
  }

  /** Several entries in one batch (a restore, a repair), in their order. */
  async appendMany(workspace: string, entries: readonly NewAuditEntry[]): Promise<void> {
    await this.sequences.appendMany(workspace, AUDIT_STREAM, entries.map(payloadOf), randomUUID());
  }

  /** Entries from position `from` on, oldest first, that pass the filter; `next` is where to go on from. */
  async read(workspace: string, filter: AuditFilter, limit: number, from: number): Promise<{ entries: AuditEntry[]; next: number | null }> {
    const length = await this.sequences.length(workspace, AUDIT_STREAM);
    // The walk below reads every position from `from` on: one the log never reached was never issued.
    assertWithinListing(from, length, "after");
    const entries: AuditEntry[] = [];
    let position = from;
    while (position < length && entries.length < limit) {
      const seqs = Array.from({ length: Math.min(PAGE, length - position) }, (_, i) => position + i);
      const slots = await this.sequences.read(workspace, AUDIT_STREAM, seqs);
      const passes = (slot: Metadata) => {
        const at = Number(slot.recorded_at);
        return !(
          (filter.memoryId !== undefined && slot.memory_id !== filter.memoryId) ||
          (filter.agent !== undefined && slot.actor !== filter.agent) ||
          (filter.since !== undefined && at < filter.since) ||
          (filter.until !== undefined && at >= filter.until)
        );
      };
      const standing = await this.standing(workspace, [...slots.values()].filter(passes));
      for (const seq of seqs) {
        position = seq + 1;
        const slot = slots.get(seq);
        if (!slot || !passes(slot) || !standing(slot)) continue;
        entries.push(entryOf(slot));
        if (entries.length >= limit) break;
      }
    }
    return { entries, next: position < length ? position : null };
  }

  /**
   * Which of these entries stand: not void, and, when provisional, written by the write that the memory (or
   * its tombstone) holds. One lookup of the memories and one of the tombstones for the whole batch.
   */
  async standing(workspace: string, slots: readonly Metadata[]): Promise<(slot: Metadata) => boolean> {
    const provisional = [...new Set(slots.filter((s) => s.provisional === true && s.void !== true).map((s) => String(s.memory_id)))];
    const writeOf = new Map<string, unknown>();
    if (provisional.length > 0) {
      const turns = await this.store.collection(workspace, "turns");
      for (const t of await turns.get({ ids: provisional })) writeOf.set(t.id, t.metadata.write_id);
      const missing = provisional.filter((id) => !writeOf.has(id));
      for (const [memoryId, tombstone] of await this.tombstones.of(workspace, missing)) writeOf.set(memoryId, tombstone.write_id);
    }
    return (slot) => stands(slot, writeOf);
  }
}

/** Whether an entry stands, given the write id each memory (or its tombstone) holds. */
export const stands = (slot: Metadata, writeOf: ReadonlyMap<string, unknown>) =>
  slot.void !== true && (slot.provisional !== true || writeOf.get(String(slot.memory_id)) === slot.write_id);

export function entryOf(slot: Metadata): AuditEntry {
  return {
    action: String(slot.action) as AuditAction,
    actor: String(slot.actor),
    memory_id: String(slot.memory_id),
    ...(typeof slot.reason === "string" ? { reason: slot.reason } : {}),
    at: new Date(Number(slot.recorded_at)).toISOString(),
  };
}
