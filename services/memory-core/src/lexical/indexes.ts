import type { Logger } from "../logger.js";
import { ChangeFeed, FEED_PENDING_MS, type FeedCollection } from "../ledger/change-feed.js";
import { itemsOf, type SlotItem } from "../ledger/slot-items.js";
import type { Tombstones } from "../ledger/tombstones.js";
import { CollectionIndex, type LexicalDocument } from "./collection-index.js";
import { RankingHost, type RankingHandle } from "./ranking-host.js";
import type { LexicalTuning } from "./lexical-tuning.js";
import { summaryOfIndexed, turnOfIndexed, type IndexedCollections, type IndexedRecord } from "../records/indexed-collections.js";
import { textOf } from "../records/stored-turn.js";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { setImmediate as yieldToLoop } from "node:timers/promises";
import { readSnapshot, writeSnapshot, type SnapshotHeader } from "./snapshot.js";
import { ANALYSIS_VERSION } from "./text-analysis.js";
import type { Storage } from "../storage.js";

/** The collections searched lexically: those with a change feed (see ledger/change-feed.ts). */
export type SearchableCollection = FeedCollection;

const PAGE = 500;
/**
 * Records asked of the ranking thread at a time while a snapshot is written: the thread turns each stretch into
 * its lines between queries, so a query waits for at most one stretch (docs/benchmarks.md, "A store of N turns":
 * "snapshots made on the ranking thread"); records put between yields to the event loop on load.
 */
export const SNAPSHOT_STRETCH = 250;

/**
 * Where and when the indexes are saved (snapshot.ts), so that a restart loads them instead of reading every
 * record out of Chroma.
 */
export interface SnapshotOptions {
  /** Snapshots go to `<dir>/<workspace>/<collection>.snap`. */
  dir: string;
  /** How often the background pass looks at every index (0: never; then only `persist()` and `close()` write). */
  everyMs?: number;
  /**
   * A pass writes an index this many feed entries past its snapshot, or 1% of its records when more (a start
   * catches up from the feed what the snapshot lacks, and a write costs in proportion to the records)...
   */
  minChanges?: number;
  /** ...or past it at all once the snapshot is this old, or once a record has left it (forget_memory). */
  maxAgeMs?: number;
  /**
   * After a snapshot is written, the pass leaves that index be for this many times as long as the write took
   * (unless a record has left it), so that background writes take a bounded share of memory-core's time however
   * large the index: a write costs in proportion to the records, and an index that grows by 1% a minute would
   * otherwise be rewritten every pass (docs/benchmarks.md, "A store of N turns": "snapshots that rest").
   */
  restAfterWrite?: number;
}

/** One index's sizes for /metrics; `terms` undefined when its ranking cannot tell (thread stopped). */
export interface IndexStats {
  workspace: string;
  collection: SearchableCollection;
  documents: number;
  terms: number | undefined;
}

/** The sizes of this replica's lexical indexes, and the heap of the thread that ranks them. */
export interface LexicalStats {
  indexes: IndexStats[];
  /** The ranking thread's V8 heap: every index's postings and ranked metadata together; undefined while no thread runs. */
  rankingHeapUsedBytes: number | undefined;
}
/** What query_raw_memories filters turns on by equality. */
const TURN_KEY_FIELDS = ["agent", "session_id", "kind", "check_status", "review_state"];

