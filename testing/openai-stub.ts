import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * The one test double the project allows: a small OpenAI-compatible server, since no model can run here.
 * `/v1/embeddings` answers deterministic unit vectors derived from each input's words (a hashing
 * bag-of-words: crude, fast, and enough for nearest-neighbour order to mean something). The benchmarks use
 * it too, where loading 100k turns through the local model would take hours on two cores.
 */
export interface OpenAIStub {
  baseUrl: string;
  requests: Array<{ path: string; body: any }>;
  close(): Promise<void>;
}

export async function startOpenAIStub(options: { dimension: number }): Promise<OpenAIStub> {
  const requests: OpenAIStub["requests"] = [];
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk) => (raw += chunk));
    req.on("end", () => {
      const body = raw ? JSON.parse(raw) : undefined;
      requests.push({ path: req.url ?? "", body });
      if (req.method === "POST" && req.url === "/v1/embeddings") {
        const inputs: string[] = Array.isArray(body.input) ? body.input : [body.input];
        res.setHeader("content-type", "application/json");
        res.end(
          JSON.stringify({
            object: "list",
            model: body.model,
            data: inputs.map((text, index) => ({ object: "embedding", index, embedding: wordVector(text, options.dimension) })),
            usage: { prompt_tokens: 0, total_tokens: 0 },
          }),
        );
        return;
      }
      res.statusCode = 404;
      res.end(JSON.stringify({ error: { message: "not found" } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A bag-of-words vector: texts sharing words point the same way, so nearest-neighbour order is meaningful. */
export function wordVector(text: string, dimension: number): number[] {
  const vector = new Array<number>(dimension).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    const bucket = createHash("sha256").update(word).digest().readUInt32BE(0) % dimension;
    vector[bucket]! += 1;
  }
  const norm = Math.hypot(...vector) || 1;
  return vector.map((v) => v / norm);
}
