import {
  LEDGER_COLLECTIONS,
  RECENCY_STAMP,
  type ChromaStore,
  type EmbeddingStamp,
  type LedgerCollectionName,
  type Metadata,
  type RecordCollection,
  type StoredRecord,
  type Where,
} from "../store/chroma-store.js";
import { packFields, unpackFields } from "../store/metadata-layout.js";

/**
 * Chroma used as a log: the workspace's ledger collections hold no meaning to search, only records that other
 * records are ordered, announced, audited, forgotten and coordinated by. This module is the only one that writes
 * them and the only one that knows their ids; the parts beside it give each kind its meaning:
 *
 *   seq:<stream>:<n>       a slot of a sequence (sequences.ts): an agent's turns, a change feed
 *                          (change-feed.ts, streams `@turns` and `@summaries`), the audit log (audit-log.ts, `@audit`)
 *   tomb:<memory id>       a forgotten memory's tombstone (tombstones.ts)
 *   quarantine:<record id> a damaged record taken out of its collection by repair_store, kept whole (quarantine.ts)
 *   keyed:<content id>     the id a write with an idempotency key stored a turn under (keyed-markers.ts)
 *   lease:<session>:<n>    a summarizer's lease of a session (session-leases.ts)
 *   mail:…                 the mailbox (mailbox.ts): messages, read marks, and the slots of its streams `mail:…`
 *
 * Every record is written with Chroma's `add`, which keeps the first record of an id: an insert-if-absent, so
 * whoever reads back its own write id won. Ids are looked up, never scanned for, except where noted.
 *
 * Each kind that a write adds keeps a collection of its own (see `home`): agents' slots `ledger-slots`, the change
 * feeds `ledger-feed`, the audit log `ledger-audit`, keyed markers `ledger-keyed`, the mailbox `ledger-mail`; the
 * rest, which are few, stay in `recency`. Chroma writes a collection's vector index back every so many records, and with it a map of all
 * the collection's ids, so an `add` costs more as its collection grows; a turn adds one record to each of four
 * collections instead of four to one four times the size (docs/benchmarks.md, "A store of N turns": "each kind
 * of ledger entry in a collection of its own"). A store may also hold every kind in `recency` (the one-collection
 * layout, design.md, "Stored-format changes"): a stream's slots below the length it has there are read there
 * (`legacyLength`), and keyed markers are looked for in both, the one in `recency` first, as the first written.
 *
 * An entry's fields are stored as one JSON string under `fields` (see `stored`), except a tombstone's and a
 * quarantined record's, which are found by a filter on them. Chroma keeps a row and index entries per metadata key of every record, and a
 * workspace's ledger holds several records per turn: one key instead of seven or eight makes its writes cheaper
 * (docs/benchmarks.md, "A store of N turns": "the ledger's fields in one key"); its JSON begins with when it was
 * written, so that Chroma's index of metadata values grows at its end (`packFields`). Entries stored one key per
 * field read as they are.
 */

/** The ledger's records carry this constant vector; its collections are stamped `none`/1 to match (see the store). */
export const RECENCY_VECTOR: number[] = [1];

const SEQ_PREFIX = "seq:";
const KEYED_PREFIX = "keyed:";

export const slotId = (stream: string, seq: number) => `${SEQ_PREFIX}${stream}:${seq}`;

const TOMBSTONE_PREFIX = "tomb:";
export const tombstoneId = (memoryId: string) => `${TOMBSTONE_PREFIX}${memoryId}`;
/** The memory a tombstone's id names. */
export const memoryOfTombstone = (id: string) => id.slice(TOMBSTONE_PREFIX.length);

const QUARANTINE_PREFIX = "quarantine:";
export const quarantineId = (recordId: string) => `${QUARANTINE_PREFIX}${recordId}`;
/** The record a quarantine entry's id names. */
export const recordOfQuarantine = (id: string) => id.slice(QUARANTINE_PREFIX.length);

export const keyedMarkerId = (contentId: string) => `${KEYED_PREFIX}${contentId}`;

/** The mailbox's records and streams (mailbox.ts): agents' names cannot hold `:`, so no agent's stream starts so. */
export const MAIL_PREFIX = "mail:";

export const leaseId = (sessionId: string, n: number) => `lease:${sessionId}:${n}`;

/** The one record of a workspace that says how its last integrity check went. */
export const LAST_VERIFY_ID = "verify:last";

const FIELDS = "fields";

/** An entry's metadata as Chroma keeps it: its fields in one key, unless a filter must find them (tombstones, quarantine). */
function stored(entry: LedgerEntry): Metadata {
  return entry.id.startsWith(TOMBSTONE_PREFIX) || entry.id.startsWith(QUARANTINE_PREFIX)
    ? entry.metadata
    : { [FIELDS]: packFields(entry.metadata) };
}

