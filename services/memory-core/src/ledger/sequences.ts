import { randomUUID } from "node:crypto";
import { unavailable } from "../errors.js";
import type { Metadata } from "../store/chroma-store.js";
import { GroupCommit } from "./group-commit.js";
import { denseLength, slotId, type Ledger, type LedgerEntry } from "./ledger.js";
import { batchPayload, markItems } from "./slot-items.js";

/**
 * Append-only sequences kept in Chroma, for orders that Chroma cannot give: an agent's turns newest first,
 * a workspace's changes in the order they happened.
 *
 * A sequence is the slots `seq:<stream>:0`, `seq:<stream>:1`, ... of the ledger (ledger.ts), dense from 0. A
 * slot is taken with the ledger's insert-if-absent, so a writer that reads back another write id lost the race
 * and takes the next slot. No lock, across any number of replicas. The length is found by batched id lookups
 * (an exponential probe from the last known length, then 64-way narrowing), usually one lookup; reading slots
 * is a lookup by ids. Filtered `get`s, which scan the whole collection on this Chroma, are never used.
 *
 * Appends to a workspace from this replica are group-committed across its streams: the slots a write takes
 * (its agent's, the change feed's, the audit log's) go to Chroma in one `add` per ledger collection and are read
 * back in one `get` each (ledger.ts); a batch's entries of one change feed or of the audit log share slots (see
 * `slotsFor`, slot-items.ts), and appends that queue while a batch is in flight take their slots together in the
 * next batch. Chroma applies writes one at a time, so `add`s sent in parallel wait for each other, and each
 * costs a round trip of its own. One batch at a time per workspace also keeps this replica's length hints exact:
 * only another replica's appends make a batch try again.
 */

const MAX_HINTS = 10_000;
const MAX_APPEND_ATTEMPTS = 64;
/** Slots per `add`: the three slots of each of add_memories' 500 turns fit one. */
const MAX_BATCH = 1536;
/**
 * Entries of a change feed or the audit log to one slot: readers take a page of slots at a time, so this bounds
 * the records a page names, while a write batch's entries still take few slots.
 */
const ITEMS_PER_SLOT = 16;

export interface Appended {
  seq: number;
  recordedAt: number;
}

/** A slot wanted in `stream`, holding `payload`. */
export interface AppendRequest {
  stream: string;
  payload: Metadata;
}

/** The next slot of an agent's recency sequence (an agent's name is its stream), for a turn about to be stored. */
export const recencyAppend = (agent: string, turnId: string): AppendRequest => ({ stream: agent, payload: { turn_id: turnId } });

interface PendingAppend {
  stream: string;
  payload: Metadata;
  writeId: string;
  resolve: (appended: Appended) => void;
  reject: (error: unknown) => void;
}

