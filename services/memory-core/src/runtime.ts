import { loadContract } from "@cairn/openapi";
import { loadTokenRegistry, type TokenRegistry } from "./auth/tokens.js";
import type { Config, EmbeddingsConfig, MemoryLimit } from "./config.js";
import type { SessionSummarizer } from "./domain/session-summarizer.js";
import { summarizerPort, type SummarizerPort } from "./domain/summarizer-port.js";
import type { RetrievalTuning } from "./retrieval/retrieval-tuning.js";
import type { Embedder } from "./embeddings/embedder.js";
import { CairnError } from "./errors.js";
import { createEmbedder } from "./embeddings/create.js";
import type { Readiness } from "./http/health.js";
import type { Logger } from "./logger.js";
import { Metrics } from "./metrics.js";
import { MemoryWatch } from "./memory-watch.js";
import { OperationExecutor } from "./operations/executor.js";
import { composeServices, type ComposedServices } from "./services.js";
import { openStorage, type Storage } from "./storage.js";
import { COLLECTIONS, ChromaStore, StampMismatchError } from "./store/chroma-store.js";

/** What a summarizer is built from: memory-core's port for it (never the store), and where to log. */
export interface SummarizerParts {
  memory: SummarizerPort;
  log: Logger;
}

/** A summarizer running beside memory-core: answers `summarize_session` and stops with the process. */
export interface RunningSummarizer extends SessionSummarizer {
  stop(): Promise<void>;
}

/** Injected by the composition root, so memory-core never depends on the summarizer package. */
export type SummarizerFactory = (parts: SummarizerParts) => Promise<RunningSummarizer>;

/** Everything a transport needs, assembled once per process. */
export interface Runtime {
  executor: OperationExecutor;
  services: ComposedServices;
  storage: Storage;
  store: ChromaStore;
  embedder: Embedder;
  tokens: TokenRegistry;
  metrics: Metrics;
  /** Present when a summarizer factory was given. */
  summarizer: RunningSummarizer | undefined;
  readiness(): Promise<Readiness>;
  /**
   * Readies a workspace that was not known at start (a tokens file changed while serving) as the start readies
   * each: its collections checked against the embedding stamp, its lexical indexes loaded. Throws when it cannot.
   */
  openWorkspace(workspace: string): Promise<void>;
  /**
   * Stops what the runtime runs on its own (the lexical ranking thread, the local model's thread unless the embedder
   * was passed in); the summarizer is stopped by its owner.
   */
  close(): Promise<void>;
}

export interface RuntimeOptions {
  chromaUrl: URL;
  embeddings: EmbeddingsConfig;
  tokens: TokenRegistry;
  log: Logger;
  /** Reuse one loaded embedder across runtimes (tests, replicas in one process). */
  embedder?: Embedder;
  processMetrics?: boolean;
  /** Retrieval knobs other than the measured defaults: for bench/ experiments only. */
  tuning?: RetrievalTuning;
  summarizer?: SummarizerFactory;
  /** Start over workspaces stamped by another embedding model, which then wait for `cairn reembed`. */
  maintenance?: boolean;
  /** The memory limit to warn of in the log before it is reached (memory-watch.ts); none, no warnings. */
  memoryLimit?: MemoryLimit;
  /** Where the lexical indexes' snapshots go (Config.indexDir); none, every start reads them out of Chroma. */
  indexDir?: string;
  /** The most memories one `review_matching` call reviews (Config.reviewPerCall). */
  reviewPerCall?: number;
}

/** How many times the warm-up is tried while Chroma is up but slow to answer its first reads (see createRuntime). */
const WARM_UP_ATTEMPTS = 5;

/**
 * The start gave up on a workspace whose first reads Chroma, up and answering its heartbeat, did not answer in
 * time: a large store whose files are not in the operating system's cache loads its vector indexes from disk
 * then, at the disk's read rate. Not "Chroma cannot be reached", which would send an operator to the wrong place.
 */
export class WarmUpError extends Error {
  override name = "WarmUpError";
  constructor(
    readonly workspace: string,
    readonly attempts: number,
  ) {
    super(
      `Chroma answers, but did not answer the first reads of workspace "${workspace}" in ${attempts} attempts: ` +
        "a large store loads its vector indexes from disk at Chroma's first reads. Start again (what was read stays " +
        "in the operating system's cache, so the next start reads less), or move the data dir to a faster disk.",
    );
  }
}

/**
 * Loads and validates the contract, loads the embedder, reaches Chroma and checks every known workspace's
 * collections against the embedding stamp. Any failure stops the start: the service never half-starts.
 */
export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  const contract = await loadContract();
  const embedder = options.embedder ?? (await createEmbedder(options.embeddings, options.log));
  try {
    return await assembleRuntime(options, contract, embedder);
  } catch (error) {
    if (!options.embedder) await embedder.close?.();
    throw error;
  }
}

