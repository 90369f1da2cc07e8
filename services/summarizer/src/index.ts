import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { RunningSummarizer, SummarizerFactory, SummarizerParts } from "@cairn/memory-core";
import type { SummarizerConfig } from "./config.js";
import { DueSessions } from "./due-sessions.js";
import { SessionLeases } from "./lease.js";
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
 * The summarizer over memory-core's parts: the background worker (unless `worker` is off) and the
 * `summarize_session` port. Given to memory-core's stack as a factory, so memory-core never imports it.
 */
export function createSummarizer(config: SummarizerConfig, parts: SummarizerParts, options: { now?: () => number } = {}): Summarizer {
  const now = options.now ?? Date.now;
  const { store, memories, embedder, tokens, log } = parts;
  const leases = new SessionLeases(store, config.leaseMs, `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`, now);
  const model = config.chat
    ? {
        chat: createChatModel(config.chat, log),
        options: { contextTokens: config.chat.contextTokens, retries: config.chat.retries, backoffMs: config.chat.backoffMs },
      }
    : undefined;
  const writer = new SummaryWriter({ store, memories, embedder, leases, model, log, now });
  const worker = new SummarizerWorker(
    new DueSessions(store, config.idleMs),
    writer,
    { workspaces: () => tokens.workspaces(), pollMs: config.pollMs, concurrency: config.concurrency, now },
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
  async (parts) =>
    createSummarizer(config, parts);