interface Entry {
  index: CollectionIndex;
  /** The index's ranking on the ranking thread, asked for its sizes. */
  ranker: RankingHandle;
  /** Feed slots consumed: a snapshot's position, so always a whole slot in one. */
  position: number;
  /**
   * Entries of the slot at `position` consumed already: a catch-up held back by an entry in flight in the middle
   * of a batch slot resumes there, without putting or removing the entries before it again. Never saved.
   */
  item: number;
  /** Feed entries consumed since the snapshot on disk: a batch slot counts for each of its entries. */
  changes: number;
  /** Catch-ups of one index run one at a time. */
  syncing: Promise<void>;
  /** False while a write in flight holds the last catch-up back (it waits up to FEED_PENDING_MS). */
  complete: boolean;
  /** The feed position of the snapshot on disk (written or loaded); undefined when there is none. */
  persisted: number | undefined;
  persistedAt: number;
  /** How long writing the snapshot on disk took (0 when it was loaded, not written). */
  writeMs: number;
  /** Records removed (forgotten) so far: a snapshot written while one leaves is thrown away. */
  removals: number;
  /** A record left since the snapshot on disk was written: it is rewritten at the next pass. */
  removedSincePersisted: boolean;
}

/**
 * The lexical indexes of this replica, one per workspace and collection: built from Chroma on first use,
 * then caught up from the change feed before every query, so that a write acknowledged by any replica is
 * found lexically by every replica at once.
 */
export class LexicalIndexes {
  private readonly entries = new Map<string, Promise<Entry>>();
  /** Each entry once built, so that reading sizes never waits for a build in progress. */
  private readonly built = new WeakMap<Promise<Entry>, Entry>();

  private readonly rankers: RankingHost;
  private readonly now: () => number;
  private readonly feed: ChangeFeed;
  private readonly tombstones: Tombstones;
  private readonly log: Logger | undefined;
  private readonly snapshots: Required<SnapshotOptions> | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Snapshots are written one at a time. */
  private writing: Promise<void> = Promise.resolve();

  private readonly collections: IndexedCollections;

  constructor(
    storage: Pick<Storage, "indexed" | "feed" | "tombstones">,
    private readonly tuning: LexicalTuning,
    options: { now?: () => number; log?: Logger; rankers?: RankingHost; snapshots?: SnapshotOptions } = {},
  ) {
    this.now = options.now ?? Date.now;
    ({ indexed: this.collections, feed: this.feed, tombstones: this.tombstones } = storage);
    const log = options.log;
    this.log = log;
    if (options.snapshots) {
      this.snapshots = { everyMs: 60_000, minChanges: 1000, maxAgeMs: 30 * 60_000, restAfterWrite: 9, ...options.snapshots };
      if (this.snapshots.everyMs > 0) {
        this.timer = setInterval(() => void this.persist("due"), this.snapshots.everyMs);
        this.timer.unref();
      }
    }
    const stopped = (error: unknown) =>
      log?.error("lexical ranking thread stopped; indexes are rebuilt from Chroma on next use", {
        error: error instanceof Error ? error.message : String(error),
      });
    this.rankers = options.rankers ?? new RankingHost(stopped);
  }

  /** Saves every index changed since its snapshot (when snapshots are on), then stops the ranking thread; the catalog is not used after. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.persist("all").catch(() => undefined);
    this.entries.clear();
    await this.rankers.close();
  }

  /**
   * Writes the snapshot of every built index that has changed since its own, after catching it up with the
   * feed (so that whatever forget_memory removed before is not in it); with `due`, only those the background
   * pass should write now (SnapshotOptions). Never on a request's path. Failures are logged, not thrown.
   */
  persist(which: "all" | "due" = "all"): Promise<void> {
    const options = this.snapshots;
    if (!options) return Promise.resolve();
    const run = this.writing.then(async () => {
      for (const [key, pending] of [...this.entries]) {
        const entry = this.built.get(pending);
        if (!entry?.index.alive) continue;
        const slash = key.lastIndexOf("/");
        const workspace = key.slice(0, slash);
        const collection = key.slice(slash + 1) as SearchableCollection;
        try {
          await this.sync(workspace, collection, entry);
          if (entry.persisted === entry.position) continue;
          const since = this.now() - entry.persistedAt;
          const due =
            which === "all" ||
            entry.persisted === undefined ||
            entry.removedSincePersisted ||
            (since >= options.restAfterWrite * entry.writeMs &&
              (entry.changes >= Math.max(options.minChanges, entry.index.size / 100) || since >= options.maxAgeMs));
          if (due) await this.write(workspace, collection, entry);
        } catch (error) {
          this.log?.warn("lexical snapshot not written", {
            workspace,
            collection,
            error: error instanceof Error ? error.message : String(error),
          });
        }
      }
    });
    this.writing = run.catch(() => undefined);
    return run;
  }

