import type { Metadata, Scalar, Where } from "../store/chroma-store.js";
import { memoryOfTombstone, tombstoneId, type Ledger, type LedgerEntry } from "./ledger.js";

/**
 * A forgotten memory's tombstone, in the ledger under `tomb:<memory id>`: who, when, why — never what. It keeps
 * the forgotten write's id when one is known, so that the memory's provisional `add` audit entry still stands
 * once the memory is gone (see audit-log.ts).
 */

/** Tombstones share the ledger with the sequence slots; only they carry `forgotten_at`. */
const TOMBSTONE_FILTER: Where = { forgotten_at: { $gte: 0 } };

export interface Forgotten {
  at: Scalar;
  by: Scalar;
  reason: Scalar;
  writeId: Scalar | undefined;
}

function tombstoneEntry(memoryId: string, forgotten: Forgotten): LedgerEntry {
  return {
    id: tombstoneId(memoryId),
    metadata: {
      forgotten_at: forgotten.at,
      forgotten_by: forgotten.by,
      reason: forgotten.reason,
      ...(forgotten.writeId !== undefined ? { write_id: forgotten.writeId } : {}),
    },
  };
}

export class Tombstones {
  constructor(private readonly ledger: Ledger) {}

  /** The tombstones of those of these memories that were forgotten, by memory id. One lookup. */
  async of(workspace: string, memoryIds: readonly string[]): Promise<Map<string, Metadata>> {
    const found = await this.ledger.get(workspace, memoryIds.map(tombstoneId));
    return new Map(found.map((t) => [memoryOfTombstone(t.id), t.metadata]));
  }

  /** Leaves tombstones; a memory forgotten already keeps its first. */
  async leave(workspace: string, tombstones: ReadonlyArray<{ memoryId: string; forgotten: Forgotten }>): Promise<void> {
    await this.ledger.insertIfAbsent(
      workspace,
      tombstones.map((t) => tombstoneEntry(t.memoryId, t.forgotten)),
    );
  }

  /** Every tombstone of the workspace, in the order they were left: a scan, but forgetting is rare. */
  async all(workspace: string): Promise<Array<{ memoryId: string; metadata: Metadata }>> {
    return (await this.ledger.find(workspace, TOMBSTONE_FILTER)).map((t) => ({ memoryId: memoryOfTombstone(t.id), metadata: t.metadata }));
  }
}
