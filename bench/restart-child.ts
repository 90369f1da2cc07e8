import { readFile } from "node:fs/promises";
import yaml from "js-yaml";
import { loadConfig } from "../services/memory-core/src/config.js";
import type { Logger } from "../services/memory-core/src/logger.js";
import { startStack } from "../services/memory-core/src/stack.js";
import { timedEmbedder } from "./timed-embedder.js";

/**
 * One start of memory-core over a kept store, for `bench restart` (restart.ts): starts the stack, asks one hybrid
 * query, stops it (saving snapshots when they are on) and reports its timings and the lexical log lines.
 */
export interface RestartChildOptions {
  dataDir: string;
  /** `off` or a directory (CAIRN_INDEX_DIR). */
  indexDir: string;
  hashStubUrl: string;
  query: string;
}

const options = JSON.parse(process.argv[2]!) as RestartChildOptions;
const lexical: Array<Record<string, unknown>> = [];
const log: Logger = {
  info: (message, fields) => void (message.startsWith("lexical") && lexical.push({ message, ...fields })),
  warn: (message, fields) => void (message.startsWith("lexical") && lexical.push({ message, ...fields })),
  error: () => undefined,
};
const started = performance.now();
const timing = await timedEmbedder("hash", { hashStubUrl: options.hashStubUrl });
const tokensFile = `${options.dataDir}/tokens.yaml`;
const token = (yaml.load(await readFile(tokensFile, "utf8")) as { tokens: Array<{ token: string }> }).tokens[0]!.token;
const stack = await startStack({
  config: loadConfig({
    CAIRN_DATA_DIR: options.dataDir,
    CAIRN_PORT: "0",
    CAIRN_TOKENS_FILE: tokensFile,
    CAIRN_INDEX_DIR: options.indexDir,
  }),
  log,
  embedder: timing.embedder,
});
const ready = performance.now();
const response = await fetch(new URL("/v1/memories/query", stack.url), {
  method: "POST",
  headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
  body: JSON.stringify({ query: options.query, mode: "hybrid" }),
});
const body = (await response.json()) as { hits: Array<{ memory: { id: string } }> };
const answered = performance.now();
await stack.stop();
const stopped = performance.now();
await timing.close();
process.send!(
  {
    status: response.status,
    hits: body.hits.map((h) => h.memory.id),
    ready_s: (ready - started) / 1000,
    answered_s: (answered - started) / 1000,
    stop_s: (stopped - answered) / 1000,
    rss_mb: Math.round(process.memoryUsage().rss / 2 ** 20),
    lexical,
  },
  () => process.exit(0),
);