export class Sequences {
  /** Per workspace and stream, a length the sequence is known to have reached: a hint, never the truth. */
  private readonly lengthHints = new Map<string, number>();
  /** A workspace's appends, committed a batch at a time (see above). */
  private readonly appends = new GroupCommit<PendingAppend>(MAX_BATCH, (workspace, batch) => this.appendBatch(workspace, batch));
  constructor(
    private readonly ledger: Ledger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes the next slot of `stream`, holding `payload`. */
  append(workspace: string, stream: string, payload: Metadata, writeId: string): Promise<Appended> {
    return this.appendAcross(workspace, [{ stream, payload }], writeId).then(([appended]) => appended!);
  }

  /** Several slots of one stream, in their order: queued together, they commit together (see above). */
  appendMany(workspace: string, stream: string, payloads: readonly Metadata[], writeId: string): Promise<Appended[]> {
    return this.appendAcross(
      workspace,
      payloads.map((payload) => ({ stream, payload })),
      writeId,
    );
  }

  /**
   * Slots in several streams at once (a write's slot, feed entry and audit entry; a restore), in order within
   * each: queued together, so that they go to Chroma in one batch unless it is full.
   */
  appendAcross(workspace: string, requests: readonly AppendRequest[], writeId: string): Promise<Appended[]> {
    return this.appendGroups(workspace, [{ requests, writeId }]).then(([appended]) => appended!);
  }

  /**
   * The slots of several writes, each with its own write id (a bulk write: each turn's slot, feed entry and
   * audit entry), queued together in their order, so that they take consecutive slots in as few batches as fit.
   */
  appendGroups(workspace: string, groups: ReadonlyArray<{ requests: readonly AppendRequest[]; writeId: string }>): Promise<Appended[][]> {
    const pending: PendingAppend[] = [];
    const appended = Promise.all(
      groups.map(({ requests, writeId }) =>
        Promise.all(
          requests.map(
            (r) =>
              new Promise<Appended>((resolve, reject) => pending.push({ stream: r.stream, payload: r.payload, writeId, resolve, reject })),
          ),
        ),
      ),
    );
    this.appends.add(workspace, pending);
    return appended;
  }

  /** Takes consecutive slots in each stream for the batch; those another writer took first try again at the new end. */
  private async appendBatch(workspace: string, batch: PendingAppend[]): Promise<void> {
    // On one replica the hint is exact after its own last append: try it before probing for the length.
    const ends = new Map<string, number>();
    await Promise.all(
      [...new Set(batch.map((p) => p.stream))].map(async (stream) => {
        ends.set(stream, this.lengthHints.get(`${workspace}|${stream}`) ?? (await this.lengthOf(workspace, stream)));
      }),
    );
    let waiting = batch;
    for (let attempt = 0; attempt < MAX_APPEND_ATTEMPTS && waiting.length > 0; attempt++) {
      const recordedAt = this.now();
      const next = new Map(ends);
      const attempted = slotsFor(waiting).map(({ stream, pendings }) => {
        const seq = next.get(stream)!;
        next.set(stream, seq + 1);
        // A batch slot is won by this attempt as a whole; each of its entries keeps its own write's id.
        const writeId = pendings.length === 1 ? pendings[0]!.writeId : randomUUID();
        const payload =
          pendings.length === 1 ? pendings[0]!.payload : batchPayload(pendings.map((p) => ({ ...p.payload, write_id: p.writeId })));
        const entry: LedgerEntry = {
          id: slotId(stream, seq),
          metadata: { ...payload, stream, seq, write_id: writeId, recorded_at: recordedAt },
        };
        return { stream, pendings, seq, entry, writeId };
      });
      await this.ledger.insertIfAbsent(
        workspace,
        attempted.map((a) => a.entry),
      );
      const written = new Map(
        (
          await this.ledger.get(
            workspace,
            attempted.map((a) => a.entry.id),
          )
        ).map((r) => [r.id, r]),
      );
      const lost: PendingAppend[] = [];
      const won: Array<{ pendings: PendingAppend[]; seq: number; entry: LedgerEntry; at: number }> = [];
      // A slot's time must not be earlier than the slots before it in its stream. A single append only targets
      // a slot after seeing the one before it, so its clock read comes later; a batch targets slots past ones it
      // may lose, to a writer whose clock read came later than ours: such slots take that writer's time.
      const latest = new Map<string, number>();
      for (const { stream, pendings, seq, entry, writeId } of attempted) {
        const slot = written.get(entry.id);
        const at = Math.max(latest.get(stream) ?? recordedAt, Number(slot?.metadata.recorded_at ?? recordedAt));
        latest.set(stream, at);
        if (slot?.metadata.write_id === writeId) won.push({ pendings, seq, entry, at });
        else lost.push(...pendings);
      }
      const late = won.filter((w) => w.at > recordedAt);
      await this.ledger.update(
        workspace,
        late.map((w) => ({ id: w.entry.id, metadata: { ...w.entry.metadata, recorded_at: w.at } })),
      );
      for (const w of won) for (const pending of w.pendings) pending.resolve({ seq: w.seq, recordedAt: w.at });
      // Streams where every slot was won end where this batch left them; the others moved on: find where now.
      const raced = new Set(lost.map((p) => p.stream));
      for (const [stream, end] of next) {
        if (raced.has(stream)) continue;
        ends.set(stream, end);
        this.remember(workspace, stream, end);
      }
      waiting = lost;
      await Promise.all(
        [...raced].map(async (stream) => {
          ends.set(stream, await this.lengthOf(workspace, stream));
        }),
      );
    }
    if (waiting.length > 0) {
      const error = unavailable("Too many concurrent writers; the write was not stored.");
      for (const pending of waiting) pending.reject(error);
    }
  }

  async length(workspace: string, stream: string): Promise<number> {
    return this.lengthOf(workspace, stream);
  }

  /** The slots at these positions that exist, by position. */
  async read(workspace: string, stream: string, seqs: readonly number[]): Promise<Map<number, Metadata>> {
    const found = await this.ledger.get(
      workspace,
      seqs.map((n) => slotId(stream, n)),
    );
    return new Map(found.map((s) => [Number(s.metadata.seq), s.metadata]));
  }

  /** Slots of several streams in one lookup, in the order asked; undefined where a slot does not exist. */
  async readAcross(workspace: string, at: ReadonlyArray<{ stream: string; seq: number }>): Promise<Array<Metadata | undefined>> {
    const ids = at.map((a) => slotId(a.stream, a.seq));
    const found = new Map((await this.ledger.get(workspace, ids)).map((s) => [s.id, s.metadata]));
    return ids.map((id) => found.get(id));
  }

  /**
   * Marks slots void, or not: a slot cannot be removed (the sequence stays dense), but readers pass over a void
   * one as if it were not there. Used by repair_store for what writes that did not land left behind, and to put
   * back what a write that landed late still needs.
   */
  async mark(workspace: string, stream: string, seqs: readonly number[], retired: boolean): Promise<void> {
    await this.rewrite(workspace, stream, seqs, (slot) => ({ ...slot, void: retired }));
  }

  /**
   * Marks entries of slots void, or not, one by one (slot-items.ts): an entry of a batch slot alone, or a flat
   * slot's one entry (item 0) as `mark` does.
   */
  async markItems(
    workspace: string,
    stream: string,
    targets: ReadonlyArray<{ seq: number; item: number }>,
    retired: boolean,
  ): Promise<void> {
    const bySeq = new Map<number, Set<number>>();
    for (const { seq, item } of targets) bySeq.set(seq, (bySeq.get(seq) ?? new Set()).add(item));
    await this.rewrite(workspace, stream, [...bySeq.keys()], (slot) => markItems(slot, bySeq.get(Number(slot.seq))!, retired));
  }

  /** Rewrites the fields of the slots at these positions that exist, a batch of slots at a time. */
  private async rewrite(workspace: string, stream: string, seqs: readonly number[], change: (slot: Metadata) => Metadata): Promise<void> {
    for (let i = 0; i < seqs.length; i += MAX_BATCH) {
      const found = await this.ledger.get(
        workspace,
        seqs.slice(i, i + MAX_BATCH).map((n) => slotId(stream, n)),
      );
      await this.ledger.update(
        workspace,
        found.map((s) => ({ id: s.id, metadata: change(s.metadata) })),
      );
    }
  }

  /** The stream's length, from this replica's hint on (see denseLength). */
  private async lengthOf(workspace: string, stream: string): Promise<number> {
    // Probed before every query: the hint is usually exact or a few slots behind, and a few ids cost Chroma
    // less than many. Past them, the bound is found exponentially.
    const length = await denseLength(stream, this.lengthHints.get(`${workspace}|${stream}`) ?? 0, 8, (ids) =>
      this.ledger.present(workspace, ids),
    );
    this.remember(workspace, stream, length);
    return length;
  }

  private remember(workspace: string, stream: string, length: number) {
    const key = `${workspace}|${stream}`;
    if (this.lengthHints.size >= MAX_HINTS && !this.lengthHints.has(key)) this.lengthHints.clear();
    if ((this.lengthHints.get(key) ?? 0) < length) this.lengthHints.set(key, length);
  }
}

/**
 * The slots a batch's appends take, in their order within each stream: one per append, except that the appends
 * of a stream whose name starts with `@` (the change feeds and the audit log: an agent's name cannot) share
 * slots, at most ITEMS_PER_SLOT to one (slot-items.ts). A write batch then adds one feed slot and one audit slot
 * rather than one of each per turn.
 */
function slotsFor(pendings: readonly PendingAppend[]): Array<{ stream: string; pendings: PendingAppend[] }> {
  const slots: Array<{ stream: string; pendings: PendingAppend[] }> = [];
  const open = new Map<string, PendingAppend[]>();
  for (const pending of pendings) {
    const sharing = pending.stream.startsWith("@");
    const shared = sharing ? open.get(pending.stream) : undefined;
    if (shared && shared.length < ITEMS_PER_SLOT) {
      shared.push(pending);
      continue;
    }
    const slot = { stream: pending.stream, pendings: [pending] };
    slots.push(slot);
    if (sharing) open.set(pending.stream, slot.pendings);
  }
  return slots;
}
