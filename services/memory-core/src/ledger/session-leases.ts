import { randomUUID } from "node:crypto";
import type { StoredRecord } from "../store/chroma-store.js";
import { leaseId, type Ledger } from "./ledger.js";

/**
 * Who may summarize a session right now, agreed through Chroma so that any number of workers (and
 * `summarize_session` calls) over one Chroma never summarize one session at once.
 *
 * A session's leases are the records `lease:<session>:0`, `:1`, ... in the workspace's ledger (memory-core's
 * ledger.ts), dense from 0; the highest one is the current lease. To take it, a worker finds the highest, checks
 * that it is released or expired, and adds the next one with Chroma's `add`, which keeps the first record of an
 * id (insert-if-absent); reading it back tells who won. A crashed worker's lease expires, and the next slot
 * takes it over — no one ever has to overwrite another's record, so two workers can never both win.
 */

const PROBE = 16;

export interface Lease {
  /** False once another worker took the session over (this lease expired meanwhile). */
  stillHeld(): Promise<boolean>;
  release(): Promise<void>;
}

export class SessionLeases {
  /** Per workspace and session, a slot known to exist: where the next probe starts. */
  private readonly hints = new Map<string, number>();
  constructor(
    private readonly ledger: Ledger,
    private readonly ttlMs: number,
    private readonly worker: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** The session's lease, or undefined while someone else holds it. Renewed in the background until released. */
  async acquire(workspace: string, sessionId: string): Promise<Lease | undefined> {
    const top = await this.highest(workspace, sessionId);
    if (top) {
      const live = top.metadata.released !== true && Number(top.metadata.expires_at) > this.now();
      if (live) return undefined;
    }
    const n = top ? Number(top.metadata.n) + 1 : 0;
    const id = leaseId(sessionId, n);
    const holder = `${this.worker}/${randomUUID()}`;
    const metadata = { session_id: sessionId, n, holder, expires_at: this.now() + this.ttlMs, released: false };
    await this.ledger.insertIfAbsent(workspace, [{ id, metadata }]);
    const [stored] = await this.ledger.get(workspace, [id]);
    this.hints.set(`${workspace}|${sessionId}`, n);
    if (stored?.metadata.holder !== holder) return undefined;
    return this.held(workspace, sessionId, n, metadata);
  }

  private held(workspace: string, sessionId: string, n: number, metadata: Record<string, string | number | boolean>): Lease {
    const id = leaseId(sessionId, n);
    const successorTaken = async () => (await this.ledger.get(workspace, [leaseId(sessionId, n + 1)])).length > 0;
    // Renewed well before it expires, so a long model call keeps it; a dead process stops renewing.
    let released = false;
    let renewing: Promise<void> = Promise.resolve();
    const renewal = setInterval(
      () => {
        if (released) return;
        renewing = this.ledger
          .update(workspace, [{ id, metadata: { ...metadata, expires_at: this.now() + this.ttlMs } }])
          .catch(() => undefined);
      },
      Math.max(250, Math.floor(this.ttlMs / 3)),
    );
    renewal.unref();
    return {
      stillHeld: async () => !released && !(await successorTaken()),
      release: async () => {
        if (released) return;
        released = true;
        clearInterval(renewal);
        // A renewal in flight must land before the release, or it would make the lease live again.
        await renewing;
        // Only ever this slot: a successor's lease is never touched.
        await this.ledger.update(workspace, [{ id, metadata: { ...metadata, expires_at: 0, released: true } }]).catch(() => undefined);
      },
    };
  }

  /** The highest lease slot of the session, probing from the last one known. */
  private async highest(workspace: string, sessionId: string): Promise<StoredRecord | undefined> {
    let from = this.hints.get(`${workspace}|${sessionId}`) ?? 0;
    let top: StoredRecord | undefined;
    for (;;) {
      const ids = Array.from({ length: PROBE }, (_, i) => leaseId(sessionId, from + i));
      const found = await this.ledger.get(workspace, ids);
      for (const slot of found) if (!top || Number(slot.metadata.n) > Number(top.metadata.n)) top = slot;
      if (found.length < PROBE) break;
      from += PROBE;
    }
    if (!top && from > 0) {
      // A hint past the end (a workspace recreated): start over from 0.
      this.hints.delete(`${workspace}|${sessionId}`);
      return this.highest(workspace, sessionId);
    }
    return top;
  }
}
