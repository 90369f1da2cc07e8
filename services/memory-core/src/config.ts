import { resolve } from "node:path";

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

export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): Config {
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
  };
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
