import { createLogger, describeStartError, openSummarizerPort, stopOnSignals } from "@cairn/memory-core";
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
  stopOnSignals(() => summarizer.stop(), { log });
}

void main();
