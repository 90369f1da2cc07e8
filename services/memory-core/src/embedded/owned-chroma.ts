import { join } from "node:path";
import { CairnError } from "../errors.js";
import type { Logger } from "../logger.js";
import { EmbeddedChromaError, startEmbeddedChroma, type EmbeddedChroma } from "./chroma-server.js";
import { awaitRunningChroma, DataDirBusyError, lockDataDir, runningChroma } from "./data-dir.js";

/** How long a process that shares a data dir's Chroma waits for the process that is starting it. */
const SHARED_START_WAIT_MS = 90_000;

export interface ChromaOptions {
  /** An external Chroma (`CAIRN_CHROMA_URL`), used as it is: no data dir is taken. */
  chromaUrl: URL | undefined;
  dataDir: string;
  /**
   * Use the Chroma of the process that holds the data dir, running or still starting, rather than refuse the
   * start (a stdio MCP process beside a running `npm start`). Without it, a held data dir is DataDirBusyError.
   */
  shareRunning?: boolean;
  /** Hears of an embedded Chroma that ends without being stopped: every request answers 503 from then on. */
  log: Logger;
}

/** Where this process's Chroma is, and whether this process runs it. */
export interface ClaimedChroma {
  /** True when this process holds the data dir and `start` starts its embedded Chroma. */
  readonly embedded: boolean;
  /** The Chroma's URL; the embedded one is started here (once). */
  start(): Promise<URL>;
  /**
   * What to report of a start that failed with `error`: a Chroma this process started that ended while the store
   * was read is named, with its log (its refused connections came first); any other error as it is.
   */
  explain(error: unknown): Promise<unknown>;
  /** Stops the embedded Chroma and releases the data dir; nothing for a Chroma of another process. */
  stop(): Promise<void>;
}

/**
 * The one start-up of memory-core's Chroma, for every entry point: the external one when configured; else the
 * data dir's embedded Chroma, which this process takes the data dir for at once (before anything is written
 * into it, a generated tokens file included: of two starts at once, the second stops here) and starts on
 * `start()`, after any Chroma left running on it has stopped; or, with `shareRunning`, the Chroma of the
 * process that holds the data dir.
 */
export async function claimChroma(options: ChromaOptions): Promise<ClaimedChroma> {
  if (options.chromaUrl) return otherProcesses(options.chromaUrl);
  if (options.shareRunning) {
    const running = await runningChroma(options.dataDir);
    if (running) return otherProcesses(running);
  }
  const path = join(options.dataDir, "chroma");
  let lock;
  try {
    lock = await lockDataDir(options.dataDir, path);
  } catch (error) {
    // Another process took the data dir first (an `npm start` still starting its Chroma): use its Chroma.
    if (!(options.shareRunning && error instanceof DataDirBusyError)) throw error;
    const url = await awaitRunningChroma(options.dataDir, SHARED_START_WAIT_MS);
    if (!url) throw error;
    return otherProcesses(url);
  }
  const held = lock;
  let chroma: EmbeddedChroma | undefined;
  let starting: Promise<URL> | undefined;
  let released = false;
  const stop = async () => {
    const running = chroma;
    chroma = undefined;
    await running?.stop();
    if (released) return;
    released = true;
    await held.release();
  };
  const startOnce = async (): Promise<URL> => {
    const logFile = join(options.dataDir, "logs", "chroma.log");
    try {
      chroma = await startEmbeddedChroma({
        path,
        logFile,
        onEnded: (how, log) =>
          options.log.error("the embedded chroma stopped; memory-core answers 503 until it is restarted", { how, log_file: log }),
      });
      await held.record({ url: chroma.url, pid: chroma.pid, path });
    } catch (error) {
      await stop();
      throw error;
    }
    return chroma.url;
  };
  return {
    embedded: true,
    start: () => (starting ??= startOnce()),
    async explain(error) {
      // Chroma out of reach while the store was read: perhaps because the embedded one crashed.
      const unreachable = error instanceof CairnError && error.code === "unavailable";
      const ended = unreachable ? await chroma?.endedWithin(2000) : undefined;
      return ended && chroma ? chromaEndedAtStart(ended, chroma.logFile) : error;
    },
    stop,
  };
}

/** A Chroma this process neither started nor stops. */
function otherProcesses(url: URL): ClaimedChroma {
  return { embedded: false, start: () => Promise.resolve(url), explain: (error) => Promise.resolve(error), stop: () => Promise.resolve() };
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
