import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream } from "node:fs";
import { fileURLToPath } from "node:url";
import { setTimeout as sleep } from "node:timers/promises";
import { freePort, startEmbeddedChroma, type EmbeddedChroma } from "../../src/embedded/chroma-server.js";

/**
 * Real processes a fault-injection test can SIGKILL and start again: a dedicated Chroma on a data path of its
 * own, and memory-core as a child process (`node --import tsx services/server/src/main.ts`). Everything listens on 127.0.0.1.
 */

export { freePort };

/** Whether a process of that id is running (signal 0 tests for it). */
export const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Waits, up to a generous bound, until nothing accepts connections on the URL's port. */
async function waitUntilClosed(url: URL, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const open = await fetch(url, { signal: AbortSignal.timeout(1000) }).then(
      () => true,
      () => false,
    );
    if (!open) return;
    await sleep(50);
  }
  throw new Error(`still answering after ${timeoutMs} ms: ${url.origin}`);
}

export interface KillableChroma {
  readonly url: URL;
  /** SIGKILL: no shutdown, no flush. Resolves once the process is gone and its port is closed. */
  kill(): Promise<void>;
  /** Starts it again on the same data path and the same port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startKillableChroma(options: { path: string; logFile: string }): Promise<KillableChroma> {
  let current: EmbeddedChroma = await startEmbeddedChroma(options);
  const port = Number(current.url.port);
  return {
    get url() {
      return current.url;
    },
    async kill() {
      const pid = current.pid;
      if (pid === undefined) throw new Error("the embedded Chroma has no pid");
      process.kill(pid, "SIGKILL");
      const deadline = Date.now() + 30_000;
      while (alive(pid) && Date.now() < deadline) await sleep(20);
      await waitUntilClosed(new URL("/api/v2/heartbeat", current.url));
    },
    async restart() {
      // The port was just released; a start that loses a race for it is tried again a few times.
      let lastError: unknown;
      for (let attempt = 0; attempt < 5; attempt++) {
        try {
          current = await startEmbeddedChroma({ ...options, port });
          return;
        } catch (error) {
          lastError = error;
          await sleep(500);
        }
      }
      throw lastError;
    },
    stop: () => current.stop(),
  };
}

const MAIN = fileURLToPath(new URL("../../../server/src/main.ts", import.meta.url));

export interface MemoryCoreProcess {
  readonly url: URL;
  /** SIGKILL: in-flight requests die with it. Resolves once it has exited. */
  kill(): Promise<void>;
  /** Starts it again with the same environment and port; resolves when /healthz answers. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** memory-core as its own process, so that a test can kill it; its output goes to `logFile`. */
export async function startMemoryCoreProcess(options: {
  env: Record<string, string>;
  logFile: string;
  startTimeoutMs?: number;
}): Promise<MemoryCoreProcess> {
  const port = await freePort();
  const url = new URL(`http://127.0.0.1:${port}`);
  const log = createWriteStream(options.logFile, { flags: "a" });
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const start = async () => {
    const spawned = spawn(process.execPath, ["--import", "tsx", MAIN], {
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "",
        ...options.env,
        CAIRN_PORT: String(port),
        CAIRN_HOST: "127.0.0.1",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child = spawned;
    spawned.stdout?.pipe(log, { end: false });
    spawned.stderr?.pipe(log, { end: false });
    exited = new Promise((resolve) => spawned.once("exit", () => resolve()));
    const deadline = Date.now() + (options.startTimeoutMs ?? 90_000);
    for (;;) {
      if (spawned.exitCode !== null || spawned.signalCode !== null) {
        throw new Error(`memory-core exited at start (code ${spawned.exitCode}); see ${options.logFile}`);
      }
      const ok = await fetch(new URL("/healthz", url), { signal: AbortSignal.timeout(1000) }).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return;
      if (Date.now() > deadline) {
        spawned.kill("SIGKILL");
        throw new Error(`memory-core did not answer in time; see ${options.logFile}`);
      }
      await sleep(100);
    }
  };

  const kill = async (signal: NodeJS.Signals) => {
    const running = child;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    running.kill(signal);
    const timedOut = await Promise.race([exited.then(() => false), sleep(20_000).then(() => true)]);
    if (timedOut) {
      running.kill("SIGKILL");
      await exited;
    }
  };

  await start();
  return {
    url,
    kill: () => kill("SIGKILL"),
    restart: start,
    async stop() {
      await kill("SIGTERM");
      log.end();
    },
  };
}
