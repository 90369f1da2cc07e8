import OpenAI from "openai";
import { unavailable } from "../errors.js";
import type { Logger } from "../logger.js";
import type { Embedder } from "./embedder.js";

const MAX_INPUTS_PER_REQUEST = 128;

/** Any OpenAI-compatible `/v1/embeddings` (Ollama, llama.cpp, vLLM, TEI, OpenAI). */
export async function createOpenAIEmbedder(
  options: { baseUrl: string; model: string; apiKey: string | undefined },
  log: Logger,
): Promise<Embedder> {
  const client = new OpenAI({
    baseURL: options.baseUrl,
    // Local servers take any key; the SDK insists on one.
    apiKey: options.apiKey ?? "not-needed",
    timeout: 30_000,
    maxRetries: 2,
  });
  const embedBatch = async (texts: string[]): Promise<number[][]> => {
    try {
      const response = await client.embeddings.create({ model: options.model, input: texts, encoding_format: "float" });
      return [...response.data].sort((a, b) => a.index - b.index).map((d) => d.embedding);
    } catch (error) {
      log.warn("embedding request failed", { error: (error as Error).name });
      throw unavailable("The embedding model cannot be reached right now.");
    }
  };
  const probe = await embedBatch(["dimension probe"]);
  const dimension = probe[0]?.length ?? 0;
  if (dimension === 0) throw new Error("the embeddings server returned an empty vector");
  return {
    model: `openai:${options.model}`,
    dimension,
    async embed(texts) {
      const out: number[][] = [];
      for (let i = 0; i < texts.length; i += MAX_INPUTS_PER_REQUEST) {
        out.push(...(await embedBatch(texts.slice(i, i + MAX_INPUTS_PER_REQUEST))));
      }
      return out;
    },
  };
}
