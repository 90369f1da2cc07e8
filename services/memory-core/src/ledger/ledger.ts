import type { ChromaStore, Metadata, StoredRecord, Where } from "../store/chroma-store.js";

/**
 * Chroma used as a log: the workspace's `recency` collection holds no meaning to search, only records that
 * other records are ordered, announced, audited, forgotten and coordinated by. This module is the only one that
 * writes them and the only one that knows their ids; the parts beside it give each kind its meaning:
 *
 *   seq:<stream>:<n>       a slot of a sequence (sequences.ts): an agent's turns, a change feed
 *                          (change-feed.ts, streams `@turns` and `@summaries`), the audit log (audit-log.ts, `@audit`)
 *   tomb:<memory id>       a forgotten memory's tombstone (tombstones.ts)
 *   keyed:<content id>     the id a write with an idempotency key stored a turn under (keyed-markers.ts)
 *   lease:<session>:<n>    a summarizer's lease of a session (the summarizer's lease.ts)
 *
 * Every record is written with Chroma's `add`, which keeps the first record of an id: an insert-if-absent, so
 * whoever reads back its own write id won. Ids are looked up, never scanned for, except where noted.
 *
 * An entry's fields are stored as one JSON string under `fields` (see `stored`), except a tombstone's, which are
 * found by a filter on them. Chroma keeps a row and index entries per metadata key of every record, and a
 * workspace's ledger holds several records per turn: one key instead of seven or eight makes its writes cheaper
 * (docs/benchmarks.md). Entries written before, one key per field, read as they always did.
 */

/** The collection's records carry this constant vector; the collection is stamped `none`/1 to match (see the store). */
export const RECENCY_VECTOR: number[] = [1];

export const slotId = (stream: string, seq: number) => `seq:${stream}:${seq}`;

const TOMBSTONE_PREFIX = "tomb:";
export const tombstoneId = (memoryId: string) => `${TOMBSTONE_PREFIX}${memoryId}`;
/** The memory a tombstone's id names. */
export const memoryOfTombstone = (id: string) => id.slice(TOMBSTONE_PREFIX.length);

export const keyedMarkerId = (contentId: string) => `keyed:${contentId}`;

export const leaseId = (sessionId: string, n: number) => `lease:${sessionId}:${n}`;

/** The one record of a workspace that says how its last integrity check went. */
export const LAST_VERIFY_ID = "verify:last";

const FIELDS = "fields";

/** An entry's metadata as Chroma keeps it: its fields in one key, unless a filter must find them (tombstones). */
function stored(entry: LedgerEntry): Metadata {
  return entry.id.startsWith(TOMBSTONE_PREFIX) ? entry.metadata : { [FIELDS]: JSON.stringify(entry.metadata) };
}

/** An entry's fields from the metadata Chroma keeps: in one key, or one key per field as written before. */
export function fieldsOf(metadata: Metadata): Metadata {
  const fields = metadata[FIELDS];
  return typeof fields === "string" ? (JSON.parse(fields) as Metadata) : metadata;
}

/** A record of the log: its id and what it says. */
export interface LedgerEntry {
  id: string;
  metadata: Metadata;
}

export class Ledger {
  constructor(private readonly store: ChromaStore) {}

  /** Writes each entry unless its id is taken; says nothing of who won: read the entries back to know. */
  async insertIfAbsent(workspace: string, entries: readonly LedgerEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const records = await this.records(workspace);
    await records.add(entries.map((e) => ({ id: e.id, embedding: RECENCY_VECTOR, document: "", metadata: stored(e) })));
  }

  /** The entries of these ids that exist. */
  async get(workspace: string, ids: readonly string[]): Promise<StoredRecord[]> {
    if (ids.length === 0) return [];
    return read(await (await this.records(workspace)).get({ ids: [...ids] }));
  }

  /** Which of these ids exist, without their metadata. */
  async present(workspace: string, ids: readonly string[]): Promise<Set<string>> {
    return (await this.records(workspace)).present(ids);
  }

  /**
   * Rewrites entries' metadata in place: for marks on a record (void, a lease renewed), never to take an id. An
   * entry written one key per field keeps those keys (Chroma merges an update); its fields key now says it all.
   */
  async update(workspace: string, entries: readonly LedgerEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await (await this.records(workspace)).updateMetadata(entries.map((e) => ({ id: e.id, metadata: stored(e) })));
  }

  /** Entries matching a filter: a scan of the whole collection on this Chroma, for what is rare (tombstones). */
  async find(workspace: string, where: Where): Promise<StoredRecord[]> {
    return read(await (await this.records(workspace)).get({ where }));
  }

  async count(workspace: string): Promise<number> {
    return (await this.records(workspace)).count();
  }

  private records(workspace: string) {
    return this.store.collection(workspace, "recency");
  }
}

const read = (records: StoredRecord[]): StoredRecord[] => records.map((r) => ({ ...r, metadata: fieldsOf(r.metadata) }));
