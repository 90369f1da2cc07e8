import { randomUUID } from "node:crypto";
import { invalidCursor } from "../errors.js";
import type { Sequences } from "./sequences.js";

/**
 * The audit log: an append-only sequence (`@audit`, see sequences.ts) with one entry per mutation that took
 * effect — who, when, which memory, why — and never a memory's content. Entries are appended after the
 * mutation succeeded, so a replayed or refused write leaves none.
 */

export type AuditAction = "add" | "supersede" | "mark_outdated" | "forget" | "restore";

export interface AuditEntry {
  action: AuditAction;
  actor: string;
  memory_id: string;
  reason?: string;
  at: string;
}

export interface AuditFilter {
  memoryId?: string;
  agent?: string;
  since?: number;
  until?: number;
}

const STREAM = "@audit";
const PAGE = 500;

export class AuditLog {
  constructor(private readonly sequences: Sequences) {}

  async append(workspace: string, entry: { action: AuditAction; actor: string; memoryId: string; reason?: string }): Promise<void> {
    await this.sequences.append(
      workspace,
      STREAM,
      { action: entry.action, actor: entry.actor, memory_id: entry.memoryId, ...(entry.reason ? { reason: entry.reason } : {}) },
      randomUUID(),
    );
  }

  /** Several entries in one batch (a restore), in their order. */
  async appendMany(workspace: string, entries: ReadonlyArray<{ action: AuditAction; actor: string; memoryId: string; reason?: string }>): Promise<void> {
    await this.sequences.appendMany(
      workspace,
      STREAM,
      entries.map((e) => ({ action: e.action, actor: e.actor, memory_id: e.memoryId, ...(e.reason ? { reason: e.reason } : {}) })),
      randomUUID(),
    );
  }

  /** Entries from position `from` on, oldest first, that pass the filter; `next` is where to go on from. */
  async read(workspace: string, filter: AuditFilter, limit: number, from: number): Promise<{ entries: AuditEntry[]; next: number | null }> {
    const length = await this.sequences.length(workspace, STREAM);
    // The walk below reads every position from `from` on: one the log never reached was never issued.
    if (from < 0 || from > length) throw invalidCursor("after", "points past the end of this listing");
    const entries: AuditEntry[] = [];
    let position = from;
    while (position < length && entries.length < limit) {
      const seqs = Array.from({ length: Math.min(PAGE, length - position) }, (_, i) => position + i);
      const slots = await this.sequences.read(workspace, STREAM, seqs);
      for (const seq of seqs) {
        position = seq + 1;
        const slot = slots.get(seq);
        if (!slot) continue;
        const at = Number(slot.recorded_at);
        if (filter.memoryId !== undefined && slot.memory_id !== filter.memoryId) continue;
        if (filter.agent !== undefined && slot.actor !== filter.agent) continue;
        if (filter.since !== undefined && at < filter.since) continue;
        if (filter.until !== undefined && at >= filter.until) continue;
        entries.push({
          action: String(slot.action) as AuditAction,
          actor: String(slot.actor),
          memory_id: String(slot.memory_id),
          ...(typeof slot.reason === "string" ? { reason: slot.reason } : {}),
          at: new Date(at).toISOString(),
        });
        if (entries.length >= limit) break;
      }
    }
    return { entries, next: position < length ? position : null };
  }
}
