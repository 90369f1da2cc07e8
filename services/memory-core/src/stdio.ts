import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { loadTokenRegistry } from "./auth/tokens.js";
import { ConfigError, loadConfig } from "./config.js";
import { claimChroma, type ClaimedChroma } from "./embedded/owned-chroma.js";
import { createLogger } from "./logger.js";
import { buildServer } from "./mcp/server.js";
import { createRuntime } from "./runtime.js";
import { Cleanups, stopOnSignals } from "./shutdown.js";
import { describeStartError } from "./start-errors.js";

/**
 * MCP over stdio, for clients that start their servers as child processes. The caller is `CAIRN_TOKEN`.
 * Chroma: `CAIRN_CHROMA_URL`, else the one a running `npm start` owns on the same data dir, else its own.
 */
async function main(): Promise<void> {
  const log = createLogger("memory-core-stdio");
  const cleanups = new Cleanups();
  let chroma: ClaimedChroma | undefined;
  try {
    const config = loadConfig();
    if (!config.stdioToken) throw new ConfigError("CAIRN_TOKEN", "is required for the stdio transport");
    const tokens = await loadTokenRegistry(config.tokensFile);
    const principal = tokens.resolve(config.stdioToken);
    if (!principal) throw new ConfigError("CAIRN_TOKEN", "is not a token of the tokens file");

    const claimed = await claimChroma({ chromaUrl: config.chromaUrl, dataDir: config.dataDir, shareRunning: true, log });
    chroma = claimed;
    cleanups.push(() => claimed.stop());
    const runtime = await createRuntime({
      chromaUrl: await claimed.start(),
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
    // Closing the server closes the transport, whose onclose asks to stop again: the stop runs once.
    cleanups.push(() => server.close());
    const stop = stopOnSignals(() => cleanups.run(), { log });
    transport.onclose = () => void stop("transport closed");
    process.stdin.on("end", () => void stop("stdin ended"));
    await server.connect(transport);
  } catch (error) {
    const explained = chroma ? await chroma.explain(error) : error;
    await cleanups.run();
    process.stderr.write(`cairn stdio: ${describeStartError(explained)}\n`);
    process.exit(1);
  }
}

void main();
