import { loadConfig } from "../services/memory-core/src/config.js";
import { createLogger, silentLogger } from "../services/memory-core/src/logger.js";
import { startStack } from "../services/memory-core/src/stack.js";
import { timedEmbedder } from "./timed-embedder.js";

/**
 * The stack measured by `bench memory-core`, in a process of its own as in a deployment: the client's requests,
 * its garbage and the hashing stub stay out of the server's event loop and heap. The parent drives it over IPC
 * (see bench-server.ts): it reports the embedding time spent since it was last asked, or what embedding a text
 * takes with nothing else running, so figures can leave it out.
 */
export interface ServerOptions {
  dataDir: string;
  tokensFile: string;
  embedder: string;
  hashStubUrl: string | undefined;
}

export type Request = { id: number } & (
  { type: "embed"; texts: string[] } | { type: "time-embedding"; text: string } | { type: "drain-embed-ms" } | { type: "stop" }
);
export type Reply = { id: number; vectors?: number[][]; ms?: number; error?: string };
export interface Ready {
  type: "ready";
  url: string;
  chromaUrl: string;
  model: string;
}

const options = JSON.parse(process.argv[2]!) as ServerOptions;
const timing = await timedEmbedder(options.embedder, options.hashStubUrl ? { hashStubUrl: options.hashStubUrl } : {});
const stack = await startStack({
  config: loadConfig({ CAIRN_DATA_DIR: options.dataDir, CAIRN_PORT: "0", CAIRN_TOKENS_FILE: options.tokensFile }),
  // Silent, so logging stays out of the figures; CAIRN_BENCH_LOG=1 shows the server's log on stderr.
  log: process.env.CAIRN_BENCH_LOG === "1" ? createLogger("memory-core") : silentLogger,
  embedder: timing.embedder,
});
let drained = 0;
const handle = async (request: Request) => {
  const reply = (body: Omit<Reply, "id">) => process.send!({ id: request.id, ...body });
  try {
    if (request.type === "embed") reply({ vectors: await timing.inner.embed(request.texts) });
    if (request.type === "time-embedding") {
      const started = performance.now();
      await timing.inner.embed([request.text]);
      reply({ ms: performance.now() - started });
    }
    if (request.type === "drain-embed-ms") {
      reply({ ms: timing.times.slice(drained).reduce((a, b) => a + b, 0) });
      drained = timing.times.length;
    }
    if (request.type === "stop") {
      await stack.stop();
      await timing.close();
      process.send!({ id: request.id }, () => process.exit(0));
    }
  } catch (error) {
    reply({ error: String(error) });
  }
};
// A reply that cannot be sent (the bench went away) is said on stderr rather than left to reject unheard.
process.on("message", (request: Request) => {
  handle(request).catch((error) => process.stderr.write(`memory-core-server: ${String(error)}\n`));
});
process.send!({ type: "ready", url: stack.url.href, chromaUrl: stack.chromaUrl.href, model: timing.embedder.model } satisfies Ready);
