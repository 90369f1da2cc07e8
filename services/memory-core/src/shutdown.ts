import { constants } from "node:os";
import type { Logger } from "./logger.js";

/**
 * What a start has opened, closed in the reverse order on stop or when a later step of the start fails. Each
 * close runs once; one that fails does not keep the others from running.
 */
export class Cleanups {
  private readonly steps: Array<() => Promise<void>> = [];

  push(step: () => Promise<void>): void {
    this.steps.push(step);
  }

  async run(): Promise<void> {
    const steps = this.steps.splice(0).reverse();
    for (const step of steps) await step().catch(() => undefined);
  }
}

/** Ctrl-C, `kill`, a supervisor's stop, a closed terminal. */
export const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** How long after a signal the same signal again is taken for the first, passed on (see stopOnSignals). */
export const REPEAT_MS = 1000;

export interface StopOptions {
  log: Logger;
  /** The process's exit, a seam for nothing but the process itself: exits 0 after an orderly close. */
  exit?: (code: number) => never;
}

/**
 * An entry point's stop: the stop signals (and whatever else calls the returned function: stdin's end, a closed
 * transport) run `close` once, then the process exits 0 (1 when `close` failed). A second signal while `close`
 * runs exits at once with 128 + its number, for an operator whose Ctrl-C met a close that hangs.
 *
 * The same signal again within REPEAT_MS of the first is the same request, not a second one: under `tsx` (npm
 * start), Ctrl-C reaches both tsx and its child, and tsx passes the signal on when the child was too busy to tell
 * it that it had its own, so the child finds it twice, the second time as late as the child was busy (writing its
 * snapshots, say). A person's second Ctrl-C, or another signal, still stops at once.
 */
export function stopOnSignals(
  close: () => Promise<void>,
  { log, exit = (code) => process.exit(code) }: StopOptions,
): (reason: string) => Promise<void> {
  let stopping: Promise<void> | undefined;
  let armed = false;
  let first: { signal: string; at: number } | undefined;
  const stop = (reason: string): Promise<void> => {
    if (stopping) return stopping;
    // Set before anything is closed: a close can ask to stop again synchronously (a transport's onclose).
    let closed!: () => void;
    stopping = new Promise<void>((resolve) => (closed = resolve));
    log.info("stopping", (STOP_SIGNALS as readonly string[]).includes(reason) ? { signal: reason } : { reason });
    setImmediate(() => (armed = true));
    void close().then(
      () => {
        closed();
        exit(0);
      },
      (error: unknown) => {
        log.error("stopping failed", { error: String((error as Error)?.message ?? error) });
        closed();
        exit(1);
      },
    );
    return stopping;
  };
  for (const signal of STOP_SIGNALS) {
    process.on(signal, () => {
      if (!stopping) {
        first = { signal, at: Date.now() };
        void stop(signal);
        return;
      }
      if (!armed) return;
      if (first?.signal === signal && Date.now() - first.at < REPEAT_MS) return;
      log.warn("stopping at once: a second signal came before the orderly stop ended", { signal });
      exit(128 + constants.signals[signal]);
    });
  }
  return stop;
}
