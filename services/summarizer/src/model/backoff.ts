/** Waits `ms`, or less if the signal aborts first (the worker is stopping). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
  });
}

/** Exponential with full jitter: retries of many workers against one recovering server spread out. */
export const backoffDelay = (baseMs: number, attempt: number) => Math.random() * Math.min(30_000, baseMs * 2 ** attempt);
