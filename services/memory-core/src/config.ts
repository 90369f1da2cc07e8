import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";

/** The only module that reads `process.env`: everything else receives a typed `Config`. */

export type EmbeddingsConfig = { kind: "local" } | { kind: "openai"; baseUrl: string; model: string; apiKey: string | undefined };

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  tokensFile: string;
  /** True when the operator named the tokens file; false when it is the generated one under the data dir. */
  tokensFileGiven: boolean;
  /** An external Chroma; undefined means run the embedded one. */
  chromaUrl: URL | undefined;
  embeddings: EmbeddingsConfig;
  /** The bearer token of the stdio transport (`CAIRN_TOKEN`). */
  stdioToken: string | undefined;
  /**
   * `CAIRN_MAINTENANCE`: start even when a workspace's collections carry another embedding model's stamp;
   * such a workspace answers `reembed_required` until `cairn reembed` has moved it to the new model.
   */
  maintenance: boolean;
  /**
   * The memory memory-core must stay under, which it warns of in its log before reaching (memory-watch.ts):
   * `CAIRN_MEMORY_LIMIT_MB`, else its cgroup's limit (a container's `mem_limit`), else none.
   */
  memoryLimit: MemoryLimit | undefined;
  /**
   * Where the lexical indexes' snapshots go (lexical/snapshot.ts), so that a restart loads them instead of
   * reading every record out of Chroma: `CAIRN_INDEX_DIR`, else `<data dir>/lexical`; undefined (`off`): none.
   */
  indexDir: string | undefined;
  /** How the HTTP server treats its connections (http/server.ts). */
  http: HttpServerSettings;
  /**
   * `CAIRN_REVIEW_PER_CALL`: the most memories one `review_matching` call reviews (1 to 1000), so that a call's
   * work and memory stay bounded whatever a filter selects; a caller continues with another call.
   */
  reviewPerCall: number;
}

/**
 * The HTTP server's connection limits. A request must arrive whole in bounded time, so a client that sends its
 * headers or its body slowly (or stops) is answered 408 and disconnected instead of holding a connection; the
 * number of open connections is capped, so such clients cannot exhaust the process's file descriptors.
 */
export interface HttpServerSettings {
  /** `CAIRN_HTTP_HEADERS_TIMEOUT_MS`: time to receive a request's headers. */
  headersTimeoutMs: number;
  /** `CAIRN_HTTP_REQUEST_TIMEOUT_MS`: time to receive a whole request, headers and body (at least the headers' time). */
  requestTimeoutMs: number;
  /**
   * `CAIRN_HTTP_KEEP_ALIVE_TIMEOUT_MS`: how long an idle connection is kept for the client's next request. Above
   * the idle timeouts of the usual reverse proxies and load balancers (60 s), so that the server is never the
   * side that closes a connection such a client may be reusing.
   */
  keepAliveTimeoutMs: number;
  /** `CAIRN_HTTP_MAX_CONNECTIONS`: open connections at most; one more is closed as it is accepted. */
  maxConnections: number;
}

export const HTTP_DEFAULTS: HttpServerSettings = {
  headersTimeoutMs: 20_000,
  requestTimeoutMs: 60_000,
  keepAliveTimeoutMs: 65_000,
  maxConnections: 1024,
};

export interface MemoryLimit {
  bytes: number;
  /** Where it came from: the variable, or the cgroup file that held it. */
  source: string;
}

/** A wrong setting: one line naming the variable, and the service does not start. */
export class ConfigError extends Error {
  override name = "ConfigError";
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
  }
}

type Env = Readonly<Record<string, string | undefined>>;

/** `cgroupRoot`: where the cgroup filesystem is mounted (tests point it elsewhere). */
export function loadConfig(env: Env = process.env, cwd: string = process.cwd(), cgroupRoot = "/sys/fs/cgroup"): Config {
  const dataDir = resolve(cwd, nonEmpty(env, "CAIRN_DATA_DIR") ?? ".cairn");
  const tokensFileSetting = nonEmpty(env, "CAIRN_TOKENS_FILE");
  return {
    port: port(env, "CAIRN_PORT", 8790),
    host: nonEmpty(env, "CAIRN_HOST") ?? "127.0.0.1",
    dataDir,
    tokensFile: tokensFileSetting ? resolve(cwd, tokensFileSetting) : resolve(dataDir, "tokens.yaml"),
    tokensFileGiven: Boolean(tokensFileSetting),
    chromaUrl: httpUrl(env, "CAIRN_CHROMA_URL"),
    embeddings: embeddings(env),
    stdioToken: nonEmpty(env, "CAIRN_TOKEN"),
    maintenance: flag(env, "CAIRN_MAINTENANCE"),
    memoryLimit: memoryLimit(env, cgroupRoot),
    indexDir: indexDir(env, cwd, dataDir),
    http: httpServer(env),
    reviewPerCall: reviewPerCall(env),
  };
}

