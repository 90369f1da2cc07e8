/**
 * What other workspace packages may use of memory-core: for the summarizer, the port it reads and writes
 * memory through (never the store) and the port it implements; for composition roots, the stack and what a
 * standalone worker starts from.
 */
export { loadConfig, ConfigError, type Config, type EmbeddingsConfig } from "./config.js";
export { loadTokenRegistry, TokenRegistry, TokensFileError } from "./auth/tokens.js";
export { createLogger, silentLogger, type Logger } from "./logger.js";
export { CairnError, notFound, unavailable } from "./errors.js";
export { describeStartError } from "./start-errors.js";
export { createEmbedder } from "./embeddings/create.js";
export type { Embedder } from "./embeddings/embedder.js";
export type { NewSummary } from "./domain/write-service.js";
export { FEED_PENDING_MS } from "./ledger/change-feed.js";
export type { SummarizerPort, SessionTurn, SessionChange, SessionsOverview, Lease } from "./domain/summarizer-port.js";
export type { SessionLeases } from "./ledger/session-leases.js";
export type { SessionSummarizer } from "./domain/session-summarizer.js";
export type { Summary, SummarizeSessionResult } from "./records/types.js";
export type { Runtime, RunningSummarizer, SummarizerFactory, SummarizerParts } from "./runtime.js";
export { startStack, type Stack, type StackOptions } from "./stack.js";
export type { ConsoleFiles } from "./http/console-route.js";
export { openSummarizerPort } from "./runtime.js";
export { startBanner } from "./banner.js";
export { stopOnSignals } from "./shutdown.js";
