import type { Logger } from "../logger.js";
import { ChangeFeed, FEED_PENDING_MS, type FeedCollection } from "../ledger/change-feed.js";
import type { Sequences } from "../ledger/sequences.js";
import { Tombstones } from "../ledger/tombstones.js";
import type { ChromaStore, StoredRecord } from "../store/chroma-store.js";
import { CollectionIndex, type LexicalDocument } from "./collection-index.js";
import { RankingHost, type RankingHandle } from "./ranking-host.js";
import type { RetrievalTuning } from "../retrieval/retrieval-tuning.js";
import { summaryFromRecord } from "../records/summary-record.js";
import { parseList, turnFields } from "../records/turn-record.js";

/** The collections searched lexically: those with a change feed (see ledger/change-feed.ts). */
export type SearchableCollection = FeedCollection;

const PAGE = 500;

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
  /** Feed entries consumed. */
  position: number;
  /** Catch-ups of one index run one at a time. */
  syncing: Promise<void>;
  /** False while a write in flight holds the last catch-up back (it waits up to FEED_PENDING_MS). */
  complete: boolean;
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

  constructor(
    private readonly store: ChromaStore,
    sequences: Sequences,
    private readonly tuning: RetrievalTuning,
    options: { now?: () => number; log?: Logger; rankers?: RankingHost } = {},
  ) {
    this.now = options.now ?? Date.now;
    this.feed = new ChangeFeed(sequences);
    this.tombstones = new Tombstones(store);
    const log = options.log;
    const stopped = (error: unknown) =>
      log?.error("lexical ranking thread stopped; indexes are rebuilt from Chroma on next use", {
        error: error instanceof Error ? error.message : String(error),
      });
    this.rankers = options.rankers ?? new RankingHost(stopped);
  }

  /** Stops the ranking thread; the catalog is not used after. */
  async close(): Promise<void> {
    this.entries.clear();
    await this.rankers.close();
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

  /** Everything in the collection now; the feed from where it stood before the scan (re-reading is harmless). */
  private async build(workspace: string, collection: SearchableCollection): Promise<Entry> {
    const position = await this.feed.length(workspace, collection);
    const fetch = async (ids: readonly string[]) =>
      (await this.store.collection(workspace, collection)).get({ ids: [...ids], withDocuments: true });
    const ranker =
      collection === "turns"
        ? this.rankers.create({
            boosts: this.tuning.turnFields,
            bm25: this.tuning.bm25,
            neighbourShare: this.tuning.neighbourShare,
            feedback: this.tuning.feedback,
          })
        : this.rankers.create({ boosts: this.tuning.summaryFields, bm25: this.tuning.bm25, neighbourShare: 0 });
    const index = new CollectionIndex(ranker, collection === "turns" ? TURN_KEY_FIELDS : [], fetch);
    try {
      const records = await this.store.collection(workspace, collection);
      for await (const page of records.pages({ size: PAGE, withDocuments: true })) {
        for (const record of page) index.put(toDocument(collection, record));
      }
    } catch (error) {
      index.drop();
      throw error;
    }
    return { index, ranker, position, syncing: Promise.resolve(), complete: false };
  }

  private async catchUp(workspace: string, collection: SearchableCollection, entry: Entry, knownLength?: number): Promise<void> {
    const length = knownLength ?? (await this.feed.length(workspace, collection));
    const records = await this.store.collection(workspace, collection);
    while (entry.position < length) {
      const seqs = Array.from({ length: Math.min(PAGE, length - entry.position) }, (_, i) => entry.position + i);
      const slots = await this.feed.read(workspace, collection, seqs);
      const ids = [...new Set([...slots.values()].map((s) => String(s.record_id)))];
      const byId = new Map((await records.get({ ids, withDocuments: true })).map((r) => [r.id, r]));
      // A record that is missing because it was forgotten is not a write in flight.
      const missing = ids.filter((id) => !byId.has(id));
      const forgotten = new Set((await this.tombstones.of(workspace, missing)).keys());
      for (const seq of seqs) {
        const slot = slots.get(seq);
        const record = slot ? byId.get(String(slot.record_id)) : undefined;
        if (slot?.void === true) {
          // Retired by repair_store: left by a write that did not land.
          entry.position = seq + 1;
          continue;
        }
        if (slot?.op === "remove") {
          // A forgotten record leaves the lexical index on every replica with its next query.
          entry.index.remove(String(slot.record_id));
          entry.position = seq + 1;
          continue;
        }
        const inFlight = slot && !record && !forgotten.has(String(slot.record_id));
        if (inFlight && this.now() - Number(slot.recorded_at) < FEED_PENDING_MS) {
          entry.complete = false;
          return;
        }
        if (record) entry.index.put(toDocument(collection, record));
        entry.position = seq + 1;
      }
    }
    entry.complete = true;
  }
}

function toDocument(collection: SearchableCollection, record: StoredRecord): LexicalDocument {
  if (collection === "turns") {
    const fields = turnFields(record);
    const labels = [...parseList<string>(record.metadata.tags), ...parseList<string>(record.metadata.refs)].join(" ");
    return {
      id: record.id,
      fields: { agent: String(record.metadata.agent), ...fields, labels },
      metadata: record.metadata,
    };
  }
  const summary = summaryFromRecord(record);
  const details = [
    ...summary.decisions.map((d) => `${d.decision} ${d.evidence ?? ""}`),
    ...summary.dropped.map((d) => `${d.approach} ${d.reason ?? ""}`),
    ...summary.open_questions,
    ...summary.next_steps,
  ].join("\n");
  return {
    id: record.id,
    fields: { title: summary.title, summary: summary.summary, details, agents: summary.agents.join(" ") },
    metadata: record.metadata,
  };
}
