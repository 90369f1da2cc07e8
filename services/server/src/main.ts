import { createLogger, describeStartError, loadConfig, startBanner, startStack, stopOnSignals } from "@cairn/memory-core";
import { buildConsole } from "@cairn/console";
import { loadSummarizerConfig, summarizerFactory } from "@cairn/summarizer";

async function main(): Promise<void> {
  const log = createLogger("memory-core");
  let stack;
  try {
    // The composition root: memory-core and, in the same process, the summarizer, which memory-core is given
    // as a factory (so memory-core never depends on the summarizer package, which depends on it).
    const summarizer = summarizerFactory(loadSummarizerConfig());
    stack = await startStack({ config: loadConfig(), log, summarizer, console: await buildConsole() });
  } catch (error) {
    process.stderr.write(`cairn: ${describeStartError(error)}\n`);
    process.exit(1);
  }
  process.stdout.write(startBanner(stack));
  // A closed terminal (SIGHUP) stops it like Ctrl-C, so that the embedded Chroma (a process group of its own) goes too.
  stopOnSignals(() => stack.stop(), { log });
}

void main();
