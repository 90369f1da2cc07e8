import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Logger, RunningSummarizer, SummarizerFactory, SummarizerPort } from "@cairn/memory-core";
import type { SummarizerConfig } from "./config.js";
import { DueSessions } from "./due-sessions.js";
import { createChatModel } from "./model/chat-client.js";
import { OnDemandSummarizer } from "./on-demand.js";
import { SummarizerWorker } from "./worker.js";
import { SummaryWriter } from "./writer.js";

export { loadStandaloneConfig, loadSummarizerConfig, type SummarizerConfig } from "./config.js";

export interface Summarizer extends RunningSummarizer {
  /** One round of the background loop now (tests, benchmarks). */
  runOnce(): Promise<void>;
}

/**
 * The summarizer over memory-core's port (what it may read and write, in domain terms): the background
 * worker (unless `worker` is off) and the `summarize_session` answer. Given to memory-core's stack as a
 * factory by the composition root, so neither package imports the other's start-up.
 */
export function createSummarizer(
  config: SummarizerConfig,
  memory: SummarizerPort,
  log: Logger,
  options: { now?: () => number } = {},
): Summarizer {
  const now = options.now ?? Date.now;
  const leases = memory.sessionLeases({ ttlMs: config.leaseMs, holder: `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`, now });
  const model = config.chat
    ? {
        chat: createChatModel(config.chat, log),
        options: { contextTokens: config.chat.contextTokens, retries: config.chat.retries, backoffMs: config.chat.backoffMs },
      }
    : undefined;
  const writer = new SummaryWriter({ memory, leases, model, log, now });
  const worker = new SummarizerWorker(
    new DueSessions(memory, config.idleMs),
    writer,
    { workspaces: () => memory.workspaces(), pollMs: config.pollMs, concurrency: config.concurrency, now },
    log,
  );
  const stopping = new AbortController();
  const onDemand = new OnDemandSummarizer(writer, stopping.signal);
  if (config.worker) worker.start();
  log.info("summarizer ready", { mode: model ? "model" : "extractive", worker: config.worker, idle_ms: config.idleMs });
  return {
    summarizeSession: (workspace, sessionId, opts) => onDemand.summarizeSession(workspace, sessionId, opts),
    runOnce: () => worker.runOnce(),
    async stop() {
      stopping.abort();
      await worker.stop();
    },
  };
}

/** For memory-core's stack (npm start): the summarizer runs in the same process. */
export const summarizerFactory =
  (config: SummarizerConfig): SummarizerFactory =>
  ({ memory, log }) =>
    Promise.resolve(createSummarizer(config, memory, log));