  private snapshotFile(workspace: string, collection: SearchableCollection): string {
    return join(this.snapshots!.dir, encodeURIComponent(workspace), `${collection}.snap`);
  }

  private fieldsOf(collection: SearchableCollection): string[] {
    return Object.keys(collection === "turns" ? this.tuning.turnFields : this.tuning.summaryFields);
  }

  /** Writes the index as it stands at its feed position; given up when a record leaves it meanwhile. */
  private async write(workspace: string, collection: SearchableCollection, entry: Entry): Promise<void> {
    // A write in flight holds the catch-up back, maybe in the middle of a slot: the next pass tries again.
    if (!entry.complete || entry.item !== 0) return;
    const position = entry.position;
    const changes = entry.changes;
    const removals = entry.removals;
    const started = this.now();
    const collectionId = await this.collections.collectionId(workspace, collection);
    const index = entry.index;
    const file = this.snapshotFile(workspace, collection);
    async function* stretches() {
      for (let from: number | undefined = 0; from !== undefined;) {
        const dump = await index.dump(from, SNAPSHOT_STRETCH);
        // A record removed while the snapshot is written may be in it already: thrown away, written again later.
        if (entry.removals !== removals) throw new Error("a record was removed while the snapshot was written");
        yield dump;
        from = dump.next;
      }
    }
    const written = await writeSnapshot(
      file,
      {
        analysis: ANALYSIS_VERSION,
        workspace,
        collection,
        collectionId,
        embedding: { model: this.collections.stamp.model, dimension: this.collections.stamp.dimension },
        fields: this.fieldsOf(collection),
        position,
      },
      stretches(),
    );
    entry.persisted = position;
    entry.persistedAt = this.now();
    entry.writeMs = entry.persistedAt - started;
    // Entries taken while the snapshot was written are not in it (or not surely): they count toward the next.
    entry.changes -= changes;
    // A record that left after the last stretch was read may be in the file: the next pass writes it again.
    entry.removedSincePersisted = entry.removals !== removals;
    this.log?.info("lexical snapshot written", { workspace, collection, position, records: written.records, bytes: written.bytes });
  }

  /**
   * The indexes built so far, as they stand (not caught up), with their sizes; never builds one, nor waits for
   * one being built. Workspaces come from the tokens file, so the list is as long as the operator made it.
   */
  async stats(): Promise<LexicalStats> {
    const built: Array<{ key: string; entry: Entry }> = [];
    for (const [key, pending] of this.entries) {
      const entry = this.built.get(pending);
      if (entry?.index.alive) built.push({ key, entry });
    }
    const indexes = await Promise.all(
      built.map(async ({ key, entry }): Promise<IndexStats> => {
        const slash = key.lastIndexOf("/");
        const ranked = await entry.ranker.stats().catch(() => undefined);
        return {
          workspace: key.slice(0, slash),
          collection: key.slice(slash + 1) as SearchableCollection,
          documents: entry.index.size,
          terms: ranked?.terms,
        };
      }),
    );
    return { indexes, rankingHeapUsedBytes: await this.rankers.heapUsedBytes() };
  }

