import type { MemoryLimit } from "./config.js";
import type { Logger } from "./logger.js";

/** Shares of the limit that are warned of, each once on the way up. */
export const WARN_AT = [0.8, 0.9] as const;
/** A share warned of is warned of again only after the resident size has fallen this far below it. */
export const REARM_MARGIN = 0.05;
/** How often the resident size is checked. */
export const CHECK_INTERVAL_MS = 15_000;

/**
 * Warns in the log, well before memory-core reaches its memory limit, instead of letting the kernel end it
 * silently: once when the resident size crosses 80% of the limit, once more at 90%, and again only after it has
 * fallen back (5 points below the share last warned of) and crossed once more. Reads the resident size only.
 */
export class MemoryWatch {
  /** The highest share warned of since the resident size was last below it; 0 when none. */
  private warned = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly limit: MemoryLimit,
    private readonly log: Logger,
    private readonly resident: () => number = () => process.memoryUsage.rss(),
  ) {}

  /** Checks now; returns the share of the limit in use. */
  check(): number {
    const bytes = this.resident();
    const share = bytes / this.limit.bytes;
    const reached = WARN_AT.filter((level) => share >= level).at(-1) ?? 0;
    if (reached > this.warned) {
      this.warned = reached;
      this.log.warn(`resident size is above ${Math.round(reached * 100)}% of the memory limit`, {
        resident_bytes: bytes,
        limit_bytes: this.limit.bytes,
        limit_source: this.limit.source,
        share: Number(share.toFixed(3)),
        heap_used_bytes: process.memoryUsage().heapUsed,
        hint: "raise the limit (MEMORY_CORE_MEM_LIMIT in compose) or split workspaces across replicas: docs/deployment.md",
      });
    } else if (this.warned > 0 && share < this.warned - REARM_MARGIN) {
      this.log.info(`resident size is back below ${Math.round((this.warned - REARM_MARGIN) * 100)}% of the memory limit`, {
        resident_bytes: bytes,
        limit_bytes: this.limit.bytes,
      });
      this.warned = reached;
    }
    return share;
  }

  /** Checks every `intervalMs` on a timer that never keeps the process alive. */
  start(intervalMs = CHECK_INTERVAL_MS): void {
    this.stop();
    this.timer = setInterval(() => this.check(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
