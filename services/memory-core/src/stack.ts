import { existsSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { watchTokensFile } from "./auth/tokens-reload.js";
import { parseTokensFile, readTokensFile, TokenRegistry, writeGeneratedTokensFile, type GeneratedToken } from "./auth/tokens.js";
import { ConfigError, type Config } from "./config.js";
import { CairnError } from "./errors.js";
import { EmbeddedChromaError, type EmbeddedChroma } from "./embedded/chroma-server.js";
import { holdDataDir } from "./embedded/owned-chroma.js";
import type { Embedder } from "./embeddings/embedder.js";
import { createApp } from "./http/app.js";
import { closeServer, createHttpServer, listen } from "./http/server.js";
import type { ConsoleFiles } from "./http/console-route.js";
import type { Logger } from "./logger.js";
import { createRuntime, type Runtime, type SummarizerFactory } from "./runtime.js";

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
  const cleanups: Array<() => Promise<void>> = [];
  let embedded: EmbeddedChroma | undefined;
  const stopAll = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    cleanups.length = 0;
  };
  let generatedTokens: GeneratedToken[] | undefined;
  try {
    await mkdir(config.dataDir, { recursive: true });
    // Embedded: the data dir is taken before anything is written into it (the generated tokens file included).
    const held = config.chromaUrl ? undefined : await holdDataDir(config.dataDir);
    if (held) cleanups.push(() => held.release());
    if (!existsSync(config.tokensFile)) {
      if (config.tokensFileGiven) throw new ConfigError("CAIRN_TOKENS_FILE", "names a file that does not exist");
      generatedTokens = await writeGeneratedTokensFile(config.tokensFile);
    }
    const tokensText = await readTokensFile(config.tokensFile);
    const tokens = new TokenRegistry(parseTokensFile(tokensText));

    let chromaUrl = config.chromaUrl;
    if (!chromaUrl) {
      // Nothing restarts it: every request answers 503 from then on, so the operator must hear why at once.
      const chroma = await held!.startChroma((how, logFile) =>
        log.error("the embedded chroma stopped; memory-core answers 503 until it is restarted", { how, log_file: logFile }),
      );
      embedded = chroma;
      cleanups.push(() => chroma.stop());
      chromaUrl = chroma.url;
    }

    const runtime = await createRuntime({
      chromaUrl,
      embeddings: config.embeddings,
      tokens,
      log,
      maintenance: config.maintenance,
      ...(config.memoryLimit ? { memoryLimit: config.memoryLimit } : {}),
      ...(config.indexDir ? { indexDir: config.indexDir } : {}),
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
      embeddedChroma: !config.chromaUrl,
      tokensFile: config.tokensFile,
      generatedTokens,
      runtime,
      stop: stopAll,
    };
  } catch (error) {
    // Chroma out of reach while the store was read: perhaps because the embedded one crashed.
    const unreachable = error instanceof CairnError && error.code === "unavailable";
    const ended = unreachable ? await embedded?.endedWithin(2000) : undefined;
    await stopAll();
    // Tokens this start wrote were never printed: the next start writes and prints its own.
    if (generatedTokens) await rm(config.tokensFile, { force: true });
    if (ended && embedded) throw chromaEndedAtStart(ended, embedded.logFile);
    throw error;
  }
}

/**
 * The embedded Chroma ended while memory-core read the store at start. Chroma 1.0 crashes (SIGSEGV) rather than
 * answer an error when a collection's saved vector index is damaged, as a hard kill while it saves one leaves it.
 */
function chromaEndedAtStart(how: string, logFile: string): EmbeddedChromaError {
  const remedy =
    how === "signal SIGSEGV"
      ? " A crash as Chroma loads a collection usually means a vector index damaged by a hard kill (SIGKILL, power loss) while Chroma saved it:" +
        " move the data dir aside, start on an empty one and restore your last backup (cairn restore; docs/operations-cli.md)."
      : "";
  return new EmbeddedChromaError(
    `the embedded Chroma stopped (${how}) while memory-core read the store at start; see its log: ${logFile}.${remedy}`,
  );
}
