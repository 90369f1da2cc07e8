import type { Logger } from "@cairn/memory-core";
import type { DueSessions } from "./due-sessions.js";
import type { SummaryWriter } from "./writer.js";

export interface WorkerOptions {
  workspaces: () => string[];
  pollMs: number;
  concurrency: number;
  now?: () => number;
}

/**
 * The background loop: every poll, for each workspace, catch up with the change feed and summarize the
 * sessions that are due, a bounded number at a time. A failure (Chroma or model down) is logged and the
 * session stays pending for the next poll; the loop itself only ends with stop().
 */
export class SummarizerWorker {
  private readonly abort = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private readonly now: () => number;

  constructor(
    private readonly due: DueSessions,
    private readonly writer: SummaryWriter,
    private readonly options: WorkerOptions,
    private readonly log: Logger,
  ) {
    this.now = options.now ?? Date.now;
  }

  start(): void {
    this.schedule(0);
  }

  /** Stops polling, aborts model calls in flight and waits for the current round to end. */
  async stop(): Promise<void> {
    this.abort.abort();
    clearTimeout(this.timer);
    await this.running.catch(() => undefined);
  }

  /** One round over every workspace; resolves when it is done (tests and benchmarks drive it directly). */
  async runOnce(): Promise<void> {
    for (const workspace of this.options.workspaces()) {
      if (this.abort.signal.aborted) return;
      try {
        await this.due.refresh(workspace);
      } catch (error) {
        this.log.warn("summarizer could not read the change feed", { workspace, error: describe(error) });
        continue;
      }
      const queue = this.due.due(workspace, this.now());
      const next = async (): Promise<void> => {
        const item = queue.shift();
        if (!item || this.abort.signal.aborted) return;
        await this.summarize(workspace, item.sessionId, item.version);
        return next();
      };
      await Promise.all(Array.from({ length: Math.min(this.options.concurrency, queue.length) }, next));
    }
  }

  private async summarize(workspace: string, sessionId: string, version: number): Promise<void> {
    try {
      const outcome = await this.writer.write(workspace, sessionId, { force: false, signal: this.abort.signal });
      if (outcome.kind !== "busy") this.due.settle(workspace, sessionId, version, outcome.turnIds, this.now());
    } catch (error) {
      if (this.abort.signal.aborted) return;
      this.log.warn("summarizing a session failed; it stays pending", { workspace, session_id: sessionId, error: describe(error) });
    }
  }

  private schedule(delay: number): void {
    if (this.abort.signal.aborted) return;
    this.timer = setTimeout(() => {
      this.running = this.runOnce()
        .catch((error) => this.log.error("summarizer round failed", { error: describe(error) }))
        .finally(() => this.schedule(this.options.pollMs));
    }, delay);
  }
}

const describe = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));
