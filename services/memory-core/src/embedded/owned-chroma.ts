import { join } from "node:path";
import { startEmbeddedChroma, type EmbeddedChroma } from "./chroma-server.js";
import { lockDataDir } from "./data-dir.js";

/** A data dir this process holds (data-dir.ts), with no Chroma left running on it. */
export interface HeldDataDir {
  /** Starts the data dir's embedded Chroma and records it; its stop() releases the data dir too. */
  startChroma(onEnded?: (how: string, logFile: string) => void): Promise<EmbeddedChroma>;
  /** Releases the data dir (when no Chroma was started, or it failed to start). */
  release(): Promise<void>;
}

/** Takes the data dir before anything is written into it: of two starts at once, the second stops here. */
export async function holdDataDir(dataDir: string): Promise<HeldDataDir> {
  const path = join(dataDir, "chroma");
  const lock = await lockDataDir(dataDir, path);
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    await lock.release();
  };
  return {
    release,
    async startChroma(onEnded) {
      let chroma: EmbeddedChroma | undefined;
      try {
        chroma = await startEmbeddedChroma({ path, logFile: join(dataDir, "logs", "chroma.log"), ...(onEnded ? { onEnded } : {}) });
        await lock.record({ url: chroma.url, pid: chroma.pid, path });
      } catch (error) {
        await chroma?.stop();
        throw error;
      }
      const started = chroma;
      return {
        url: started.url,
        pid: started.pid,
        logFile: started.logFile,
        endedWithin: (ms) => started.endedWithin(ms),
        async stop() {
          await started.stop();
          await release();
        },
      };
    },
  };
}

/**
 * The embedded Chroma of a data dir, started only when no live process holds the dir, after any Chroma left
 * running on it has stopped, and recorded as this process's.
 */
export async function startOwnedChroma(dataDir: string, onEnded?: (how: string, logFile: string) => void): Promise<EmbeddedChroma> {
  const held = await holdDataDir(dataDir);
  try {
    return await held.startChroma(onEnded);
  } catch (error) {
    await held.release();
    throw error;
  }
}
