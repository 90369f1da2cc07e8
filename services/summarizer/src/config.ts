import { ConfigError, loadConfig as loadCoreConfig, type Config as CoreConfig } from "@cairn/memory-core";

/** The only module of the summarizer that reads `process.env`; every other module gets a typed config. */

export interface ChatConfig {
  baseUrl: string;
  model: string;
  apiKey: string | undefined;
  /** One request's limit; a slower answer counts as a failure and is retried. */
  timeoutMs: number;
  /** The model's context window: a session that does not fit is summarized in parts, then combined. */
  contextTokens: number;
  /** Further attempts after a failed or malformed answer, with backoff, before the extractive fallback. */
  retries: number;
  backoffMs: number;
}

export interface SummarizerConfig {
  /** Unset: every summary is extractive. */
  chat: ChatConfig | undefined;
  idleMs: number;
  pollMs: number;
  concurrency: number;
  leaseMs: number;
  /** False: only `summarize_session` summarizes; another process runs the background worker. */
  worker: boolean;
}

/** The standalone worker (`npm run summarizer`) also needs memory-core's settings: Chroma, embeddings, tokens. */
export interface StandaloneConfig {
  core: CoreConfig & { chromaUrl: URL };
  summarizer: SummarizerConfig;
}

type Env = Readonly<Record<string, string | undefined>>;

export function loadSummarizerConfig(env: Env = process.env): SummarizerConfig {
  return {
    chat: chat(env),
    idleMs: integer(env, "CAIRN_SUMMARY_IDLE_MS", 900_000, 0),
    pollMs: integer(env, "CAIRN_SUMMARY_POLL_MS", 30_000, 10),
    concurrency: integer(env, "CAIRN_SUMMARY_CONCURRENCY", 2, 1, 64),
    leaseMs: integer(env, "CAIRN_SUMMARY_LEASE_MS", 120_000, 1_000),
    worker: onOff(env, "CAIRN_SUMMARY_WORKER", true),
  };
}

export function loadStandaloneConfig(env: Env = process.env, cwd: string = process.cwd()): StandaloneConfig {
  const summarizer = loadSummarizerConfig(env);
  const core = loadCoreConfig(env, cwd);
  if (!core.chromaUrl) {
    throw new ConfigError("CAIRN_CHROMA_URL", "is required for the standalone summarizer (npm start runs one in-process instead)");
  }
  return { core: { ...core, chromaUrl: core.chromaUrl }, summarizer };
}

function chat(env: Env): ChatConfig | undefined {
  const baseUrl = nonEmpty(env, "CAIRN_CHAT_BASE_URL");
  const model = nonEmpty(env, "CAIRN_CHAT_MODEL");
  if (!baseUrl && !model) return undefined;
  if (!baseUrl)
    throw new ConfigError("CAIRN_CHAT_BASE_URL", "is required when CAIRN_CHAT_MODEL is set (https://api.openai.com/v1 for OpenAI)");
  if (!model) throw new ConfigError("CAIRN_CHAT_MODEL", "is required when CAIRN_CHAT_BASE_URL is set");
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new ConfigError("CAIRN_CHAT_BASE_URL", `must be an http(s) URL, not "${baseUrl}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigError("CAIRN_CHAT_BASE_URL", `must be an http(s) URL, not "${baseUrl}"`);
  }
  return {
    baseUrl: url.toString(),
    model,
    apiKey: nonEmpty(env, "CAIRN_CHAT_API_KEY"),
    timeoutMs: integer(env, "CAIRN_CHAT_TIMEOUT_MS", 120_000, 100),
    contextTokens: integer(env, "CAIRN_CHAT_CONTEXT_TOKENS", 8_192, 1_024),
    retries: integer(env, "CAIRN_CHAT_RETRIES", 2, 0, 10),
    backoffMs: integer(env, "CAIRN_CHAT_BACKOFF_MS", 1_000, 0),
  };
}

function nonEmpty(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

function integer(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const value = nonEmpty(env, name);
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!/^\d+$/.test(value) || parsed < min || parsed > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `from ${min} to ${max}`;
    throw new ConfigError(name, `must be a whole number ${range}, not "${value}"`);
  }
  return parsed;
}

function onOff(env: Env, name: string, fallback: boolean): boolean {
  const value = nonEmpty(env, name);
  if (value === undefined) return fallback;
  if (value === "on" || value === "true" || value === "1") return true;
  if (value === "off" || value === "false" || value === "0") return false;
  throw new ConfigError(name, `must be on or off, not "${value}"`);
}
