import { createHash } from "node:crypto";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { mkdir, readFile, realpath, rename, rm, writeFile } from "node:fs/promises";
import { connect, createServer, type Server } from "node:net";
import { isAbsolute, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * One embedded Chroma per data dir: a second process on the same files would corrupt them.
 *
 * - A lock: on Linux an abstract Unix socket named after the data dir, which one process at a time can listen on
 *   and the kernel releases when that process ends, however it ends; of two starts at once, one gets it.
 *   Elsewhere, the owner file below, whose live pid refuses a start.
 * - The owner file, `embedded.json`: the owner's pid, its Chroma's address (so that a stdio MCP process can use
 *   the running one instead of starting another), its Chroma's pid and data path.
 * - With the lock held, a Chroma still running on the data path (its owner was killed before it could stop it,
 *   or it is still stopping) is found by its command line and stopped before a new one starts.
 */
interface Owner {
  pid: number;
  chroma_url: string;
  chroma_pid?: number;
  chroma_path?: string;
}

export class DataDirBusyError extends Error {
  override name = "DataDirBusyError";
}

const ownerFile = (dataDir: string) => join(dataDir, "embedded.json");
const CHROMA_STOP_MS = 10_000;

/** The Chroma of the process that owns the data dir, if one does and it still holds the lock. */
export async function runningChroma(dataDir: string): Promise<URL | undefined> {
  const owner = await readOwner(dataDir);
  if (!owner || !isAlive(owner.pid)) return undefined;
  if (process.platform === "linux" && !(await answers(await lockName(dataDir)))) return undefined;
  return new URL(owner.chroma_url);
}

/**
 * The Chroma of the process that holds the data dir, waiting (up to `ms`) while that process is still starting
 * it; undefined when nobody holds the dir, or its holder has no Chroma to share by then.
 */
export async function awaitRunningChroma(dataDir: string, ms: number): Promise<URL | undefined> {
  const deadline = Date.now() + ms;
  for (;;) {
    const url = await runningChroma(dataDir);
    if (url || Date.now() > deadline) return url;
    if (process.platform === "linux" && !(await answers(await lockName(dataDir)))) return undefined;
    await sleep(200);
  }
}

export interface DataDirLock {
  /** Records this process and its Chroma as the data dir's owner. */
  record(chroma: { url: URL; pid: number | undefined; path: string }): Promise<void>;
  /** Removes the record (if still this process's) and releases the lock. */
  release(): Promise<void>;
}

/**
 * Takes the data dir for this process (once: a second stack in the same process is refused too) and stops a
 * Chroma left running on `chromaPath`. Throws DataDirBusyError when a live process holds it.
 */
export async function lockDataDir(dataDir: string, chromaPath: string): Promise<DataDirLock> {
  const busy = async () => {
    const owner = await readOwner(dataDir);
    const who = owner && isAlive(owner.pid) ? ` (pid ${owner.pid})` : "";
    return new DataDirBusyError(`CAIRN_DATA_DIR: another Cairn process${who} is running on this data dir`);
  };
  await mkdir(dataDir, { recursive: true });
  let server: Server | undefined;
  if (process.platform === "linux") {
    server = await listenOnce(await lockName(dataDir));
    if (!server) throw await busy();
  } else {
    const owner = await readOwner(dataDir);
    if (owner && isAlive(owner.pid)) throw await busy();
  }
  try {
    await stopLeftChromas(chromaPath);
  } catch (error) {
    server?.close();
    throw error;
  }
  return {
    async record(chroma) {
      const body: Owner = { pid: process.pid, chroma_url: chroma.url.toString(), chroma_path: resolve(chroma.path) };
      if (chroma.pid !== undefined) body.chroma_pid = chroma.pid;
      // Written whole, then renamed over: a reader never sees half a file.
      const temporary = `${ownerFile(dataDir)}.${process.pid}`;
      await writeFile(temporary, `${JSON.stringify(body)}\n`, { mode: 0o600 });
      await rename(temporary, ownerFile(dataDir));
    },
    async release() {
      const current = await readOwner(dataDir);
      if (current?.pid === process.pid) await rm(ownerFile(dataDir), { force: true });
      await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
    },
  };
}

/** The lock's abstract socket: named after the data dir's real path, so that every spelling of it meets there. */
export async function lockName(dataDir: string): Promise<string> {
  return `\0cairn-data-dir:${createHash("sha256")
    .update(await realpath(dataDir))
    .digest("hex")}`;
}

function answers(path: string): Promise<boolean> {
  return new Promise((resolvePromise) => {
    const socket = connect(path);
    socket.once("connect", () => {
      socket.destroy();
      resolvePromise(true);
    });
    socket.once("error", () => resolvePromise(false));
  });
}

/** Listens on the socket if nobody does; undefined if another process (or this one) already does. */
function listenOnce(path: string): Promise<Server | undefined> {
  return new Promise((resolvePromise, reject) => {
    const server = createServer((socket) => socket.destroy());
    server.once("error", (error: NodeJS.ErrnoException) => (error.code === "EADDRINUSE" ? resolvePromise(undefined) : reject(error)));
    server.listen({ path, exclusive: true }, () => {
      // The lock must not keep a process alive that has nothing else to do.
      server.unref();
      resolvePromise(server);
    });
  });
}

/**
 * Stops every Chroma whose command line is the embedded one's on `chromaPath` (SIGTERM, then SIGKILL after a
 * bound). Only a process shown by its own command line to be that Chroma is signalled, never a pid from a file,
 * which a new process may carry by now. Linux only (it reads /proc); elsewhere the tether alone stops Chroma.
 */
async function stopLeftChromas(chromaPath: string): Promise<void> {
  const wanted = resolve(chromaPath);
  for (const pid of chromaProcesses(wanted)) {
    signal(pid, "SIGTERM");
    if (!(await gone(pid, wanted))) {
      signal(pid, "SIGKILL");
      if (!(await gone(pid, wanted))) {
        throw new DataDirBusyError(
          `CAIRN_DATA_DIR: a Chroma (pid ${pid}) left running on this data dir does not stop; stop it, then start again`,
        );
      }
    }
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Gone already.
  }
}

async function gone(pid: number, chromaPath: string): Promise<boolean> {
  const deadline = Date.now() + CHROMA_STOP_MS;
  while (Date.now() < deadline) {
    if (!chromaProcesses(chromaPath).includes(pid)) return true;
    await sleep(100);
  }
  return false;
}

/** The processes running the chromadb CLI's `run --path <chromaPath>`, from /proc (none where there is no /proc). */
export function chromaProcesses(chromaPath: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const entry of entries) {
    const pid = Number(entry);
    if (pid === process.pid) continue;
    let args: string[];
    try {
      // A process that has ended but is not yet reaped has an empty command line: it holds no files.
      args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    } catch {
      continue;
    }
    const at = args.indexOf("--path");
    if (at < 0 || !args.includes("run") || !args.some((arg) => /[\\/]chromadb[\\/].*cli\.mjs$/.test(arg))) continue;
    const given = args[at + 1];
    if (given === undefined) continue;
    let path = given;
    if (!isAbsolute(given)) {
      try {
        path = resolve(readlinkSync(`/proc/${pid}/cwd`), given);
      } catch {
        continue;
      }
    }
    if (path === chromaPath) found.push(pid);
  }
  return found;
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
