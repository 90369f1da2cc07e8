import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdir } from "node:fs/promises";
import { constants } from "node:os";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

/** A real Chroma server from the `chromadb` npm package's CLI (its native binding), data on local disk. */
export interface EmbeddedChroma {
  url: URL;
  /** The server process's id (a seam for fault-injection tests, which SIGKILL it). */
  pid?: number | undefined;
  /** Chroma's own output. */
  logFile: string;
  /**
   * How the server ended without being stopped (`signal SIGSEGV`, `code 1`), waiting up to `ms` for it to end:
   * a crash's refused connections can come before its exit is seen. Undefined while it runs or once stopped.
   */
  endedWithin(ms: number): Promise<string | undefined>;
  stop(): Promise<void>;
}

export interface EmbeddedChromaOptions {
  /** Where Chroma keeps its data. */
  path: string;
  /** Chroma's own output goes here, not to the terminal. */
  logFile: string;
  port?: number;
  startTimeoutMs?: number;
  /** Called once if the server ends without being stopped after it answered, with how it ended and its log. */
  onEnded?: (how: string, logFile: string) => void;
}

export class EmbeddedChromaError extends Error {
  override name = "EmbeddedChromaError";
}

/** The tether (chroma-tether.mjs) that stops Chroma when the process that started it ends, however it ends. */
const TETHER = fileURLToPath(new URL("./chroma-tether.mjs", import.meta.url));

/**
 * Starts Chroma on `options.path`, tied to this process: it stops when this process ends, a SIGKILL included.
 * Its command line names the absolute data path, which is how a later start finds one left running (data-dir.ts).
 */
export async function startEmbeddedChroma(options: EmbeddedChromaOptions): Promise<EmbeddedChroma> {
  const path = resolve(options.path);
  await mkdir(path, { recursive: true });
  await mkdir(dirname(options.logFile), { recursive: true });
  const port = options.port ?? (await freePort());
  const log = createWriteStream(options.logFile, { flags: "a" });
  const child = spawn(process.execPath, chromaArgs(path, port), {
    // stdin is the tether's pipe: nothing is written to it, and its end-of-file tells Chroma this process ended.
    stdio: ["pipe", "pipe", "pipe"],
    // A process group of its own: Ctrl-C in a terminal signals the whole foreground group, and Chroma must not
    // stop before memory-core has written its lexical snapshots, which read the change feed from it. memory-core
    // stops it itself (stop(), below), or the tether does when memory-core ends without stopping it.
    detached: true,
  });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const url = new URL(`http://127.0.0.1:${port}`);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  let stopping = false;
  let started = false;
  let ended: string | undefined;
  child.once("exit", (code, signal) => {
    // A stop signal sent to Chroma's own group (a supervisor stopping every process it started) ends it with
    // memory-core, which is no news. Anything else (a crash, a kill) is.
    if (stopping || isStopSignal(signal, code)) return;
    ended = signal ? `signal ${signal}` : `code ${code}`;
    // Ending before it answered is the start's own error (below).
    if (started) options.onEnded?.(ended, options.logFile);
  });

  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null) {
      throw new EmbeddedChromaError(`the embedded Chroma exited at start (code ${child.exitCode}); see its log: ${options.logFile}`);
    }
    if (await heartbeat(url)) break;
    if (Date.now() > deadline) {
      await stopChild(child, exited);
      throw new EmbeddedChromaError(`the embedded Chroma did not answer in time; see its log: ${options.logFile}`);
    }
    await sleep(100);
  }
  started = true;
  return {
    url,
    pid: child.pid,
    logFile: options.logFile,
    endedWithin: async (ms) => {
      if (ended === undefined && !stopping) await Promise.race([exited, sleep(ms)]);
      return ended;
    },
    async stop() {
      stopping = true;
      await stopChild(child, exited);
      log.end();
    },
  };
}

const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** Ended by a stop signal, or by the exit status a process that handles one conventionally gives (128 + its number). */
function isStopSignal(signal: NodeJS.Signals | null, code: number | null): boolean {
  if (signal) return (STOP_SIGNALS as readonly string[]).includes(signal);
  return code === 0 || STOP_SIGNALS.some((name) => code === 128 + constants.signals[name]);
}

/** Node's arguments for the chromadb CLI serving `path` on a loopback port, with the tether unless told otherwise. */
export function chromaArgs(path: string, port: number, tether = true): string[] {
  const run = [chromaCli(), "run", "--path", path, "--host", "127.0.0.1", "--port", String(port)];
  return tether ? ["--import", TETHER, ...run] : run;
}

function chromaCli(): string {
  // The package exports only its library; its CLI sits beside the CommonJS build's parent folder.
  const library = createRequire(import.meta.url).resolve("chromadb");
  return join(dirname(library), "..", "cli.mjs");
}

async function heartbeat(url: URL): Promise<boolean> {
  try {
    const response = await fetch(new URL("/api/v2/heartbeat", url), { signal: AbortSignal.timeout(1000) });
    return response.ok;
  } catch {
    return false;
  }
}

async function stopChild(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const timedOut = await Promise.race([exited.then(() => false), sleep(10_000).then(() => true)]);
  if (timedOut) {
    child.kill("SIGKILL");
    await exited;
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
