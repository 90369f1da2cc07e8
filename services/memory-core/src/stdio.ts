import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { loadTokenRegistry } from "./auth/tokens.js";
import { ConfigError, loadConfig } from "./config.js";
import { awaitRunningChroma, DataDirBusyError, runningChroma } from "./embedded/data-dir.js";
import { startOwnedChroma } from "./embedded/owned-chroma.js";
import { createLogger } from "./logger.js";
import { buildServer } from "./mcp/server.js";
import { createRuntime } from "./runtime.js";
import { describeStartError } from "./start-errors.js";

/** How long a stdio process waits for the Chroma of a process that is starting on the same data dir. */
const CHROMA_START_WAIT_MS = 90_000;

/**
 * MCP over stdio, for clients that start their servers as child processes. The caller is `CAIRN_TOKEN`.
 * Chroma: `CAIRN_CHROMA_URL`, else the one a running `npm start` owns on the same data dir, else its own.
 */
async function main(): Promise<void> {
  const log = createLogger("memory-core-stdio");
  const cleanups: Array<() => Promise<void>> = [];
  try {
    const config = loadConfig();
    if (!config.stdioToken) throw new ConfigError("CAIRN_TOKEN", "is required for the stdio transport");
    const tokens = await loadTokenRegistry(config.tokensFile);
    const principal = tokens.resolve(config.stdioToken);
    if (!principal) throw new ConfigError("CAIRN_TOKEN", "is not a token of the tokens file");

    let chromaUrl = config.chromaUrl ?? (await runningChroma(config.dataDir));
    if (!chromaUrl) {
      try {
        const chroma = await startOwnedChroma(config.dataDir);
        cleanups.push(() => chroma.stop());
        chromaUrl = chroma.url;
      } catch (error) {
        // Another process took the data dir first (an `npm start` still starting its Chroma): use its Chroma.
        if (!(error instanceof DataDirBusyError)) throw error;
        chromaUrl = await awaitRunningChroma(config.dataDir, CHROMA_START_WAIT_MS);
        if (!chromaUrl) throw error;
      }
    }
    const runtime = await createRuntime({
      chromaUrl,
      embeddings: config.embeddings,
      tokens,
      log,
      processMetrics: false,
      // Warned of on stderr, like every log line of this transport (stdout carries the protocol).
      ...(config.memoryLimit ? { memoryLimit: config.memoryLimit } : {}),
    });
    cleanups.push(() => runtime.close());
    const server = buildServer(runtime.executor, principal, "mcp-stdio", log);
    const transport = new StdioServerTransport();
    // Closing the server closes the transport, whose onclose calls this again, synchronously (as do stdin's
    // end and the signals): the flag is set before anything is closed, so only the first call shuts down.
    let shuttingDown = false;
    const shutdown = async () => {
      if (shuttingDown) return;
      shuttingDown = true;
      await server.close().catch(() => undefined);
      for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
      process.exit(0);
    };
    transport.onclose = () => void shutdown();
    process.on("SIGINT", () => void shutdown());
    process.on("SIGTERM", () => void shutdown());
    process.on("SIGHUP", () => void shutdown());
    process.stdin.on("end", () => void shutdown());
    await server.connect(transport);
  } catch (error) {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    process.stderr.write(`cairn stdio: ${describeStartError(error)}\n`);
    process.exit(1);
  }
}

void main();
