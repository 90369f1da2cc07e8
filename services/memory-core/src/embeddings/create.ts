import type { EmbeddingsConfig } from "../config.js";
import type { Logger } from "../logger.js";
import { withBatching } from "./batching.js";
import type { Embedder } from "./embedder.js";
import { createLocalEmbedder, LOCAL_PASS_TEXTS } from "./local.js";
import { createOpenAIEmbedder, MAX_INPUTS_PER_REQUEST } from "./openai.js";

/** The configured embedder, behind the batching that hands it at most one model pass or one request at a time. */
export async function createEmbedder(config: EmbeddingsConfig, log: Logger): Promise<Embedder> {
  if (config.kind === "local") return withBatching(await createLocalEmbedder(), LOCAL_PASS_TEXTS);
  return withBatching(await createOpenAIEmbedder(config, log), MAX_INPUTS_PER_REQUEST);
}
