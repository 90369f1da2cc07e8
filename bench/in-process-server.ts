import type { AddressInfo } from "node:net";
import type { TokenRegistry } from "../services/memory-core/src/auth/tokens.js";
import type { Embedder } from "../services/memory-core/src/embeddings/embedder.js";
import { HTTP_DEFAULTS } from "../services/memory-core/src/config.js";
import { createApp } from "../services/memory-core/src/http/app.js";
import { closeServer, createHttpServer, listen } from "../services/memory-core/src/http/server.js";
import { silentLogger } from "../services/memory-core/src/logger.js";
import { createRuntime } from "../services/memory-core/src/runtime.js";

export interface InProcessServer {
  url: URL;
  close(): Promise<void>;
}

/**
 * memory-core's runtime and HTTP app in this process, over a Chroma the bench started, on a port of its own: for
 * benches that count what a write asks of Chroma through a proxy in front of it (the out-of-process server of
 * bench-server.ts would hide the proxy's calls from this process).
 */
export async function startInProcessServer(options: {
  chromaUrl: URL;
  embedder: Embedder;
  tokens: TokenRegistry;
}): Promise<InProcessServer> {
  const runtime = await createRuntime({
    chromaUrl: options.chromaUrl,
    embeddings: { kind: "local" },
    tokens: options.tokens,
    log: silentLogger,
    embedder: options.embedder,
    processMetrics: false,
  });
  const app = createApp({
    executor: runtime.executor,
    tokens: options.tokens,
    metrics: runtime.metrics,
    readiness: () => runtime.readiness(),
    log: silentLogger,
    host: "127.0.0.1",
  });
  const server = await listen(createHttpServer(app, HTTP_DEFAULTS, silentLogger), 0, "127.0.0.1");
  return {
    url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    async close() {
      await closeServer(server);
      await runtime.close();
    },
  };
}
