import type { EmbeddingsConfig } from "../config.js";
import type { Logger } from "../logger.js";
import { withBatching } from "./batching.js";
import type { Embedder } from "./embedder.js";
import { createLocalEmbedder } from "./local.js";
import { createOpenAIEmbedder } from "./openai.js";

export async function createEmbedder(config: EmbeddingsConfig, log: Logger): Promise<Embedder> {
  const inner = config.kind === "local" ? await createLocalEmbedder() : await createOpenAIEmbedder(config, log);
  return withBatching(inner);
}
