import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { MemoryLimit } from "./config.js";
import type { LexicalStats } from "./lexical/indexes.js";

/** One label of a sample, `name="value"` (values escape `\\`, `"` and newlines), then `,` or the closing `}`. */
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|\})/y;

/** The `workspace` label of a sample line of the text exposition, if it has one. */
function workspaceLabel(line: string): string | undefined {
  const open = line.indexOf("{");
  if (open === -1) return undefined;
  LABEL.lastIndex = open + 1;
  for (let label = LABEL.exec(line); label; label = LABEL.exec(line)) {
    if (label[1] === "workspace") return label[2];
    if (label[3] === "}") return undefined;
  }
  // Labels this parser cannot read: one that may name a workspace is taken for another's (never shown).
  return line.includes('workspace="') ? "" : undefined;
}

/** What the resource gauges read at each scrape. */
export interface ResourceSources {
  memoryLimit: MemoryLimit | undefined;
  lexical(): Promise<LexicalStats>;
}

/** Prometheus metrics of one app instance (its own registry: no process-wide state). */
export class Metrics {
  readonly registry = new Registry();
  readonly operations = new Counter({
    name: "cairn_operations_total",
    help: "Contract operations handled, by operation, transport and outcome (a Problem code, or ok).",
    labelNames: ["operation", "transport", "outcome"] as const,
    registers: [this.registry],
  });
  readonly operationSeconds = new Histogram({
    name: "cairn_operation_duration_seconds",
    help: "Time to handle a contract operation, by operation and transport.",
    labelNames: ["operation", "transport"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  /**
   * Where an operation's time goes when it is Chroma's: each request memory-core makes of it, by collection and
   * kind (`turns.get`, `ledger-slots.add`, ...; a fixed set, named in the store's code). On a store whose files the
   * machine no longer keeps in memory, reads wait on the disk and show here first (docs/deployment.md).
   */
  readonly chromaSeconds = new Histogram({
    name: "cairn_chroma_request_duration_seconds",
    help: "Time Chroma took to answer a request of memory-core's, by request (collection and kind), failures included.",
    labelNames: ["request"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [this.registry],
  });
  readonly httpRequests = new Counter({
    name: "cairn_http_requests_total",
    help: "HTTP requests, by route and status.",
    labelNames: ["route", "status"] as const,
    registers: [this.registry],
  });

  constructor(options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: "cairn_" });
  }

  /**
   * The exposition one workspace's admin is shown: every series of the process as a whole (sizes, heaps, requests
   * and operations counted across workspaces, which name none), and of the series labelled by workspace only its
   * own. Another workspace's name, and the size of its indexes, are not its admin's to read.
   */
  async scrape(workspace: string): Promise<string> {
    const text = await this.registry.metrics();
    return text
      .split("\n")
      .filter((line) => {
        if (line.startsWith("#")) return true;
        const labelled = workspaceLabel(line);
        return labelled === undefined || labelled === workspace;
      })
      .join("\n");
  }

  /**
   * Gauges of what limits one replica: its resident size and heap against its memory limit, and the size of
   * each lexical index it holds, records and distinct terms (read at each scrape without a pass over an index, never built by one). Labels are workspaces of the tokens
   * file and the two searchable collections: none comes from a caller's input.
   */
  observeResources(sources: ResourceSources): void {
    const registers = [this.registry];
    // One read of the indexes per scrape, shared by the gauges that a scrape collects together.
    let pending: Promise<LexicalStats> | undefined;
    const lexical = () => {
      pending ??= sources.lexical().finally(() => setImmediate(() => (pending = undefined)));
      return pending;
    };
    new Gauge({
      name: "cairn_memory_resident_bytes",
      help: "Resident set size of the memory-core process (every thread), as process.memoryUsage().rss reads it.",
      registers,
      collect() {
        this.set(process.memoryUsage.rss());
      },
    });
    new Gauge({
      name: "cairn_memory_heap_used_bytes",
      help: "V8 heap in use on the request thread (records' metadata and documents of the lexical indexes live here).",
      registers,
      collect() {
        this.set(process.memoryUsage().heapUsed);
      },
    });
    const limit = new Gauge({
      name: "cairn_memory_limit_bytes",
      help: "The memory limit memory-core warns against (CAIRN_MEMORY_LIMIT_MB, else its cgroup's); absent when none is known.",
      labelNames: ["source"] as const,
      registers,
    });
    if (sources.memoryLimit) limit.set({ source: sources.memoryLimit.source }, sources.memoryLimit.bytes);
    new Gauge({
      name: "cairn_lexical_thread_heap_used_bytes",
      help: "V8 heap in use on the lexical ranking thread: every index's postings and ranked metadata together.",
      registers,
      async collect() {
        // No thread runs before the first index is built: it holds nothing then.
        this.set((await lexical()).rankingHeapUsedBytes ?? 0);
      },
    });
    // Posting entries are not counted: that is a pass over every term, too long a hold of the ranking thread.
    const sizes: Array<["documents" | "terms", string]> = [
      ["documents", "Records held by a lexical index, by workspace and collection."],
      ["terms", "Distinct terms in a lexical index's BM25 postings, by workspace and collection."],
    ];
    for (const [figure, help] of sizes) {
      new Gauge({
        name: `cairn_lexical_index_${figure}`,
        help,
        labelNames: ["workspace", "collection"] as const,
        registers,
        async collect() {
          const stats = await lexical();
          this.reset();
          for (const index of stats.indexes) {
            const value = index[figure];
            if (value !== undefined) this.set({ workspace: index.workspace, collection: index.collection }, value);
          }
        },
      });
    }
  }
}
