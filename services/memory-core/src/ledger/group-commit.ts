/** Work that fails with its batch: each item is told why. */
interface Rejectable {
  reject(error: unknown): void;
}

/**
 * Group commit per key (a workspace): items that come while the key's batch is in flight wait for it, then go
 * together as the next batch, at most `maxBatch` at a time; items that come when none is in flight start one
 * at once. Chroma applies writes one at a time, so writes sent in parallel would wait for each other anyway and
 * each pay a request of its own; a batch pays one. `commit` settles its batch's items; a batch whose `commit`
 * throws has each of its items rejected with that error, and the next batch goes on.
 *
 * With `gatherMs`, a batch that follows another waits, at most that long, until as many items are queued as the
 * batch before held together with those that queued behind it. Writers that write one item after another come
 * back as soon as their batch answers them, a moment after those that queued meanwhile; without the wait they
 * split into two batches that alternate, each waiting for the other's (docs/benchmarks.md). A lone writer never
 * waits: its next item is all that is wanted.
 */
export class GroupCommit<Item extends Rejectable> {
  /** Items waiting for the key's batch in flight to end; present while one runs. */
  private readonly queues = new Map<string, Item[]>();
  /** Per key whose next batch is gathering, what to call when an item is queued. */
  private readonly gathering = new Map<string, () => void>();

  constructor(
    private readonly maxBatch: number,
    private readonly commit: (key: string, batch: Item[]) => Promise<void>,
    private readonly gatherMs = 0,
  ) {}

  /** Queues the items behind the key's batch in flight, or starts a batch with them now. */
  add(key: string, items: readonly Item[]): void {
    const queue = this.queues.get(key);
    if (queue) {
      queue.push(...items);
      this.gathering.get(key)?.();
    } else {
      this.queues.set(key, [...items]);
      void this.drain(key);
    }
  }

  /** Commits the key's queued items batch by batch until none are left. */
  private async drain(key: string): Promise<void> {
    const queue = this.queues.get(key)!;
    let wanted = 0;
    for (;;) {
      if (this.gatherMs > 0 && queue.length < wanted) await this.gather(key, queue, wanted);
      if (queue.length === 0) break;
      const batch = queue.splice(0, this.maxBatch);
      try {
        await this.commit(key, batch);
      } catch (error) {
        for (const item of batch) item.reject(error);
      }
      wanted = Math.min(this.maxBatch, batch.length + queue.length);
    }
    this.queues.delete(key);
  }

  /** Resolves once `queue` holds `wanted` items, or after `gatherMs`. */
  private gather(key: string, queue: readonly Item[], wanted: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.gathering.delete(key);
        resolve();
      };
      const timer = setTimeout(done, this.gatherMs);
      this.gathering.set(key, () => {
        if (queue.length >= wanted) done();
      });
    });
  }
}