function httpServer(env: Env): HttpServerSettings {
  const settings: HttpServerSettings = {
    headersTimeoutMs: positive(env, "CAIRN_HTTP_HEADERS_TIMEOUT_MS", HTTP_DEFAULTS.headersTimeoutMs),
    requestTimeoutMs: positive(env, "CAIRN_HTTP_REQUEST_TIMEOUT_MS", HTTP_DEFAULTS.requestTimeoutMs),
    keepAliveTimeoutMs: positive(env, "CAIRN_HTTP_KEEP_ALIVE_TIMEOUT_MS", HTTP_DEFAULTS.keepAliveTimeoutMs),
    maxConnections: positive(env, "CAIRN_HTTP_MAX_CONNECTIONS", HTTP_DEFAULTS.maxConnections),
  };
  if (settings.headersTimeoutMs > settings.requestTimeoutMs) {
    throw new ConfigError(
      "CAIRN_HTTP_HEADERS_TIMEOUT_MS",
      `must not exceed CAIRN_HTTP_REQUEST_TIMEOUT_MS (${settings.requestTimeoutMs}): the headers are part of the request`,
    );
  }
  return settings;
}

/** The longest delay Node's timers take (2^31 - 1 ms, about 24 days). */
const MAX_TIMER_MS = 2_147_483_647;

/** A whole number from 1 to what a timer takes. */
function positive(env: Env, name: string, fallback: number): number {
  const value = nonEmpty(env, name);
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) === 0 || Number(value) > MAX_TIMER_MS) {
    throw new ConfigError(name, `must be a whole number from 1 to ${MAX_TIMER_MS}, not "${value}"`);
  }
  return Number(value);
}

/** The most a review of many may take per call: one collection write and one audit batch of this many. */
const MAX_REVIEW_PER_CALL = 1000;
export const DEFAULT_REVIEW_PER_CALL = 200;

function reviewPerCall(env: Env): number {
  const value = nonEmpty(env, "CAIRN_REVIEW_PER_CALL");
  if (value === undefined) return DEFAULT_REVIEW_PER_CALL;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > MAX_REVIEW_PER_CALL) {
    throw new ConfigError("CAIRN_REVIEW_PER_CALL", `must be a whole number from 1 to ${MAX_REVIEW_PER_CALL}, not "${value}"`);
  }
  return Number(value);
}

function indexDir(env: Env, cwd: string, dataDir: string): string | undefined {
  const value = nonEmpty(env, "CAIRN_INDEX_DIR");
  if (value === undefined) return resolve(dataDir, "lexical");
  return value.toLowerCase() === "off" ? undefined : resolve(cwd, value);
}

const MB = 1024 * 1024;

function memoryLimit(env: Env, cgroupRoot: string): MemoryLimit | undefined {
  const value = nonEmpty(env, "CAIRN_MEMORY_LIMIT_MB");
  if (value !== undefined) {
    if (!/^\d+$/.test(value) || Number(value) === 0) {
      throw new ConfigError("CAIRN_MEMORY_LIMIT_MB", `must be a whole number of megabytes above 0, not "${value}"`);
    }
    return { bytes: Number(value) * MB, source: "CAIRN_MEMORY_LIMIT_MB" };
  }
  // cgroup v2 (`max` when unlimited), then v1 (a number near 2^63 when unlimited).
  for (const file of [join(cgroupRoot, "memory.max"), join(cgroupRoot, "memory", "memory.limit_in_bytes")]) {
    let text: string;
    try {
      text = readFileSync(file, "utf8").trim();
    } catch {
      continue;
    }
    const bytes = /^\d+$/.test(text) ? Number(text) : Number.NaN;
    return bytes > 0 && bytes <= Number.MAX_SAFE_INTEGER ? { bytes, source: file } : undefined;
  }
  return undefined;
}

function embeddings(env: Env): EmbeddingsConfig {
  const kind = nonEmpty(env, "CAIRN_EMBEDDINGS") ?? "local";
  if (kind === "local") return { kind };
  if (kind !== "openai") throw new ConfigError("CAIRN_EMBEDDINGS", `must be local or openai, not "${kind}"`);
  const baseUrl = httpUrl(env, "CAIRN_EMBEDDINGS_BASE_URL");
  if (!baseUrl) throw new ConfigError("CAIRN_EMBEDDINGS_BASE_URL", "is required when CAIRN_EMBEDDINGS=openai");
  const model = nonEmpty(env, "CAIRN_EMBEDDINGS_MODEL");
  if (!model) throw new ConfigError("CAIRN_EMBEDDINGS_MODEL", "is required when CAIRN_EMBEDDINGS=openai");
  return { kind, baseUrl: baseUrl.toString(), model, apiKey: nonEmpty(env, "CAIRN_EMBEDDINGS_API_KEY") };
}

function nonEmpty(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

function flag(env: Env, name: string): boolean {
  const value = nonEmpty(env, name)?.toLowerCase();
  if (value === undefined || value === "0" || value === "false" || value === "no") return false;
  if (value === "1" || value === "true" || value === "yes") return true;
  throw new ConfigError(name, `must be 1 or 0 (true or false), not "${value}"`);
}

function port(env: Env, name: string, fallback: number): number {
  const value = nonEmpty(env, name);
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!/^\d+$/.test(value) || parsed < 0 || parsed > 65535) {
    throw new ConfigError(name, `must be a port number from 0 to 65535, not "${value}"`);
  }
  return parsed;
}

function httpUrl(env: Env, name: string): URL | undefined {
  const value = nonEmpty(env, name);
  if (value === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(name, `must be an http(s) URL, not "${value}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigError(name, `must be an http(s) URL, not "${value}"`);
  }
  return url;
}
