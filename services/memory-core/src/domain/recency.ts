import { unavailable } from "../errors.js";
import { RECENCY_VECTOR, type ChromaStore, type RecordCollection, type StoredRecord, type Where } from "../store/chroma-store.js";

/**
 * Each agent's turns in the order they were recorded, at a cost that follows the page size, not the history.
 *
 * Chroma cannot order a `get`, and its filtered `get` scans the whole collection, so recency cannot be asked
 * of the turns themselves. Instead every write first takes the next slot of its agent's sequence in the
 * `recency` collection: slot ids are `seq:<agent>:<n>`, dense from 0, taken with Chroma's insert-if-absent
 * `add` (the first writer of an id wins; a loser sees another write id on read-back and takes the next slot),
 * so replicas need no lock. Reading the newest turns is then a lookup of ids n, n-1, ... — and finding n, the
 * sequence's length, a few batched lookups of ids (exponential, then 64-way narrowing).
 *
 * A slot whose turn never arrived (a writer that died) or whose turn was written under another slot (two
 * replicas racing on one idempotency key) is skipped: a turn is listed at the slot its metadata names.
 * The sequence is derived from the turns (`seq`, `recorded_at`) and can be rebuilt from them.
 */

export const slotId = (agent: string, seq: number) => `seq:${agent}:${seq}`;

const MAX_HINTS = 10_000;
const MAX_ALLOCATION_ATTEMPTS = 64;

export interface Allocation {
  seq: number;
  recordedAt: number;
}

export interface RecentEntry {
  seq: number;
  turn: StoredRecord;
}

export class RecencyIndex {
  /** Per workspace and agent, a length the sequence is known to have reached: a hint, never the truth. */
  private readonly lengthHints = new Map<string, number>();
  /** Allocations of one agent on this replica go one at a time instead of contending for the same slot. */
  private readonly allocationQueues = new Map<string, Promise<unknown>>();

  constructor(
    private readonly store: ChromaStore,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes the next slot of the agent's sequence for a turn about to be stored. */
  allocate(workspace: string, agent: string, turnId: string, writeId: string): Promise<Allocation> {
    const key = `${workspace}|${agent}`;
    const previous = this.allocationQueues.get(key) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.allocateNow(workspace, agent, turnId, writeId));
    this.allocationQueues.set(key, next);
    void next.finally(() => {
      if (this.allocationQueues.get(key) === next) this.allocationQueues.delete(key);
    }).catch(() => undefined);
    return next;
  }

  private async allocateNow(workspace: string, agent: string, turnId: string, writeId: string): Promise<Allocation> {
    const recency = await this.store.collection(workspace, "recency");
    // On one replica the hint is exact after its own last write: try it before probing for the length.
    let seq = this.lengthHints.get(`${workspace}|${agent}`) ?? (await this.length(recency, workspace, agent));
    for (let attempt = 0; attempt < MAX_ALLOCATION_ATTEMPTS; attempt++) {
      const recordedAt = this.now();
      const id = slotId(agent, seq);
      await recency.add([
        { id, embedding: RECENCY_VECTOR, document: "", metadata: { agent, seq, turn_id: turnId, write_id: writeId, recorded_at: recordedAt } },
      ]);
      const [slot] = await recency.get({ ids: [id] });
      if (slot?.metadata.write_id === writeId) {
        this.rememberLength(workspace, agent, seq + 1);
        return { seq, recordedAt };
      }
      // Another writer (another replica) took it: the sequence moved on, find where it ends now.
      seq = await this.length(recency, workspace, agent);
    }
    throw unavailable("Too many concurrent writers for this agent; the write was not stored.");
  }

  /** The agent's newest turns below `before` (a slot number), newest first, and whether older ones exist. */
  async newestPage(
    workspace: string,
    agent: string,
    limit: number,
    before: number | undefined,
  ): Promise<{ entries: RecentEntry[]; more: boolean }> {
    const recency = await this.store.collection(workspace, "recency");
    const turns = await this.store.collection(workspace, "turns");
    let top = (before ?? (await this.length(recency, workspace, agent))) - 1;
    const want = limit + 1;
    const entries: RecentEntry[] = [];
    while (entries.length < want && top >= 0) {
      const seqs = descending(top, Math.max(0, top - (want - entries.length) + 1));
      top -= seqs.length;
      const slots = await recency.get({ ids: seqs.map((n) => slotId(agent, n)) });
      const turnOf = new Map(slots.map((s) => [Number(s.metadata.seq), String(s.metadata.turn_id)]));
      const found = await turns.get({ ids: [...new Set(turnOf.values())], withDocuments: true });
      const byId = new Map(found.map((t) => [t.id, t]));
      for (const seq of seqs) {
        const turn = byId.get(turnOf.get(seq) ?? "");
        if (turn && Number(turn.metadata.seq) === seq) entries.push({ seq, turn });
      }
    }
    return { entries: entries.slice(0, limit), more: entries.length > limit };
  }

  /** The same order for one session of the agent: read from the session's turns, which are few. */
  async newestPageOfSession(
    workspace: string,
    agent: string,
    sessionId: string,
    limit: number,
    before: number | undefined,
  ): Promise<{ entries: RecentEntry[]; more: boolean }> {
    const turns = await this.store.collection(workspace, "turns");
    const where: Where = { $and: [{ agent }, { session_id: sessionId }] };
    const all = (await turns.get({ where, withDocuments: true }))
      .map((turn) => ({ seq: Number(turn.metadata.seq), turn }))
      .filter((e) => before === undefined || e.seq < before)
      .sort((a, b) => b.seq - a.seq);
    return { entries: all.slice(0, limit), more: all.length > limit };
  }

  /**
   * The length of the agent's sequence. Slots are dense, so existence is monotone in n: probe exponentially
   * from the hint for an upper bound, then narrow 64 ways per lookup.
   */
  private async length(recency: RecordCollection, workspace: string, agent: string): Promise<number> {
    let low = this.lengthHints.get(`${workspace}|${agent}`) ?? 0; // slots below `low` exist
    let high = Number.MAX_SAFE_INTEGER; // slot `high` does not
    const probe = async (points: number[]) => {
      const present = await recency.get({ ids: points.map((n) => slotId(agent, n)) });
      const existing = new Set(present.map((s) => Number(s.metadata.seq)));
      for (const p of points) {
        if (existing.has(p)) low = Math.max(low, p + 1);
        else high = Math.min(high, p);
      }
    };
    await probe(Array.from({ length: 48 }, (_, k) => low + 2 ** k - 1));
    while (high > low) {
      const span = high - low;
      const points = span <= 64 ? descending(high - 1, low) : Array.from({ length: 64 }, (_, i) => low + Math.floor((span * i) / 64));
      await probe(points);
    }
    this.rememberLength(workspace, agent, low);
    return low;
  }

  private rememberLength(workspace: string, agent: string, length: number) {
    const key = `${workspace}|${agent}`;
    if (this.lengthHints.size >= MAX_HINTS && !this.lengthHints.has(key)) this.lengthHints.clear();
    if ((this.lengthHints.get(key) ?? 0) < length) this.lengthHints.set(key, length);
  }
}

/** from, from-1, ..., to */
function descending(from: number, to: number): number[] {
  const out: number[] = [];
  for (let n = from; n >= to; n--) out.push(n);
  return out;
}

/** Chroma wants `$and` only for two or more clauses. */
export function and(clauses: Where[]): Where | undefined {
  if (clauses.length === 0) return undefined;
  if (clauses.length === 1) return clauses[0];
  return { $and: clauses };
}