/** An entry's fields from the metadata Chroma keeps: in one key, or one key per field. */
export function fieldsOf(metadata: Metadata): Metadata {
  const fields = metadata[FIELDS];
  return typeof fields === "string" ? (unpackFields(fields) as Metadata) : metadata;
}

/** What an entry of the log says: its fields, flat, each a string, a number or a boolean. */
export type LedgerFields = Metadata;

/** A record of the log: its id and what it says. */
export interface LedgerEntry {
  id: string;
  metadata: Metadata;
}

/** The collection an entry of this id is written to: its kind's. */
function home(id: string): LedgerCollectionName {
  const stream = streamOf(id);
  if (id.startsWith(MAIL_PREFIX) || stream?.startsWith(MAIL_PREFIX)) return "ledger-mail";
  if (stream === undefined) return id.startsWith(KEYED_PREFIX) ? "ledger-keyed" : "recency";
  if (stream === "@audit") return "ledger-audit";
  // Agents' names cannot start with `@` (auth/tokens.ts): the other streams are the change feeds.
  return stream.startsWith("@") ? "ledger-feed" : "ledger-slots";
}

/** The stream and position of a slot's id; undefined for any other id. */
function slotOf(id: string): { stream: string; seq: number } | undefined {
  if (!id.startsWith(SEQ_PREFIX)) return undefined;
  const at = id.lastIndexOf(":");
  return { stream: id.slice(SEQ_PREFIX.length, at), seq: Number(id.slice(at + 1)) };
}
const streamOf = (id: string) => slotOf(id)?.stream;

/** Streams' lengths in `recency`, remembered per workspace and stream, at most this many (cleared when full, then probed again). */
const MAX_LEGACY = 10_000;
/** Positions per lookup while narrowing a sequence's length: 64 ways a round. */
const PROBE_WIDTH = 64;

/**
 * The length of `stream`, a dense sequence (every position below its length holds a slot, none past it) whose
 * first `known` slots exist: `first` positions past them are probed, then exponentially further for a bound, then
 * the bound is narrowed 64 ways a round. `present` answers which of some slot ids exist.
 */
export async function denseLength(
  stream: string,
  known: number,
  first: number,
  present: (ids: string[]) => Promise<Set<string>>,
): Promise<number> {
  let low = known; // slots below `low` exist
  let high = Number.MAX_SAFE_INTEGER; // slot `high` does not
  const probe = async (points: number[]) => {
    const ids = points.map((n) => slotId(stream, n));
    const found = await present(ids);
    points.forEach((p, i) => {
      if (found.has(ids[i]!)) low = Math.max(low, p + 1);
      else high = Math.min(high, p);
    });
  };
  await probe(Array.from({ length: first }, (_, k) => low + 2 ** k - 1));
  if (high === Number.MAX_SAFE_INTEGER) await probe(Array.from({ length: 48 }, (_, k) => low + 2 ** k - 1));
  while (high > low) {
    const span = high - low;
    await probe(
      span <= PROBE_WIDTH
        ? Array.from({ length: span }, (_, i) => low + i)
        : Array.from({ length: PROBE_WIDTH }, (_, i) => low + Math.floor((span * i) / PROBE_WIDTH)),
    );
  }
  return low;
}

export class Ledger {
  /** Per workspace and stream, how far the stream reaches in `recency` (see above): no new slot goes there. */
  private readonly legacy = new Map<string, Promise<number>>();

  constructor(private readonly store: ChromaStore) {}

  /** Writes each entry unless its id is taken; says nothing of who won: read the entries back to know. */
  async insertIfAbsent(workspace: string, entries: readonly LedgerEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const homes = await this.locate(workspace, entries, (e) => e.id);
    await Promise.all(
      [...homes].map(async ([name, part]) =>
        (await this.records(workspace, name)).add(
          part.map((e) => ({ id: e.id, embedding: RECENCY_VECTOR, document: "", metadata: stored(e) })),
        ),
      ),
    );
  }

  /** The entries of these ids that exist. */
  async get(workspace: string, ids: readonly string[]): Promise<StoredRecord[]> {
    if (ids.length === 0) return [];
    const found = await this.lookUp(workspace, ids, async (records, part) => records.get({ ids: part }));
    return read(found);
  }

  /** Which of these ids exist, without their metadata. */
  async present(workspace: string, ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const found = await this.lookUp(workspace, ids, async (records, part) => [...(await records.present(part))].map((id) => ({ id })));
    return new Set(found.map((r) => r.id));
  }