  /**
   * A collection's index, as fresh as the caller needs:
   * - `caught-up`: once it holds every write acknowledged before the call (but one in flight holding it back);
   * - `complete`: the same, or undefined while a write in flight holds its catch-up back (then only Chroma has
   *   all of them);
   * - `as-is`: as it stands, not caught up, for estimates that need not be exact.
   * `read` is the query path's `caught-up`, overlapped with asking how far the change feed goes.
   */
  async snapshot(workspace: string, collection: SearchableCollection, freshness: "complete"): Promise<CollectionIndex | undefined>;
  async snapshot(workspace: string, collection: SearchableCollection, freshness?: "caught-up" | "as-is"): Promise<CollectionIndex>;
  async snapshot(
    workspace: string,
    collection: SearchableCollection,
    freshness: "caught-up" | "complete" | "as-is" = "caught-up",
  ): Promise<CollectionIndex | undefined> {
    if (freshness === "as-is") return (await this.entry(workspace, collection)).index;
    const entry = await this.caughtUp(workspace, collection);
    return freshness === "complete" && !entry.complete ? undefined : entry.index;
  }

  private async caughtUp(workspace: string, collection: SearchableCollection): Promise<Entry> {
    const entry = await this.entry(workspace, collection);
    await this.sync(workspace, collection, entry);
    return entry;
  }

  /**
   * `read(index)` as `snapshot` (`caught-up`) would give it, in less time: `read` runs on the index as it stands while Chroma
   * is asked how long the change feed is, and runs again after a catch-up only when the feed has moved past it.
   * The asking and the reading overlap instead of adding up.
   */
  async read<T>(
    workspace: string,
    collection: SearchableCollection,
    read: (index: CollectionIndex) => T | Promise<T>,
  ): Promise<{ index: CollectionIndex; value: T }> {
    const entry = await this.entry(workspace, collection);
    const length = this.feed.length(workspace, collection);
    length.catch(() => undefined); // awaited below; should `read` fail first, its failure is not left unhandled
    const position = entry.position;
    const value = await read(entry.index);
    // Every write acknowledged before this call has its feed entry below `length`: at or past it, nothing is
    // missing; short of it, catching up to it is enough, so the catch-up need not ask for the length again.
    const known = await length;
    if (known <= position) return { index: entry.index, value };
    await this.sync(workspace, collection, entry, known);
    return { index: entry.index, value: await read(entry.index) };
  }

  /** The index, built on first use, and built again when the ranking thread has lost it. */
  private async entry(workspace: string, collection: SearchableCollection): Promise<Entry> {
    const key = `${workspace}/${collection}`;
    const existing = this.entries.get(key);
    if (existing) {
      const entry = await existing.catch(() => undefined);
      if (entry?.index.alive) return entry;
      if (this.entries.get(key) === existing) this.entries.delete(key);
    }
    let pending = this.entries.get(key);
    if (!pending) {
      const building = this.build(workspace, collection);
      pending = building;
      this.entries.set(key, building);
      building.then(
        (entry) => this.built.set(building, entry),
        () => this.entries.delete(key),
      );
    }
    return pending;
  }

  /**
   * Catches the index up with the feed (to `length` when the caller has just read it); catch-ups of one index
   * run one at a time.
   */
  private async sync(workspace: string, collection: SearchableCollection, entry: Entry, length?: number): Promise<void> {
    const run = entry.syncing.catch(() => undefined).then(() => this.catchUp(workspace, collection, entry, length));
    entry.syncing = run;
    await run;
  }

