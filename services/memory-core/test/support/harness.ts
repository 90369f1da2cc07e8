import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { ChromaClient } from "chromadb";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import yaml from "js-yaml";
import { afterAll, beforeAll, inject } from "vitest";
import { newToken, parseTokensFile, TokenRegistry } from "../../src/auth/tokens.js";
import type { Role } from "../../src/auth/principal.js";
import type { Embedder } from "../../src/embeddings/embedder.js";
import type { RetrievalTuning } from "../../src/retrieval/retrieval-tuning.js";
import { createEmbedder } from "../../src/embeddings/create.js";
import { HTTP_DEFAULTS, type HttpServerSettings } from "../../src/config.js";
import { createApp } from "../../src/http/app.js";
import { closeServer, createHttpServer, listen } from "../../src/http/server.js";
import type { ConsoleFiles } from "../../src/http/console-route.js";
import { silentLogger, type Logger } from "../../src/logger.js";
import { createRuntime, type Runtime, type SummarizerFactory } from "../../src/runtime.js";

export const chromaUrl = () => new URL(inject("chromaUrl"));

/** Chroma's own client for a workspace's database: to see or damage records below memory-core. */
export const chromaClient = (workspace: string) =>
  new ChromaClient({
    host: chromaUrl().hostname,
    port: Number(chromaUrl().port),
    ssl: false,
    tenant: "default_tenant",
    database: workspace,
  });

let embedder: Promise<Embedder> | undefined;
/** The real local embedder, loaded once per test worker. */
export const sharedEmbedder = () => (embedder ??= createEmbedder({ kind: "local" }, silentLogger));

/** A workspace name no other test uses: each test gets its own Chroma database. */
export const uniqueWorkspace = (label = "ws") => `${label}-${randomBytes(5).toString("hex")}`;

export interface TestToken {
  token: string;
  workspace: string;
  agent: string;
  role: Role;
}

export const makeToken = (workspace: string, agent: string, role: Role = "agent"): TestToken => ({
  token: newToken(),
  workspace,
  agent,
  role,
});

export interface TestCairn {
  url: URL;
  runtime: Runtime;
  close(): Promise<void>;
}

/** A runtime log that keeps the messages of its warnings and drops the rest. */
export function warningsLog(): { log: Logger; warnings: string[] } {
  const warnings: string[] = [];
  return { log: { info() {}, warn: (message) => warnings.push(message), error() {} }, warnings };
}

/** memory-core in this process over real HTTP and the shared real Chroma, with the given tokens. */
export async function startCairn(
  tokens: TestToken[],
  options: {
    chroma?: URL;
    embedder?: Embedder;
    maintenance?: boolean;
    summarizer?: SummarizerFactory;
    log?: Logger;
    console?: ConsoleFiles;
    tuning?: RetrievalTuning;
    /** Where the lexical indexes' snapshots go (Config.indexDir); none by default. */
    indexDir?: string;
    /** The runtime's own log (`log` is the HTTP app's); silent by default. */
    runtimeLog?: Logger;
    /** The HTTP server's connection limits over the defaults (config.ts). */
    http?: Partial<HttpServerSettings>;
    /** The most memories one review_matching call reviews (Config.reviewPerCall, `CAIRN_REVIEW_PER_CALL`). */
    reviewPerCall?: number;
  } = {},
): Promise<TestCairn> {
  // Through the real tokens-file parser, as an operator's file would go.
  const registry = new TokenRegistry(parseTokensFile(yaml.dump({ tokens })));
  const runtime = await createRuntime({
    chromaUrl: options.chroma ?? chromaUrl(),
    embeddings: { kind: "local" },
    tokens: registry,
    log: options.runtimeLog ?? silentLogger,
    embedder: options.embedder ?? (await sharedEmbedder()),
    processMetrics: false,
    maintenance: options.maintenance ?? false,
    ...(options.summarizer ? { summarizer: options.summarizer } : {}),
    ...(options.tuning ? { tuning: options.tuning } : {}),
    ...(options.indexDir ? { indexDir: options.indexDir } : {}),
    ...(options.reviewPerCall ? { reviewPerCall: options.reviewPerCall } : {}),
  });
  const app = createApp({
    executor: runtime.executor,
    tokens: registry,
    metrics: runtime.metrics,
    readiness: () => runtime.readiness(),
    log: options.log ?? silentLogger,
    host: "127.0.0.1",
    ...(options.console ? { console: options.console } : {}),
  });
  const server = await listen(createHttpServer(app, { ...HTTP_DEFAULTS, ...options.http }, options.log ?? silentLogger), 0, "127.0.0.1");
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}`),
    runtime,
    close: async () => {
      await closeServer(server);
      await runtime.summarizer?.stop();
      await runtime.close();
    },
  };
}

/** A store an earlier start left: memory-core started, `count` turns of `session` written with `token`, closed. */
export async function storeTurnsAndStop(
  token: TestToken,
  session: string,
  count: number,
  options: Parameters<typeof startCairn>[1] = {},
): Promise<void> {
  const earlier = await startCairn([token], options);
  try {
    for (let n = 1; n <= count; n++) {
      const res = await http(earlier.url, "POST", "/v1/memories", { token: token.token, body: turn(session, n) });
      if (res.status !== 201) throw new Error(`storing turn ${n} answered ${res.status}`);
    }
  } finally {
    await earlier.close();
  }
}

/** memory-core for one test file: started before its tests, closed after them. */
export function useCairn(tokens: TestToken[]): Pick<TestCairn, "url" | "runtime"> {
  let cairn: TestCairn | undefined;
  beforeAll(async () => {
    cairn = await startCairn(tokens);
  });
  afterAll(() => cairn?.close());
  const started = () => {
    if (!cairn) throw new Error("useCairn: memory-core is not started yet (use it inside tests or hooks)");
    return cairn;
  };
  return {
    get url() {
      return started().url;
    },
    get runtime() {
      return started().runtime;
    },
  };
}

export interface HttpResult<T = any> {
  status: number;
  body: T;
  headers: Headers;
  text: string;
}

/** A real HTTP request; `body` objects are sent as JSON, strings as they are. */
export async function http<T = any>(
  base: URL,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<HttpResult<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const response = await fetch(new URL(path, base), { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await response.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, body: parsed as T, headers: response.headers, text };
}

/** A real MCP client over Streamable HTTP. */
export async function mcpClient(base: URL, token: string): Promise<Client> {
  const client = new Client({ name: "cairn-tests", version: "0.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL("/mcp", base), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

export const turn = (session_id: string, n: number, extra: Record<string, unknown> = {}) => ({
  session_id,
  prompt: `Task ${n} in ${session_id}`,
  thought: `Reasoning for step ${n}: weighed the options and chose the simplest.`,
  response: `Outcome of step ${n}; next step ${n + 1}.`,
  ...extra,
});
