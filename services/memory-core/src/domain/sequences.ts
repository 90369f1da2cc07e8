import { unavailable } from "../errors.js";
import { RECENCY_VECTOR, type ChromaStore, type Metadata, type RecordCollection } from "../store/chroma-store.js";

/**
 * Append-only sequences kept in Chroma, for orders that Chroma cannot give: an agent's turns newest first,
 * a workspace's changes in the order they happened.
 *
 * A sequence is the slots `seq:<stream>:0`, `seq:<stream>:1`, ... in the `recency` collection, dense from 0.
 * A slot is taken with Chroma's `add`, which keeps the first record of an id: an insert-if-absent, so a writer
 * that reads back another write id lost the race and takes the next slot. No lock, across any number of
 * replicas. The length is found by batched id lookups (an exponential probe from the last known length, then
 * 64-way narrowing), usually one lookup; reading slots is a lookup by ids. Filtered `get`s, which scan the
 * whole collection on this Chroma, are never used.
 */

export const slotId = (stream: string, seq: number) => `seq:${stream}:${seq}`;

const MAX_HINTS = 10_000;
const MAX_APPEND_ATTEMPTS = 64;

export interface Appended {
  seq: number;
  recordedAt: number;
}

export class Sequences {
  /** Per workspace and stream, a length the sequence is known to have reached: a hint, never the truth. */
  private readonly lengthHints = new Map<string, number>();
  /** Appends to one stream from this replica go one at a time rather than contend for the same slot. */
  private readonly appendQueues = new Map<string, Promise<unknown>>();

