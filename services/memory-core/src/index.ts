/**
 * What other workspace packages (the summarizer) may use of memory-core: the store facade, the domain
 * helpers a worker needs, the port it implements, and the stack for composition roots.
 */
export { loadConfig, ConfigError, type Config, type EmbeddingsConfig } from "./config.js";
export { loadTokenRegistry, TokenRegistry, TokensFileError } from "./auth/tokens.js";
export { createLogger, silentLogger, type Logger } from "./logger.js";
export { CairnError, notFound, unavailable } from "./errors.js";
export { describeStartError } from "./start-errors.js";
export { createEmbedder } from "./embeddings/create.js";
export type { Embedder } from "./embeddings/embedder.js";
export { ChromaStore, type StoredRecord, type Metadata, type RecordCollection } from "./store/chroma-store.js";
export { COLLECTIONS } from "./store/chroma-store.js";
export { MemoryService, type NewSummary } from "./domain/memory-service.js";
export { Ledger, leaseId, RECENCY_VECTOR } from "./ledger/ledger.js";
export { Sequences } from "./ledger/sequences.js";
export { ChangeFeed, FEED_PENDING_MS, feedStream } from "./ledger/change-feed.js";
export { summaryFromRecord } from "./domain/summary-record.js";
export { summaryId } from "./domain/ids.js";
export { turnFields } from "./domain/turn-record.js";
export type { SessionSummarizer } from "./domain/session-summarizer.js";
export type { Summary, SummarizeSessionResult } from "./domain/types.js";
export type { Runtime, RunningSummarizer, SummarizerFactory, SummarizerParts } from "./runtime.js";
export { startStack, type Stack, type StackOptions } from "./stack.js";
export { startBanner } from "./banner.js";
