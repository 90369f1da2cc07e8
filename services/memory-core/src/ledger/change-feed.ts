import { randomUUID } from "node:crypto";
import type { Metadata } from "../store/chroma-store.js";
import type { AppendRequest, Appended, Sequences } from "./sequences.js";

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
  async announcedRewrite(
    workspace: string,
    collection: FeedCollection,
    entry: Metadata & { record_id: string },
    write: () => Promise<void>,
  ): Promise<void> {
    const announce = () => this.append(workspace, collection, { ...entry, op: "put" });
    await announce();
    await write();
    await announce();
  }

  length(workspace: string, collection: FeedCollection): Promise<number> {
    return this.sequences.length(workspace, feedStream(collection));
  }

  /** The entries at these positions that exist, by position. */
  read(workspace: string, collection: FeedCollection, seqs: readonly number[]): Promise<Map<number, Metadata>> {
    return this.sequences.read(workspace, feedStream(collection), seqs);
  }
}
