import type { Embedder } from "./embedder.js";

interface Pending {
  texts: readonly string[];
  /** Texts handed to the inner embedder so far. */
  taken: number;
  vectors: number[][];
  failed: boolean;
  resolve: (vectors: number[][]) => void;
  reject: (error: unknown) => void;
}

/** Part of a pending call's texts in one inner call. */
interface Share {
  pending: Pending;
  from: number;
  count: number;
}

/**
 * Coalesces concurrent `embed` calls into calls of the inner embedder of at most `maxBatch` texts, one at a time:
 * under load, many `add_memory` requests share one model pass instead of queueing one pass each. A call with
 * more texts than that is embedded `maxBatch` texts at a time, and goes behind the calls that came meanwhile
 * after each of its shares: a query waits for one inner call, never for a whole bulk batch.
 */
export function withBatching(inner: Embedder, maxBatch: number): Embedder {
  const queue: Pending[] = [];
  /** The call whose texts the last inner call took only in part: it goes behind the calls made meanwhile. */
  let carried: Pending | undefined;
  let scheduled = false;
  let busy = false;

  /** The next inner call's texts, round robin over the waiting calls. */
  const take = (): Share[] => {
    if (carried) queue.push(carried);
    carried = undefined;
    const shares: Share[] = [];
    let size = 0;
    while (queue.length > 0 && size < maxBatch) {
      const pending = queue.shift()!;
      const count = Math.min(pending.texts.length - pending.taken, maxBatch - size);
      shares.push({ pending, from: pending.taken, count });
      pending.taken += count;
      size += count;
      if (pending.taken < pending.texts.length) carried = pending;
    }
    return shares;
  };

  const run = async () => {
    scheduled = false;
    if (busy || (queue.length === 0 && !carried)) return;
    busy = true;
    const shares = take();
    try {
      const vectors = await inner.embed(shares.flatMap((s) => s.pending.texts.slice(s.from, s.from + s.count)));
      let offset = 0;
      for (const { pending, count } of shares) {
        pending.vectors.push(...vectors.slice(offset, offset + count));
        offset += count;
        if (pending.vectors.length === pending.texts.length) pending.resolve(pending.vectors);
      }
    } catch (error) {
      for (const { pending } of shares) {
        if (pending.failed) continue;
        pending.failed = true;
        if (carried === pending) carried = undefined;
        pending.reject(error);
      }
    } finally {
      busy = false;
      if (queue.length > 0 || carried) schedule();
    }
  };
  const schedule = () => {
    if (!scheduled) {
      scheduled = true;
      setImmediate(() => void run());
    }
  };

  return {
    model: inner.model,
    dimension: inner.dimension,
    embed(texts) {
      if (texts.length === 0) return Promise.resolve([]);
      return new Promise((resolve, reject) => {
        queue.push({ texts, taken: 0, vectors: [], failed: false, resolve, reject });
        schedule();
      });
    },
    ...(inner.close ? { close: () => inner.close!() } : {}),
  };
}
