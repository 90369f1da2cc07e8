import { setTimeout as sleep } from "node:timers/promises";
import { unavailable } from "../errors.js";
import type { Logger } from "../logger.js";
import { JsonClient, Rejected, Unreachable } from "../net/json-client.js";
import type { Embedder } from "./embedder.js";

export const MAX_INPUTS_PER_REQUEST = 128;
const TIMEOUT_MS = 30_000;
/** Tries after the first, on a refused connection, a timeout, or a status that says to come back later. */
const RETRIES = 2;
const FIRST_BACKOFF_MS = 500;
/**
 * A server's `Retry-After` is honoured up to this long (the openai package waits up to 60 s): a query waits
 * for its embedding, and an agent is better served by a 503 it can act on than by a minute of silence.
 */
const MAX_RETRY_AFTER_MS = 10_000;

interface EmbeddingsReply {
  data?: Array<{ index?: number; embedding?: unknown }>;
}

/**
 * Any OpenAI-compatible `/v1/embeddings` (Ollama, llama.cpp, vLLM, TEI, OpenAI). Called over a JsonClient rather
 * than the openai package: every query embeds its text, and the package's fetch costs measurably more CPU per
 * call (docs/benchmarks.md, "memory-core latency": "the calls every query makes go over node:http"). The timeout
 * and the retries are the package's defaults, except that a server's `Retry-After` is honoured only up to
 * MAX_RETRY_AFTER_MS.
 */
export async function createOpenAIEmbedder(
  options: { baseUrl: string; model: string; apiKey: string | undefined },
  log: Logger,
): Promise<Embedder> {
  const client = new JsonClient(new URL(options.baseUrl), {
    timeoutMs: TIMEOUT_MS,
    ...(options.apiKey ? { headers: { authorization: `Bearer ${options.apiKey}` } } : {}),
  });
  const embedBatch = async (texts: string[]): Promise<number[][]> => {
    for (let attempt = 0; ; attempt++) {
      try {
        const reply = await client.post<EmbeddingsReply>("/embeddings", { model: options.model, input: texts, encoding_format: "float" });
        return vectorsOf(reply, texts.length);
      } catch (error) {
        if (attempt < RETRIES && worthRetrying(error)) {
          const backoff = FIRST_BACKOFF_MS * 2 ** attempt * (0.75 + Math.random() / 2);
          const asked =
            error instanceof Rejected && error.retryAfterMs !== undefined ? Math.min(error.retryAfterMs, MAX_RETRY_AFTER_MS) : 0;
          await sleep(Math.max(backoff, asked));
          continue;
        }
        // The status and the kind of failure only: a server's reply may echo the text it was asked to embed.
        log.warn("embedding request failed", {
          error: error instanceof Error ? error.name : "unknown",
          ...(error instanceof Rejected ? { status: error.status } : {}),
        });
        throw unavailable("The embedding model cannot be reached right now.", { cause: error });
      }
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

const worthRetrying = (error: unknown) =>
  error instanceof Unreachable ||
  (error instanceof Rejected && (error.status === 408 || error.status === 409 || error.status === 429 || error.status >= 500));

/** The vectors in input order; a reply of another shape is the server's failure. */
function vectorsOf(reply: EmbeddingsReply, expected: number): number[][] {
  const data = Array.isArray(reply.data) ? reply.data : [];
  const vectors: number[][] = [];
  for (const [position, item] of data.entries()) {
    const index = typeof item.index === "number" ? item.index : position;
    if (!Array.isArray(item.embedding) || !item.embedding.every((x) => typeof x === "number")) break;
    vectors[index] = item.embedding as number[];
  }
  // Counted index by index: a reply that skips one leaves a hole that array methods would pass over.
  let usable = 0;
  for (let i = 0; i < expected; i++) if (vectors[i] !== undefined) usable += 1;
  if (usable !== expected || vectors.length !== expected) {
    throw new Error(`the embeddings server answered ${usable} usable vectors for ${expected} inputs`);
  }
  return vectors;
}