  /**
   * The index as its snapshot left it, when there is one that fits, to be caught up from the feed from there;
   * else everything in the collection now, the feed from where it stood before the scan (re-reading is harmless).
   */
  private async build(workspace: string, collection: SearchableCollection): Promise<Entry> {
    // The feed's length is asked for while the snapshot loads: in a large store Chroma's first answer after a
    // start takes about as long as the snapshot does (docs/benchmarks.md, "Restart to first answered query").
    const feedLength = this.feed.length(workspace, collection);
    feedLength.catch(() => undefined); // awaited below, whatever the snapshot does
    const fetch = (ids: readonly string[]) => this.collections.byIds(workspace, collection, ids);
    const create = () => {
      const ranker =
        collection === "turns"
          ? this.rankers.create({
              boosts: this.tuning.turnFields,
              bm25: this.tuning.bm25,
              neighbourShare: this.tuning.neighbourShare,
              feedback: this.tuning.feedback,
            })
          : this.rankers.create({ boosts: this.tuning.summaryFields, bm25: this.tuning.bm25, neighbourShare: 0 });
      return { ranker, index: new CollectionIndex(ranker, collection === "turns" ? TURN_KEY_FIELDS : [], fetch) };
    };
    const fresh = (ranker: RankingHandle, index: CollectionIndex, at: number, persisted: number | undefined): Entry => ({
      index,
      ranker,
      position: at,
      item: 0,
      changes: 0,
      syncing: Promise.resolve(),
      complete: false,
      persisted,
      persistedAt: this.now(),
      writeMs: 0,
      removals: 0,
      removedSincePersisted: false,
    });
    const began = this.now();
    if (this.snapshots) {
      const loaded = create();
      const header = await this.load(workspace, collection, loaded.index, feedLength).catch((error: unknown) => {
        this.log?.warn("lexical snapshot ignored; index built from Chroma", {
          workspace,
          collection,
          reason: error instanceof Error ? error.message : String(error),
        });
        return undefined;
      });
      const position = await feedLength.catch((error: unknown) => {
        loaded.index.drop();
        throw error;
      });
      if (header) {
        this.log?.info("lexical index loaded from snapshot", {
          workspace,
          collection,
          position: header.position,
          feed_length: position,
          records: header.records,
          ms: this.now() - began,
        });
        return fresh(loaded.ranker, loaded.index, header.position, header.position);
      }
      loaded.index.drop();
    }
    const position = await feedLength;
    const { ranker, index } = create();
    try {
      for await (const page of this.collections.pages(workspace, collection, PAGE)) {
        for (const record of page) index.put(toDocument(collection, record));
      }
    } catch (error) {
      index.drop();
      throw error;
    }
    if (this.snapshots)
      this.log?.info("lexical index built from Chroma", { workspace, collection, records: index.size, ms: this.now() - began });
    return fresh(ranker, index, position, undefined);
  }

  /**
   * Puts the records of the collection's snapshot into `index`: its header, or undefined when there is no
   * snapshot; throws (the reason) when there is one that does not fit or does not read whole.
   */
  private async load(
    workspace: string,
    collection: SearchableCollection,
    index: CollectionIndex,
    feedLength: Promise<number>,
  ): Promise<SnapshotHeader | undefined> {
    const file = this.snapshotFile(workspace, collection);
    const exists = await stat(file).then(
      () => true,
      () => false,
    );
    if (!exists) return undefined;
    const collectionId = await this.collections.collectionId(workspace, collection);
    const fields = this.fieldsOf(collection);
    let seen: SnapshotHeader | undefined;
    const refuse = (header: SnapshotHeader): string | undefined => {
      seen = header;
      if (header.analysis !== ANALYSIS_VERSION) return `text analysis ${header.analysis}, not ${ANALYSIS_VERSION}`;
      if (header.workspace !== workspace || header.collection !== collection) return "another workspace or collection";
      if (header.collectionId !== collectionId) return "another Chroma collection";
      const stamp = this.collections.stamp;
      if (header.embedding.model !== stamp.model || header.embedding.dimension !== stamp.dimension) {
        return "another embedding stamp";
      }
      if (header.fields.join(",") !== fields.join(",")) return "other fields";
      return undefined;
    };
    let put = 0;
    const read = await readSnapshot(file, refuse, async (document) => {
      index.putAnalyzed(document);
      if (++put % SNAPSHOT_STRETCH === 0) await yieldToLoop();
    });
    // Checked once the feed's length is in, which was asked for beside the read: a snapshot from beyond the feed
    // (a store restored or replaced under it) is named as such, even when its checksum fails too.
    const length = await feedLength;
    if (seen && seen.position > length) throw new Error(`feed position ${seen.position} beyond the feed (${length})`);
    if (!read.ok) throw new Error(read.reason);
    return read.header;
  }

