import { existsSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { watchTokensFile } from "./auth/tokens-reload.js";
import { parseTokensFile, readTokensFile, TokenRegistry, writeGeneratedTokensFile, type GeneratedToken } from "./auth/tokens.js";
import { ConfigError, type Config } from "./config.js";
import { claimChroma, type ClaimedChroma } from "./embedded/owned-chroma.js";
import type { Embedder } from "./embeddings/embedder.js";
import { createApp } from "./http/app.js";
import { closeServer, createHttpServer, listen } from "./http/server.js";
import type { ConsoleFiles } from "./http/console-route.js";
import type { Logger } from "./logger.js";
import { createRuntime, type Runtime, type SummarizerFactory } from "./runtime.js";
import { Cleanups } from "./shutdown.js";

export interface Stack {
  url: URL;
  mcpUrl: URL;
  chromaUrl: URL;
  embeddedChroma: boolean;
  tokensFile: string;
  /** Tokens written by this start (first start of the embedded default); undefined otherwise. */
  generatedTokens: GeneratedToken[] | undefined;
  runtime: Runtime;
  /** Where people sign in, when this process serves the console. */
  consoleUrl: URL | undefined;
  stop(): Promise<void>;
}

export interface StackOptions {
  config: Config;
  log: Logger;
  embedder?: Embedder;
  /** Runs a summarizer in this process (npm start); without one, `summarize_session` answers 503. */
  summarizer?: SummarizerFactory;
  /** The console's files, served at /console (npm start builds them); without them there is no console. */
  console?: ConsoleFiles;
}

/**
 * Starts memory-core: the embedded Chroma unless an external one is configured, the runtime and the HTTP
 * server. What started is stopped again if a later step fails.
 */
export async function startStack({ config, log, embedder, summarizer, console: consoleFiles }: StackOptions): Promise<Stack> {
  const cleanups = new Cleanups();
  let generatedTokens: GeneratedToken[] | undefined;
  let chroma: ClaimedChroma | undefined;
  try {
    await mkdir(config.dataDir, { recursive: true });
    // Embedded: the data dir is taken before anything is written into it (the generated tokens file included).
    const claimed = await claimChroma({ chromaUrl: config.chromaUrl, dataDir: config.dataDir, log });
    chroma = claimed;
    cleanups.push(() => claimed.stop());
    if (!existsSync(config.tokensFile)) {
      if (config.tokensFileGiven) throw new ConfigError("CAIRN_TOKENS_FILE", "names a file that does not exist");
      generatedTokens = await writeGeneratedTokensFile(config.tokensFile);
    }
    const tokensText = await readTokensFile(config.tokensFile);
    const tokens = new TokenRegistry(parseTokensFile(tokensText));

    const chromaUrl = await claimed.start();

    const runtime = await createRuntime({
      chromaUrl,
      embeddings: config.embeddings,
      tokens,
      log,
      maintenance: config.maintenance,
      ...(config.memoryLimit ? { memoryLimit: config.memoryLimit } : {}),
      ...(config.indexDir ? { indexDir: config.indexDir } : {}),
      reviewPerCall: config.reviewPerCall,
      ...(embedder ? { embedder } : {}),
      ...(summarizer ? { summarizer } : {}),
    });
    cleanups.push(() => runtime.close());
    if (runtime.summarizer) {
      const running = runtime.summarizer;
      cleanups.push(() => running.stop());
    }
    const app = createApp({
      executor: runtime.executor,
      tokens,
      metrics: runtime.metrics,
      readiness: () => runtime.readiness(),
      log,
      host: config.host,
      ...(consoleFiles ? { console: consoleFiles } : {}),
    });
    const server = await listen(createHttpServer(app, config.http, log), config.port, config.host);
    cleanups.push(() => closeServer(server));
    const reload = watchTokensFile({
      file: config.tokensFile,
      registry: tokens,
      log,
      openWorkspace: (workspace) => runtime.openWorkspace(workspace),
      inForce: tokensText,
    });
    cleanups.push(() => Promise.resolve(reload.stop()));
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : config.port;
    const url = new URL(`http://${config.host.includes(":") ? `[${config.host}]` : config.host}:${port}`);
    return {
      url,
      mcpUrl: new URL("/mcp", url),
      consoleUrl: consoleFiles ? new URL("/console", url) : undefined,
      chromaUrl,
      embeddedChroma: claimed.embedded,
      tokensFile: config.tokensFile,
      generatedTokens,
      runtime,
      stop: () => cleanups.run(),
    };
  } catch (error) {
    const explained = chroma ? await chroma.explain(error) : error;
    await cleanups.run();
    // Tokens this start wrote were never printed: the next start writes and prints its own.
    if (generatedTokens) await rm(config.tokensFile, { force: true });
    throw explained;
  }
}