async function assembleRuntime(
  options: RuntimeOptions,
  contract: Awaited<ReturnType<typeof loadContract>>,
  embedder: Embedder,
): Promise<Runtime> {
  const metrics = new Metrics({ processMetrics: options.processMetrics ?? true });
  const store = new ChromaStore(
    options.chromaUrl,
    { model: embedder.model, dimension: embedder.dimension },
    options.log,
    (request, seconds) => metrics.chromaSeconds.observe({ request }, seconds),
  );
  await store.heartbeat();
  const awaitingReembed = new Set<string>();
  const checkStamps = async (workspace: string) => {
    try {
      for (const name of COLLECTIONS) await store.collection(workspace, name);
    } catch (error) {
      if (!(options.maintenance && error instanceof StampMismatchError)) throw error;
      options.log.warn("workspace waits for re-embedding (cairn reembed)", { workspace });
      awaitingReembed.add(workspace);
    }
  };
  for (const workspace of options.tokens.workspaces()) await checkStamps(workspace);
  const storage = openStorage(store);
  const services = composeServices(storage, embedder, {
    log: options.log,
    importers: (workspace) => options.tokens.importers(workspace),
    members: (workspace) => options.tokens.agents(workspace),
    ...(options.tuning ? { tuning: options.tuning } : {}),
    ...(options.indexDir ? { snapshots: { dir: options.indexDir } } : {}),
    ...(options.reviewPerCall ? { reviewPerCall: options.reviewPerCall } : {}),
  });
  metrics.observeResources({ memoryLimit: options.memoryLimit, lexical: () => services.lexical.stats() });
  // Watched from before the warm-up, which is where a store too large for the limit first shows.
  const watch = options.memoryLimit ? new MemoryWatch(options.memoryLimit, options.log) : undefined;
  if (watch) {
    options.log.info("watching resident size against the memory limit", {
      limit_bytes: watch.limit.bytes,
      limit_source: watch.limit.source,
    });
    watch.start();
  }
  const close = async () => {
    watch?.stop();
    await services.close();
    store.close();
    // An embedder passed in belongs to whoever passed it.
    if (!options.embedder) await embedder.close?.();
  };
  // The lexical indexes are derived from Chroma: loaded from their snapshots and caught up from the change feed,
  // or else rebuilt from Chroma, at every start before the first request.
  // Chroma's first read of a collection loads its vector index and replays its log first, which over a large store
  // can outlast a read's timeout while Chroma itself is up: the warm-up is tried again while Chroma answers its
  // heartbeat (a bounded number of times), and fails at once when it does not.
  const chromaAnswers = () =>
    store.heartbeat().then(
      () => true,
      () => false,
    );
  // Chroma's vector indexes load while the lexical indexes do, not in the first caller's query; their failure does
  // not matter here (the lexical side reports a Chroma out of reach). Ready means answering: each lexical index is
  // awaited until the ranking thread has indexed what it was sent.
  const warmUpOnce = async (workspace: string) => {
    const vectors = store.loadVectorIndexes(workspace).catch(() => undefined);
    const ready = (collection: "turns" | "summaries") => services.lexical.snapshot(workspace, collection).then((index) => index.ready());
    await Promise.all([ready("turns"), ready("summaries"), vectors]);
  };
  const warmUp = async (workspace: string) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await warmUpOnce(workspace);
      } catch (error) {
        const slow = error instanceof CairnError && error.code === "unavailable";
        if (!slow || !(await chromaAnswers())) throw error;
        if (attempt === WARM_UP_ATTEMPTS) throw new WarmUpError(workspace, attempt);
        options.log.warn("Chroma did not answer a first read in time (a large store loads its indexes then); warming up again", {
          workspace,
          attempt,
        });
      }
    }
  };
  try {
    for (const workspace of options.tokens.workspaces()) {
      if (!awaitingReembed.has(workspace)) await warmUp(workspace);
    }
  } catch (error) {
    await close();
    throw error;
  }
  watch?.check();
  /** Workspaces still stamped by another model; re-checked until `cairn reembed` has moved them over. */
  const stampsOk = async () => {
    for (const workspace of [...awaitingReembed]) {
      const current = await Promise.all(COLLECTIONS.map((name) => store.collection(workspace, name))).then(
        () => true,
        () => false,
      );
      if (current) awaitingReembed.delete(workspace);
    }
    return awaitingReembed.size === 0;
  };
  const summarizer = options.summarizer
    ? await options.summarizer({
        memory: summarizerPort({ storage, writes: services.writes, embedder, tokens: options.tokens }),
        log: options.log,
      })
    : undefined;
  const executor = new OperationExecutor(contract, services, metrics, summarizer);
  return {
    executor,
    services,
    storage,
    store,
    embedder,
    tokens: options.tokens,
    metrics,
    summarizer,
    async openWorkspace(workspace) {
      await checkStamps(workspace);
      if (!awaitingReembed.has(workspace)) await warmUp(workspace);
    },
    async readiness() {
      const chroma = await store.heartbeat().then(
        () => "ok" as const,
        () => "failing" as const,
      );
      // The embedder is loaded and the stamps were checked before the runtime existed (in maintenance, some
      // workspaces may still wait for re-embedding: not ready for agents until they are done).
      const stamps = awaitingReembed.size === 0 || (chroma === "ok" && (await stampsOk())) ? ("ok" as const) : ("failing" as const);
      const checks = { chroma, embedder: "ok" as const, stamps };
      return { ready: chroma === "ok" && stamps === "ok", checks };
    },
    close,
  };
}

/**
 * For a summarizer run as its own process (`npm run summarizer`): memory-core's port over the Chroma, embedder
 * and tokens of `config`, checked the way the server checks them (a workspace embedded with another model is
 * refused before anything is written). The summarizer never sees the store behind it.
 */
export async function openSummarizerPort(
  config: Config & { chromaUrl: URL },
  log: Logger,
): Promise<{ memory: SummarizerPort; close(): Promise<void> }> {
  const tokens = await loadTokenRegistry(config.tokensFile);
  const embedder = await createEmbedder(config.embeddings, log);
  const store = new ChromaStore(config.chromaUrl, { model: embedder.model, dimension: embedder.dimension }, log);
  await store.heartbeat();
  for (const workspace of tokens.workspaces()) for (const name of COLLECTIONS) await store.collection(workspace, name);
  const storage = openStorage(store);
  const services = composeServices(storage, embedder, { log });
  return {
    memory: summarizerPort({ storage, writes: services.writes, embedder, tokens }),
    async close() {
      await services.close();
      store.close();
      await embedder.close?.();
    },
  };
}
