import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import { chromaArgs, freePort } from "../services/memory-core/src/embedded/chroma-server.js";
import { lockDataDir } from "../services/memory-core/src/embedded/data-dir.js";
import { round, summarize } from "./stats.js";

/**
 * What tying the embedded Chroma to memory-core costs, and how soon it acts. `--rounds` times each, a Chroma
 * is started as chroma-server.ts starts it, with the tether (chroma-tether.mjs: a worker thread blocked reading
 * stdin) and without: the time until it answers a heartbeat and its resident size once idle. Then the tethered
 * one's owner end is closed, as the kernel closes it when memory-core is killed, and the time until Chroma has
 * exited is taken, beside the time a SIGTERM (memory-core's own stop) takes with the bare one. Last, the cost of
 * taking a data dir (`lockDataDir`: the lock and the /proc search for a Chroma left on it), `--locks` times.
 *
 *   npm run bench -- chroma-tether [--rounds 3] [--locks 50] [--json]
 */
export async function benchChromaTether(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      rounds: { type: "string", default: "3" },
      locks: { type: "string", default: "50" },
      json: { type: "boolean", default: false },
    },
  });
  const rounds = Number(values.rounds);
  const locks = Number(values.locks);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20) throw new Error("--rounds is a whole number from 1 to 20");
  if (!Number.isInteger(locks) || locks < 1 || locks > 10_000) throw new Error("--locks is a whole number from 1 to 10000");
  const dir = await mkdtemp(join(tmpdir(), "cairn-bench-chroma-tether-"));
  const samples = {
    tethered: { startMs: [] as number[], rssKb: [] as number[], endMs: [] as number[] },
    bare: { startMs: [] as number[], rssKb: [] as number[], endMs: [] as number[] },
  };
  const children: ChildProcess[] = [];
  try {
    for (let round = 0; round < rounds; round++) {
      for (const kind of ["tethered", "bare"] as const) {
        const port = await freePort();
        const path = join(dir, `${kind}-${round}`);
        await mkdir(path, { recursive: true });
        const began = performance.now();
        const child = spawn(process.execPath, chromaArgs(path, port, kind === "tethered"), {
          stdio: ["pipe", "ignore", "ignore"],
          detached: true,
        });
        children.push(child);
        const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
        while (!(await heartbeat(port))) await sleep(20);
        samples[kind].startMs.push(performance.now() - began);
        await sleep(2000);
        samples[kind].rssKb.push(residentKb(child.pid!));
        const ending = performance.now();
        if (kind === "tethered") child.stdin!.destroy();
        else child.kill("SIGTERM");
        // Bounded: a tether that did not act is a finding, not a hang.
        const ended = await Promise.race([exited.then(() => true), sleep(30_000).then(() => false)]);
        if (!ended) {
          child.kill("SIGKILL");
          throw new Error(`the ${kind} Chroma did not exit within 30 s of ${kind === "tethered" ? "its owner end closing" : "SIGTERM"}`);
        }
        samples[kind].endMs.push(performance.now() - ending);
      }
    }
    const lockDir = join(dir, "lock");
    const lockMs: number[] = [];
    for (let n = 0; n < locks; n++) {
      const began = performance.now();
      const lock = await lockDataDir(lockDir, join(lockDir, "chroma"));
      lockMs.push(performance.now() - began);
      await lock.release();
    }
    const processes = readFileSync("/proc/loadavg", "utf8").split(" ")[3];
    const report = {
      rounds,
      tethered: {
        start_ms: summarize(samples.tethered.startMs),
        rss_kb: summarize(samples.tethered.rssKb),
        owner_end_to_exit_ms: summarize(samples.tethered.endMs),
      },
      bare: {
        start_ms: summarize(samples.bare.startMs),
        rss_kb: summarize(samples.bare.rssKb),
        sigterm_to_exit_ms: summarize(samples.bare.endMs),
      },
      rss_ratio: round(summarize(samples.tethered.rssKb).p50 / summarize(samples.bare.rssKb).p50, 3),
      lock: { times: locks, ms: summarize(lockMs), processes_on_host: processes },
    };
    if (values.json) {
      process.stdout.write(`${JSON.stringify(report)}\n`);
      return;
    }
    const row = (label: string, s: { p50: number; p95: number }, unit: string) =>
      `  ${label.padEnd(40)} p50 ${round(s.p50)} ${unit}, p95 ${round(s.p95)} ${unit}\n`;
    process.stdout.write(`embedded Chroma with and without the tether, ${rounds} rounds\n`);
    process.stdout.write(row("tethered: start to heartbeat", report.tethered.start_ms, "ms"));
    process.stdout.write(row("bare: start to heartbeat", report.bare.start_ms, "ms"));
    process.stdout.write(row("tethered: resident, idle", report.tethered.rss_kb, "KB"));
    process.stdout.write(row("bare: resident, idle", report.bare.rss_kb, "KB"));
    process.stdout.write(`  ${"resident ratio tethered/bare".padEnd(40)} ${report.rss_ratio}\n`);
    process.stdout.write(row("tethered: owner end to exit", report.tethered.owner_end_to_exit_ms, "ms"));
    process.stdout.write(row("bare: SIGTERM to exit", report.bare.sigterm_to_exit_ms, "ms"));
    process.stdout.write(row(`lockDataDir (${locks}x, running/all ${processes})`, report.lock.ms, "ms"));
  } finally {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
  }
}

async function heartbeat(port: number): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/api/v2/heartbeat`, { signal: AbortSignal.timeout(1000) })).ok;
  } catch {
    return false;
  }
}

function residentKb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"));
  return Number(line?.match(/\d+/)?.[0] ?? Number.NaN);
}
