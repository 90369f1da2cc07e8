import { randomUUID } from "node:crypto";
import type { Metadata } from "../store/chroma-store.js";
import type { AppendRequest, Appended, Sequences } from "./sequences.js";
import { itemsOf } from "./slot-items.js";

/**
 * The change feeds: per collection that indexes follow, a sequence (see sequences.ts) with one entry
 * `{record_id, op}` per write, appended before the write reaches the collection, so that every replica's
 * lexical index, and the summarizer, learn of every write in the order it happened. Entries of `@turns` also
 * name the turn's `session_id` (the summarizer follows them to find changed sessions).
 */

export type FeedCollection = "turns" | "summaries";

export const feedStream = (collection: FeedCollection) => `@${collection}`;

/**
 * A feed entry whose record is not there yet is a write in flight: readers wait for it this long, then take
 * the writer for dead and move on.
 */
export const FEED_PENDING_MS = 30_000;

export type FeedEntry = Metadata & { record_id: string; op: "put" | "remove" };

/** The entry as one of several slots taken at once (see Sequences.appendAcross). */
export const feedAppend = (collection: FeedCollection, entry: FeedEntry): AppendRequest => ({
  stream: feedStream(collection),
  payload: entry,
});

/** An entry of a feed as read: which record, put or removed, when, and (turns) the session it belongs to. */
export interface FeedChange {
  recordId: string;
  op: "put" | "remove";
  /** Entries of `@turns` name the turn's session; entries stored without it say nothing. */
  sessionId: string | undefined;
  at: number;
}

export class ChangeFeed {
  constructor(private readonly sequences: Sequences) {}

  append(workspace: string, collection: FeedCollection, entry: FeedEntry, writeId: string = randomUUID()): Promise<Appended> {
    return this.sequences.append(workspace, feedStream(collection), entry, writeId);
  }

  /** Several entries, in their order, committed together. */
  appendMany(workspace: string, collection: FeedCollection, entries: readonly FeedEntry[]): Promise<Appended[]> {
    return this.sequences.appendMany(workspace, feedStream(collection), entries, randomUUID());
  }

  /**
   * Writes a record that may already exist, announced on its collection's change feed before and after the
   * write. A catch-up that reads the record between the first entry and the write takes its previous content for
   * current and moves past that entry: the second makes every index read it again. The first still tells
   * indexes of a write whose writer dies before its second entry.
   */
  async announcedRewrite<T>(
    workspace: string,
    collection: FeedCollection,
    entry: Metadata & { record_id: string },
    write: () => Promise<T>,
  ): Promise<T> {
    const announce = () => this.append(workspace, collection, { ...entry, op: "put" });
    await announce();
    const written = await write();
    await announce();
    return written;
  }

  /** `announcedRewrite` of several records written in one `write`: each announcement is one batch of entries. */
  async announcedRewrites<T>(
    workspace: string,
    collection: FeedCollection,
    entries: ReadonlyArray<Metadata & { record_id: string }>,
    write: () => Promise<T>,
  ): Promise<T> {
    const announce = () =>
      this.appendMany(
        workspace,
        collection,
        entries.map((e) => ({ ...e, op: "put" as const })),
      );
    await announce();
    const written = await write();
    await announce();
    return written;
  }

  length(workspace: string, collection: FeedCollection): Promise<number> {
    return this.sequences.length(workspace, feedStream(collection));
  }

  /** The changes of the slots at these positions that exist, by position (a batch slot holds several, in order). */
  async changes(workspace: string, collection: FeedCollection, seqs: readonly number[]): Promise<Map<number, FeedChange[]>> {
    const slots = await this.read(workspace, collection, seqs);
    return new Map(
      [...slots].map(([seq, slot]) => [
        seq,
        itemsOf(slot).map((e) => ({
          recordId: String(e.record_id),
          op: e.op === "remove" ? ("remove" as const) : ("put" as const),
          sessionId: typeof e.session_id === "string" ? e.session_id : undefined,
          at: Number(e.recorded_at),
        })),
      ]),
    );
  }

  /** The entries at these positions that exist, by position. */
  read(workspace: string, collection: FeedCollection, seqs: readonly number[]): Promise<Map<number, Metadata>> {
    return this.sequences.read(workspace, feedStream(collection), seqs);
  }
}
