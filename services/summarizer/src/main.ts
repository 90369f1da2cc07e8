import {
  COLLECTIONS,
  ChromaStore,
  createEmbedder,
  createLogger,
  describeStartError,
  loadTokenRegistry,
  MemoryService,
} from "@cairn/memory-core";
import { loadStandaloneConfig } from "./config.js";
import { createSummarizer } from "./index.js";

/**
 * `npm run summarizer`: the worker as its own process, against an external Chroma (compose, or the one a
 * running `npm start` serves). It embeds summaries with the same settings as memory-core, and finds the
 * workspaces in the same tokens file.
 */
async function main(): Promise<void> {
  const log = createLogger("summarizer");
  let summarizer;
  try {
    const { core, summarizer: config } = loadStandaloneConfig();
    const tokens = await loadTokenRegistry(core.tokensFile);
    const embedder = await createEmbedder(core.embeddings, log);
    const store = new ChromaStore(core.chromaUrl, { model: embedder.model, dimension: embedder.dimension }, log);
    await store.heartbeat();
    // Refuses a workspace embedded with another model before anything is written.
    for (const workspace of tokens.workspaces()) for (const name of COLLECTIONS) await store.collection(workspace, name);
    const memories = new MemoryService(store, embedder);
    summarizer = createSummarizer(config, { store, memories, embedder, tokens, log });
  } catch (error) {
    process.stderr.write(`cairn summarizer: ${describeStartError(error)}\n`);
    process.exit(1);
  }
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info("stopping", { signal });
    await summarizer.stop();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

void main();