  private async catchUp(workspace: string, collection: SearchableCollection, entry: Entry, knownLength?: number): Promise<void> {
    const length = knownLength ?? (await this.feed.length(workspace, collection));
    while (entry.position < length) {
      const seqs = Array.from({ length: Math.min(PAGE, length - entry.position) }, (_, i) => entry.position + i);
      const slots = await this.feed.read(workspace, collection, seqs);
      // A slot may hold a batch's entries (slot-items.ts): a page of slots names many more records than slots.
      const itemsAt = new Map([...slots].map(([seq, slot]) => [seq, itemsOf(slot)]));
      const ids = [...new Set([...itemsAt.values()].flatMap((items) => items.map((e) => String(e.record_id))))];
      const byId = new Map<string, IndexedRecord>();
      for (const part of chunks(ids)) for (const r of await this.collections.byIds(workspace, collection, part)) byId.set(r.id, r);
      // A record that is missing because it was forgotten is not a write in flight.
      const missing = ids.filter((id) => !byId.has(id));
      const forgotten = new Set<string>();
      for (const part of chunks(missing)) for (const id of (await this.tombstones.of(workspace, part)).keys()) forgotten.add(id);
      for (const seq of seqs) {
        const items = itemsAt.get(seq) ?? [];
        // Entries of this slot before `entry.item` were taken by a catch-up that stopped in it.
        for (const item of seq === entry.position ? items.slice(entry.item) : items) {
          if (!this.take(collection, entry, item, byId, forgotten)) {
            entry.position = seq;
            entry.item = item.item;
            entry.complete = false;
            return;
          }
          entry.changes += 1;
        }
        entry.position = seq + 1;
        entry.item = 0;
      }
    }
    entry.complete = true;
  }

  /** Applies one feed entry to the index; false when it is a write in flight that the catch-up must wait for. */
  private take(
    collection: SearchableCollection,
    entry: Entry,
    item: SlotItem,
    byId: ReadonlyMap<string, IndexedRecord>,
    forgotten: ReadonlySet<string>,
  ): boolean {
    const id = String(item.record_id);
    // Retired by repair_store: left by a write that did not land.
    if (item.void === true) return true;
    if (item.op === "remove") {
      // A forgotten record leaves the lexical index on every replica with its next query, and its
      // snapshot at the next background pass.
      entry.index.remove(id);
      entry.removals += 1;
      entry.removedSincePersisted = true;
      return true;
    }
    const record = byId.get(id);
    if (!record && !forgotten.has(id) && this.now() - Number(item.recorded_at) < FEED_PENDING_MS) return false;
    if (record) entry.index.put(toDocument(collection, record));
    return true;
  }
}

/** Ids to ask Chroma for at a time: a get names every id in one request. */
const GET_CHUNK = 1000;

function chunks<T>(all: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < all.length; i += GET_CHUNK) out.push(all.slice(i, i + GET_CHUNK));
  return out;
}

function toDocument(collection: SearchableCollection, record: IndexedRecord): LexicalDocument {
  if (collection === "turns") {
    const turn = turnOfIndexed(record);
    const labels = [...turn.tags, ...turn.refs].join(" ");
    return {
      id: record.id,
      fields: { agent: turn.agent, ...textOf(turn), labels },
      metadata: record.facts,
    };
  }
  const summary = summaryOfIndexed(record);
  const details = [
    ...summary.decisions.map((d) => `${d.decision} ${d.evidence ?? ""}`),
    ...summary.dropped.map((d) => `${d.approach} ${d.reason ?? ""}`),
    ...summary.open_questions,
    ...summary.next_steps,
  ].join("\n");
  return {
    id: record.id,
    fields: { title: summary.title, summary: summary.summary, details, agents: summary.agents.join(" ") },
    metadata: record.facts,
  };
}
