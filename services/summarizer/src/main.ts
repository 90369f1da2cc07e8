import { createLogger, describeStartError, openSummarizerPort } from "@cairn/memory-core";
import { loadStandaloneConfig } from "./config.js";
import { createSummarizer } from "./index.js";

/**
 * `npm run summarizer`: the worker as its own process, against an external Chroma (compose, or the one a
 * running `npm start` serves). It embeds summaries with the same settings as memory-core, and finds the
 * workspaces in the same tokens file.
 */
async function main(): Promise<void> {
  const log = createLogger("summarizer");
  let summarizer;
  try {
    const { core, summarizer: config } = loadStandaloneConfig();
    const { memory } = await openSummarizerPort(core, log);
    summarizer = createSummarizer(config, memory, log);
  } catch (error) {
    process.stderr.write(`cairn summarizer: ${describeStartError(error)}\n`);
    process.exit(1);
  }
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info("stopping", { signal });
    await summarizer.stop();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

void main();