  /**
   * Rewrites entries' metadata in place: for marks on a record (void, a lease renewed), never to take an id. An
   * entry stored one key per field keeps those keys (Chroma merges an update), and its `fields` key is what reads.
   * Keyed markers are never rewritten.
   */
  async update(workspace: string, entries: readonly LedgerEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const homes = await this.locate(workspace, entries, (e) => e.id);
    await Promise.all(
      [...homes].map(async ([name, part]) =>
        (await this.records(workspace, name)).updateMetadata(part.map((e) => ({ id: e.id, metadata: stored(e) }))),
      ),
    );
  }

  /** Entries matching a filter: a scan of `recency` on this Chroma, for what is rare and stays there (tombstones, quarantine). */
  async find(workspace: string, where: Where): Promise<StoredRecord[]> {
    return read(await (await this.records(workspace, "recency")).get({ where }));
  }

  /**
   * A page of one collection's entries in the order they were added (Chroma's order for a `get` without a filter),
   * and how many it holds: a scan, for backups (the mailbox's, see admin/record-export.ts).
   */
  async page(
    workspace: string,
    collection: LedgerCollectionName,
    offset: number,
    limit: number,
    checkOffset: (total: number) => void,
  ): Promise<{ entries: StoredRecord[]; total: number }> {
    const records = await this.records(workspace, collection);
    const total = await records.count();
    checkOffset(total);
    return { entries: offset < total ? read(await records.get({ offset, limit })) : [], total };
  }

  /** How many entries each of the ledger's collections holds, and the stamp they carry (`none`/1). */
  async counts(workspace: string): Promise<Array<{ collection: LedgerCollectionName; count: number; stamp: EmbeddingStamp }>> {
    return Promise.all(
      LEDGER_COLLECTIONS.map(async (collection) => ({
        collection,
        count: await (await this.records(workspace, collection)).count(),
        stamp: RECENCY_STAMP,
      })),
    );
  }

  /**
   * Ids looked up where they are: each slot in the one collection that holds its position, a keyed marker in
   * its kind's and, in a store whose `recency` holds a turns feed (the one-collection layout), in `recency` too,
   * whose marker comes first.
   */
  private async lookUp<R extends { id: string }>(
    workspace: string,
    ids: readonly string[],
    look: (records: RecordCollection, ids: string[]) => Promise<R[]>,
  ): Promise<R[]> {
    const homes = await this.locate(workspace, ids, (id) => id);
    const keyed = homes.get("ledger-keyed");
    if (keyed && (await this.legacyLength(workspace, "@turns")) > 0) homes.set("recency", [...(homes.get("recency") ?? []), ...keyed]);
    const parts = await Promise.all(
      [...homes].map(async ([name, part]) => ({ name, found: await look(await this.records(workspace, name), part) })),
    );
    const byId = new Map<string, R>();
    for (const name of LEDGER_COLLECTIONS)
      for (const r of parts.find((p) => p.name === name)?.found ?? []) if (!byId.has(r.id)) byId.set(r.id, r);
    return [...byId.values()];
  }

  /** Items grouped by the collection that holds (or will hold) their id. */
  private async locate<T>(workspace: string, items: readonly T[], idOf: (item: T) => string): Promise<Map<LedgerCollectionName, T[]>> {
    const streams = [...new Set(items.flatMap((item) => slotOf(idOf(item))?.stream ?? []))];
    const lengths = new Map(
      await Promise.all(streams.map(async (stream) => [stream, await this.legacyLength(workspace, stream)] as const)),
    );
    const homes = new Map<LedgerCollectionName, T[]>();
    for (const item of items) {
      const id = idOf(item);
      const slot = slotOf(id);
      const name = slot && slot.seq < (lengths.get(slot.stream) ?? 0) ? "recency" : home(id);
      const list = homes.get(name) ?? [];
      list.push(item);
      homes.set(name, list);
    }
    return homes;
  }

  /**
   * How long a stream is in `recency`: 0 unless the store holds the one-collection layout. No new slot is written
   * to `recency`, so the length is found once per process: slot 0, then exponentially, then narrowed.
   */
  private legacyLength(workspace: string, stream: string): Promise<number> {
    const key = `${workspace}|${stream}`;
    let length = this.legacy.get(key);
    if (!length) {
      if (this.legacy.size >= MAX_LEGACY) this.legacy.clear();
      length = this.probeLegacy(workspace, stream);
      this.legacy.set(key, length);
      length.catch(() => this.legacy.delete(key));
    }
    return length;
  }

  private async probeLegacy(workspace: string, stream: string): Promise<number> {
    const records = await this.records(workspace, "recency");
    return denseLength(stream, 0, 1, (ids) => records.present(ids));
  }

  private records(workspace: string, name: LedgerCollectionName) {
    return this.store.collection(workspace, name);
  }
}

const read = (records: StoredRecord[]): StoredRecord[] => records.map((r) => ({ ...r, metadata: fieldsOf(r.metadata) }));
