import type { EmbeddedCollectionName, Metadata, StoredRecord, Where } from "../store/chroma-store.js";
import { quarantineId, recordOfQuarantine, type Ledger } from "./ledger.js";

/**
 * Damaged records (openapi/src/stored-records.ts) that `repair_store` took out of their collection, in the ledger
 * under `quarantine:<record id>`: the record whole (its text and its metadata as stored, as JSON), what was wrong
 * with it, and who moved it when. Nothing of it is lost, and no reader meets it again; `get_memory` of its id says
 * that it was quarantined.
 */

/** Quarantine entries share the ledger with the rest; only they carry `quarantined_at`. */
const QUARANTINE_FILTER: Where = { quarantined_at: { $gte: 0 } };

export interface Quarantined {
  recordId: string;
  collection: EmbeddedCollectionName;
  damage: string;
  /** The write that stored the record, when it says: its provisional audit entry still stands (audit-log.ts). */
  writeId: string | undefined;
}

export class Quarantine {
  constructor(private readonly ledger: Ledger) {}

  /** Keeps these records in quarantine; a record quarantined already keeps its first entry. */
  async keep(
    workspace: string,
    collection: EmbeddedCollectionName,
    records: readonly StoredRecord[],
    by: string,
    at: number,
  ): Promise<void> {
    await this.ledger.insertIfAbsent(
      workspace,
      records.map((r) => ({
        id: quarantineId(r.id),
        metadata: {
          quarantined_at: at,
          quarantined_by: by,
          collection,
          damage: r.damage ?? "",
          record_text: r.document ?? "",
          stored_metadata: JSON.stringify(r.metadata),
        },
      })),
    );
  }

  /** Those of these records that are in quarantine. One lookup. */
  async of(workspace: string, recordIds: readonly string[]): Promise<Quarantined[]> {
    return (await this.ledger.get(workspace, recordIds.map(quarantineId))).map(quarantinedOf);
  }

  /** Every quarantined record of the workspace: a scan, but damage is rare. */
  async all(workspace: string): Promise<Quarantined[]> {
    return (await this.ledger.find(workspace, QUARANTINE_FILTER)).map(quarantinedOf);
  }
}

const quarantinedOf = (entry: { id: string; metadata: Metadata }): Quarantined => ({
  recordId: recordOfQuarantine(entry.id),
  collection: entry.metadata.collection === "summaries" ? "summaries" : "turns",
  damage: String(entry.metadata.damage ?? ""),
  writeId: writeIdOf(entry.metadata),
});

function writeIdOf(metadata: Metadata): string | undefined {
  try {
    const stored = JSON.parse(String(metadata.stored_metadata)) as Record<string, unknown>;
    return typeof stored.write_id === "string" ? stored.write_id : undefined;
  } catch {
    return undefined;
  }
}
