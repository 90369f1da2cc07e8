import { join } from "node:path";
import { startEmbeddedChroma, type EmbeddedChroma } from "./chroma-server.js";
import { lockDataDir } from "./data-dir.js";

/**
 * The embedded Chroma of a data dir, started only when no live process holds the dir, after any Chroma left
 * running on it has stopped, and recorded as this process's.
 */
export async function startOwnedChroma(dataDir: string, onEnded?: (how: string, logFile: string) => void): Promise<EmbeddedChroma> {
  const path = join(dataDir, "chroma");
  const lock = await lockDataDir(dataDir, path);
  let chroma: EmbeddedChroma | undefined;
  try {
    chroma = await startEmbeddedChroma({ path, logFile: join(dataDir, "logs", "chroma.log"), ...(onEnded ? { onEnded } : {}) });
    await lock.record({ url: chroma.url, pid: chroma.pid, path });
  } catch (error) {
    await chroma?.stop();
    await lock.release();
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
      await lock.release();
    },
  };
}
