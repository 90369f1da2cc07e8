import type { EmbeddingsConfig } from "../services/memory-core/src/config.js";
import { createEmbedder } from "../services/memory-core/src/embeddings/create.js";
import type { Embedder } from "../services/memory-core/src/embeddings/embedder.js";
import { silentLogger } from "../services/memory-core/src/logger.js";
import { startOpenAIStub, type OpenAIStub } from "../testing/openai-stub.js";
import { timed } from "./stats.js";

const HASH_MODEL = "hash-bow-512";

/** The hashing stub, for a process that will serve it to another (see `timedEmbedder`'s `hashStubUrl`). */
export const startHashStub = () => startOpenAIStub({ dimension: 512 });

export interface TimedEmbedder {
  /** Records the time of every call in `times`, so a benchmark can report figures without the embedding. */
  embedder: Embedder;
  /** The embedder itself, for work that is not to be timed. */
  inner: Embedder;
  times: number[];
  close(): Promise<void>;
}

/**
 * `local`: the default model. `hash`: hashing bag-of-words vectors from the OpenAI-compatible stub, for runs where
 * what is measured is Cairn's own cost around the embedding (the local model's rate: docs/benchmarks.md,
 * "memory-core latency").
 */
export async function timedEmbedder(kind: string | undefined, options: { hashStubUrl?: string } = {}): Promise<TimedEmbedder> {
  if (kind !== "local" && kind !== "hash") throw new Error("--embedder is local or hash");
  let stub: OpenAIStub | undefined;
  let embeddings: EmbeddingsConfig = { kind: "local" };
  if (kind === "hash") {
    // A stub served by another process keeps its work off the event loop of the process measured.
    const baseUrl = options.hashStubUrl ?? (stub = await startOpenAIStub({ dimension: 512 })).baseUrl;
    embeddings = { kind: "openai", baseUrl, model: HASH_MODEL, apiKey: undefined };
  }
  const times: number[] = [];
  const inner = await createEmbedder(embeddings, silentLogger);
  const embedder: Embedder = {
    model: inner.model,
    dimension: inner.dimension,
    async embed(texts) {
      const { ms, value } = await timed(() => inner.embed(texts));
      times.push(ms);
      return value;
    },
  };
  return { embedder, inner, times, close: async () => stub?.close() };
}

/**
 * The embedder a quality bench runs with: the local default, or (`--embeddings-url`, `--embeddings-model`) an
 * OpenAI-compatible server on this machine, so that another model is measured beside the default. Only loopback
 * addresses are taken: nothing a bench embeds leaves the machine.
 */
export function benchEmbeddings(url: string | undefined, model: string | undefined): EmbeddingsConfig {
  if (url === undefined) return { kind: "local" };
  if (!model) throw new Error("--embeddings-url needs --embeddings-model");
  const { hostname } = new URL(url);
  if (!/^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(hostname)) throw new Error("--embeddings-url must be a loopback address");
  return { kind: "openai", baseUrl: url, model, apiKey: undefined };
}
