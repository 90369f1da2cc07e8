import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * One embedded Chroma per data dir: a second process on the same files would corrupt them. The owner
 * records its Chroma's address so that a stdio MCP process can use the running one instead of starting another.
 */
interface Owner {
  pid: number;
  chroma_url: string;
}

export class DataDirBusyError extends Error {
  override name = "DataDirBusyError";
}

const ownerFile = (dataDir: string) => join(dataDir, "embedded.json");

export async function runningChroma(dataDir: string): Promise<URL | undefined> {
  const owner = await readOwner(dataDir);
  return owner && isAlive(owner.pid) ? new URL(owner.chroma_url) : undefined;
}

/** Claims the data dir for this process (once: a second stack in the same process is refused too); a claim left by a dead process is taken over. */
export async function claimDataDir(dataDir: string, chromaUrl: URL): Promise<() => Promise<void>> {
  const owner = await readOwner(dataDir);
  if (owner && isAlive(owner.pid)) {
    throw new DataDirBusyError(`CAIRN_DATA_DIR: another Cairn process (pid ${owner.pid}) is running on this data dir`);
  }
  const body: Owner = { pid: process.pid, chroma_url: chromaUrl.toString() };
  await writeFile(ownerFile(dataDir), `${JSON.stringify(body)}\n`, { mode: 0o600 });
  return async () => {
    const current = await readOwner(dataDir);
    if (current?.pid === process.pid) await rm(ownerFile(dataDir), { force: true });
  };
}

/** Fails early, before Chroma is started, when a live process owns the data dir. */
export async function assertDataDirFree(dataDir: string): Promise<void> {
  const owner = await readOwner(dataDir);
  if (owner && isAlive(owner.pid)) {
    throw new DataDirBusyError(`CAIRN_DATA_DIR: another Cairn process (pid ${owner.pid}) is running on this data dir`);
  }
}

async function readOwner(dataDir: string): Promise<Owner | undefined> {
  try {
    const parsed = JSON.parse(await readFile(ownerFile(dataDir), "utf8")) as Partial<Owner>;
    return typeof parsed.pid === "number" && typeof parsed.chroma_url === "string" ? (parsed as Owner) : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
