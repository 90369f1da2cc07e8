import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
/** Percentiles by nearest rank over a sample of milliseconds. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export interface Summary {
  n: number;
  p50: number;
  p95: number;
  mean: number;
}

export function summarize(samples: readonly number[]): Summary {
  const mean = samples.reduce((a, b) => a + b, 0) / Math.max(1, samples.length);
  return { n: samples.length, p50: round(percentile(samples, 50)), p95: round(percentile(samples, 95)), mean: round(mean) };
}

export const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

export async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await fn();
  return { ms: performance.now() - start, value };
}

/** A small seeded PRNG (mulberry32), so that every run loads the same corpus. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What a hook bench counts for one set of inputs: its runs, how many printed something (or said the code moved), each run's time and output. */
export interface HookRuns {
  runs: number;
  spoke: number;
  moved?: number;
  ms: number[];
  bytes: number[];
}

/** A set of hook runs' figures: how often it spoke (or said the code moved), whole-process p50/p95, the largest output. */
export function hookRunFigures(b: HookRuns) {
  const s = summarize(b.ms);
  return {
    runs: b.runs,
    speak_rate: round(b.spoke / b.runs, 3),
    ...(b.moved === undefined ? {} : { moved_rate: round(b.moved / b.runs, 3) }),
    p50_ms: round(s.p50, 0),
    p95_ms: round(s.p95, 0),
    max_bytes: Math.max(0, ...b.bytes),
  };
}

/** A hook bench's figures per set, printed as JSON (`--json`) or a line per set. */
export function printHookRuns(results: Record<string, HookRuns>, json: boolean): void {
  const report = Object.fromEntries(Object.entries(results).map(([set, b]) => [set, hookRunFigures(b)]));
  if (json) process.stdout.write(`${JSON.stringify(report)}\n`);
  else for (const [set, r] of Object.entries(report)) process.stdout.write(`${set.padEnd(10)} ${JSON.stringify(r)}\n`);
}

/** This checkout's loader. */
export const LOADER_BIN = fileURLToPath(new URL("../services/loader/bin/cairn-load.mjs", import.meta.url));

/**
 * One run of a loader hook as a harness runs it: a child process, `stdin` its input; how long the whole process took.
 * `loader` runs another checkout's `cairn-load` instead of this one's.
 */
export const runHook = (mode: string, stdin: string, options: { env: NodeJS.ProcessEnv; cwd?: string; loader?: string }) =>
  new Promise<{ ms: number; stdout: string; stderr: string }>((resolve) => {
    const { loader = LOADER_BIN, ...spawn } = options;
    const started = performance.now();
    const child = execFile(process.execPath, [loader, "--hook", mode], spawn, (_error, stdout, stderr) =>
      resolve({ ms: performance.now() - started, stdout, stderr }),
    );
    child.stdin!.end(stdin);
  });
