import { join } from "node:path";
import { startEmbeddedChroma, type EmbeddedChroma } from "./chroma-server.js";
import { assertDataDirFree, claimDataDir } from "./data-dir.js";

/** The embedded Chroma of a data dir, started only when no live process owns the dir, and claimed for this one. */
export async function startOwnedChroma(dataDir: string, onEnded?: (how: string, logFile: string) => void): Promise<EmbeddedChroma> {
  await assertDataDirFree(dataDir);
  const chroma = await startEmbeddedChroma({
    path: join(dataDir, "chroma"),
    logFile: join(dataDir, "logs", "chroma.log"),
    ...(onEnded ? { onEnded } : {}),
  });
  let release: () => Promise<void>;
  try {
    release = await claimDataDir(dataDir, chroma.url);
  } catch (error) {
    await chroma.stop();
    throw error;
  }
  return {
    url: chroma.url,
    logFile: chroma.logFile,
    endedWithin: (ms) => chroma.endedWithin(ms),
    async stop() {
      await release();
      await chroma.stop();
    },
  };
}
