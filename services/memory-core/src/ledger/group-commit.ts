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
 */
export class GroupCommit<Item extends Rejectable> {
  /** Items waiting for the key's batch in flight to end; present while one runs. */
  private readonly queues = new Map<string, Item[]>();

  constructor(
    private readonly maxBatch: number,
    private readonly commit: (key: string, batch: Item[]) => Promise<void>,
  ) {}

  /** Queues the items behind the key's batch in flight, or starts a batch with them now. */
  add(key: string, items: readonly Item[]): void {
    const queue = this.queues.get(key);
    if (queue) queue.push(...items);
    else {
      this.queues.set(key, [...items]);
      void this.drain(key);
    }
  }

  /** Commits the key's queued items batch by batch until none are left. */
  private async drain(key: string): Promise<void> {
    const queue = this.queues.get(key)!;
    while (queue.length > 0) {
      const batch = queue.splice(0, this.maxBatch);
      try {
        await this.commit(key, batch);
      } catch (error) {
        for (const item of batch) item.reject(error);
      }
    }
    this.queues.delete(key);
  }
}
