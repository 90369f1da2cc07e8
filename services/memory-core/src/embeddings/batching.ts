import type { Embedder } from "./embedder.js";

interface Pending {
  texts: readonly string[];
  resolve: (vectors: number[][]) => void;
  reject: (error: unknown) => void;
}

/**
 * Coalesces concurrent `embed` calls into one call of the inner embedder: under load, many `add_memory`
 * requests share one model pass instead of queueing one pass each.
 */
export function withBatching(inner: Embedder, maxBatch = 64): Embedder {
  const queue: Pending[] = [];
  let scheduled = false;
  let running: Promise<void> = Promise.resolve();

  const flush = () => {
    scheduled = false;
    const taken: Pending[] = [];
    let size = 0;
    while (queue.length > 0 && (taken.length === 0 || size + queue[0]!.texts.length <= maxBatch)) {
      const next = queue.shift()!;
      taken.push(next);
      size += next.texts.length;
    }
    if (queue.length > 0) schedule();
    running = running.then(async () => {
      try {
        const vectors = await inner.embed(taken.flatMap((p) => p.texts));
        let offset = 0;
        for (const p of taken) {
          p.resolve(vectors.slice(offset, offset + p.texts.length));
          offset += p.texts.length;
        }
      } catch (error) {
        for (const p of taken) p.reject(error);
      }
    });
  };
  const schedule = () => {
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };

  return {
    model: inner.model,
    dimension: inner.dimension,
    embed(texts) {
      if (texts.length === 0) return Promise.resolve([]);
      return new Promise((resolve, reject) => {
        queue.push({ texts, resolve, reject });
        schedule();
      });
    },
  };
}