  constructor(
    private readonly store: ChromaStore,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes the next slot of `stream`, holding `payload`. */
  append(workspace: string, stream: string, payload: Metadata, writeId: string): Promise<Appended> {
    return this.queued(workspace, stream, () => this.appendNow(workspace, stream, payload, writeId));
  }

  /**
   * Takes one slot per payload, in their order where no other writer interleaves: one round trip for the
   * batch instead of one per payload. A slot lost to another writer is taken again further on.
   */
  appendMany(workspace: string, stream: string, payloads: readonly Metadata[], writeId: string): Promise<Appended[]> {
    if (payloads.length === 0) return Promise.resolve([]);
    return this.queued(workspace, stream, () =>
      this.appendAcrossNow(workspace, payloads.map((payload) => ({ stream, payload })), writeId),
    );
  }

  private queued<T>(workspace: string, stream: string, run: () => Promise<T>): Promise<T> {
    const key = `${workspace}|${stream}`;
    const previous = this.appendQueues.get(key) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(run);
    this.appendQueues.set(key, next);
    void next
      .finally(() => {
        if (this.appendQueues.get(key) === next) this.appendQueues.delete(key);
      })
      .catch(() => undefined);
    return next;
  }

  private async appendNow(workspace: string, stream: string, payload: Metadata, writeId: string): Promise<Appended> {
    const slots = await this.store.collection(workspace, "recency");
    // On one replica the hint is exact after its own last append: try it before probing for the length.
    let seq = this.lengthHints.get(`${workspace}|${stream}`) ?? (await this.lengthOf(slots, workspace, stream));
    for (let attempt = 0; attempt < MAX_APPEND_ATTEMPTS; attempt++) {
      const recordedAt = this.now();
      const id = slotId(stream, seq);
      const metadata: Metadata = { ...payload, stream, seq, write_id: writeId, recorded_at: recordedAt };
      await slots.add([{ id, embedding: RECENCY_VECTOR, document: "", metadata }]);
      const [slot] = await slots.get({ ids: [id] });
      if (slot?.metadata.write_id === writeId) {
        this.remember(workspace, stream, seq + 1);
        return { seq, recordedAt };
      }
      // Another writer took it: the sequence moved on, find where it ends now.
      seq = await this.lengthOf(slots, workspace, stream);
    }
    throw unavailable("Too many concurrent writers; the write was not stored.");
  }

  /**
   * Takes slots in several streams at once, one round trip for all (a restore: each agent's sequence and the
   * change feed). It does not wait for this replica's queues: the insert-if-absent protocol keeps it correct
   * beside any other writer; the queues only spare one replica's writers from contending with each other.
   */
  appendAcross(workspace: string, requests: ReadonlyArray<{ stream: string; payload: Metadata }>, writeId: string): Promise<Appended[]> {
    return this.appendAcrossNow(workspace, requests, writeId);
  }

  private async appendAcrossNow(
    workspace: string,
    requests: ReadonlyArray<{ stream: string; payload: Metadata }>,
    writeId: string,
  ): Promise<Appended[]> {
    if (requests.length === 0) return [];
    const slots = await this.store.collection(workspace, "recency");
    const taken: Appended[] = new Array(requests.length);
    const lengthNow = (stream: string) => this.lengthOf(slots, workspace, stream);
    const streams = [...new Set(requests.map((r) => r.stream))];
    const next = new Map(
      await Promise.all(streams.map(async (s) => [s, this.lengthHints.get(`${workspace}|${s}`) ?? (await lengthNow(s))] as const)),
    );
    let waiting = requests.map((_, i) => i);
    for (let attempt = 0; attempt < MAX_APPEND_ATTEMPTS && waiting.length > 0; attempt++) {
      const recordedAt = this.now();
      const end = new Map(next);
      const placed = waiting.map((i) => {
        const stream = requests[i]!.stream;
        const seq = end.get(stream)!;
        end.set(stream, seq + 1);
        return { i, stream, seq, id: slotId(stream, seq) };
      });
      await slots.add(
        placed.map((p) => ({
          id: p.id,
          embedding: RECENCY_VECTOR,
          document: "",
          metadata: { ...requests[p.i]!.payload, stream: p.stream, seq: p.seq, write_id: writeId, recorded_at: recordedAt },
        })),
      );
      const won = new Set((await slots.get({ ids: placed.map((p) => p.id) })).filter((s) => s.metadata.write_id === writeId).map((s) => s.id));
      const lost = placed.filter((p) => !won.has(p.id));
      for (const p of placed) if (won.has(p.id)) taken[p.i] = { seq: p.seq, recordedAt };
      for (const [stream, length] of end) this.remember(workspace, stream, length);
      waiting = lost.map((p) => p.i);
      // Where another writer took slots, the sequence moved on: find where it ends now.
      for (const stream of streams) next.set(stream, end.get(stream)!);
      for (const stream of new Set(lost.map((p) => p.stream))) next.set(stream, await lengthNow(stream));
    }
    if (waiting.length > 0) throw unavailable("Too many concurrent writers; the write was not stored.");
    return taken;
  }

  async length(workspace: string, stream: string): Promise<number> {
    return this.lengthOf(await this.store.collection(workspace, "recency"), workspace, stream);
  }

  /** The slots at these positions that exist, by position. */
  async read(workspace: string, stream: string, seqs: readonly number[]): Promise<Map<number, Metadata>> {
    if (seqs.length === 0) return new Map();
    const slots = await this.store.collection(workspace, "recency");
    const found = await slots.get({ ids: seqs.map((n) => slotId(stream, n)) });
    return new Map(found.map((s) => [Number(s.metadata.seq), s.metadata]));
  }

  /** Slots are dense, so existence is monotone in n: probe exponentially for a bound, then narrow 64 ways. */
  private async lengthOf(slots: RecordCollection, workspace: string, stream: string): Promise<number> {
    let low = this.lengthHints.get(`${workspace}|${stream}`) ?? 0; // slots below `low` exist
    let high = Number.MAX_SAFE_INTEGER; // slot `high` does not
    const probe = async (points: number[]) => {
      const present = await slots.get({ ids: points.map((n) => slotId(stream, n)) });
      const existing = new Set(present.map((s) => Number(s.metadata.seq)));
      for (const p of points) {
        if (existing.has(p)) low = Math.max(low, p + 1);
        else high = Math.min(high, p);
      }
    };
    await probe(Array.from({ length: 48 }, (_, k) => low + 2 ** k - 1));
    while (high > low) {
      const span = high - low;
      await probe(
        span <= 64
          ? Array.from({ length: span }, (_, i) => low + i)
          : Array.from({ length: 64 }, (_, i) => low + Math.floor((span * i) / 64)),
      );
    }
    this.remember(workspace, stream, low);
    return low;
  }

  private remember(workspace: string, stream: string, length: number) {
    const key = `${workspace}|${stream}`;
    if (this.lengthHints.size >= MAX_HINTS && !this.lengthHints.has(key)) this.lengthHints.clear();
    if ((this.lengthHints.get(key) ?? 0) < length) this.lengthHints.set(key, length);
  }
}
