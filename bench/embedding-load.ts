import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import yaml from "js-yaml";
import { percentile, prng, round } from "./stats.js";

/**
 * The heaviest valid requests against memory-core with the local model, and what the other callers see meanwhile
 * (issue 34, items 1 and 3; docs/benchmarks.md, "Reliability: what one caller can do to everyone else").
 *
 *   npm run bench -- embedding-load [--root DIR] [--phases long,long3,batch,batch4] [--items 500] [--port N] [--log FILE]
 *
 * Starts memory-core as `npm start` does (`node --import tsx DIR/services/server/src/main.ts`, its embedded
 * Chroma, the local model, no summarizer), from the checkout at DIR (this one unless given: pass another
 * checkout to measure its code with the same bench). Then, phase by phase: `long` is one `add_memory` whose
 * prompt, thought and response are 32,767 characters of words each; `long3` three of them at once; `batch` one
 * `add_memories` of ITEMS turns of ~850 characters; `batch4` four of those at once. During each phase one client
 * asks `/healthz` and another `query_recent_turns`, each one request after the other, and memory-core's
 * resident size (VmRSS of its process) is read every 200 ms. Prints, per phase: how long the heavy requests took,
 * `/healthz` p50/p99/max, the other caller's p95/max, and the resident size before, at its peak and 5 s after
 * the phase (an idle model thread is replaced after 2 s).
 */
export async function benchEmbeddingLoad(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      root: { type: "string" },
      phases: { type: "string", default: "long,long3,batch,batch4" },
      items: { type: "string", default: "500" },
      port: { type: "string" },
      log: { type: "string" },
    },
  });
  const root = resolve(values.root ?? ".");
  const items = Number(values.items);
  const dir = await mkdtemp(join(tmpdir(), "cairn-embedding-load-"));
  const admin = { token: `cairn_${randomBytes(24).toString("hex")}`, workspace: "bench", agent: "importer", role: "admin" };
  const agent = { token: `cairn_${randomBytes(24).toString("hex")}`, workspace: "bench", agent: "reader", role: "agent" };
  await writeFile(join(dir, "tokens.yaml"), yaml.dump({ tokens: [admin, agent] }));
  const port = values.port ? Number(values.port) : await freePort();
  const base = new URL(`http://127.0.0.1:${port}`);
  const started = performance.now();
  const server = spawn(process.execPath, ["--import", "tsx", join(root, "services/server/src/main.ts")], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      CAIRN_DATA_DIR: join(dir, "data"),
      CAIRN_TOKENS_FILE: join(dir, "tokens.yaml"),
      CAIRN_PORT: String(port),
      CAIRN_HOST: "127.0.0.1",
      CAIRN_SUMMARY_WORKER: "off",
    },
    // Its log (JSON lines on stderr) goes to LOG when given.
    stdio: ["ignore", "ignore", values.log ? "pipe" : "ignore"],
  });
  if (values.log) server.stderr!.pipe(createWriteStream(values.log));
  const killServer = () => server.kill("SIGTERM");
  process.once("exit", killServer);
  try {
    await untilHealthy(base, server);
    console.log(`memory-core from ${root} answers after ${Math.round(performance.now() - started)} ms (pid ${server.pid})`);
    const rss = () => residentMb(server.pid!);
    // A few writes and reads first, so that the figures do not include what the first of each costs.
    await post(base, "/v1/memories", agent.token, turn("warm", 0, 400));
    await get(base, "/v1/memories/recent?limit=5", agent.token);
    await sleep(3_000);
    console.log(`resident at rest: ${await rss()} MB`);
    const heavy: Record<string, () => Promise<{ status: number }>[]> = {
      long: () => [post(base, "/v1/memories", agent.token, longTurn(1))],
      long3: () => [1, 2, 3].map((n) => post(base, "/v1/memories", agent.token, longTurn(10 + n))),
      batch: () => [post(base, "/v1/memories/batch", admin.token, batch(1, items))],
      batch4: () => [1, 2, 3, 4].map((n) => post(base, "/v1/memories/batch", admin.token, batch(10 + n, items))),
    };
    console.log("phase   | heavy s | healthz n p50 p99 max ms | recent n p95 max ms | RSS MB before peak after5s");
    for (const phase of values.phases.split(",")) {
      const make = heavy[phase];
      if (!make) throw new Error(`unknown phase ${phase}; one of ${Object.keys(heavy).join(", ")}`);
      const before = await rss();
      let running = true;
      let peak = before;
      const sampler = (async () => {
        while (running) {
          peak = Math.max(peak, await rss());
          await sleep(200);
        }
      })();
      const health = prober(
        () => running,
        () => get(base, "/healthz"),
      );
      const recent = prober(
        () => running,
        () => get(base, "/v1/memories/recent?limit=20", agent.token),
      );
      const t0 = performance.now();
      const outcomes = await Promise.all(make());
      const heavyS = (performance.now() - t0) / 1000;
      running = false;
      const [healthMs, recentMs] = await Promise.all([health, recent, sampler]);
      const failed = outcomes.filter((o) => o.status >= 300).length;
      await sleep(5_000);
      const after = await rss();
      console.log(
        `${phase.padEnd(7)} | ${round(heavyS, 1).toString().padStart(7)} | ${healthMs.length} ${fmt(healthMs, 50)} ${fmt(healthMs, 99)} ${fmt(healthMs, 100)}` +
          ` | ${recentMs.length} ${fmt(recentMs, 95)} ${fmt(recentMs, 100)} | ${before} ${peak} ${after}` +
          (failed ? ` (${failed} heavy requests failed)` : "") +
          (healthMs.failed || recentMs.failed ? ` (${healthMs.failed} /healthz and ${recentMs.failed} recent failed)` : ""),
      );
    }
  } finally {
    server.kill("SIGTERM");
    await new Promise((done) => (server.exitCode !== null ? done(undefined) : server.once("exit", done)));
    await rm(dir, { recursive: true, force: true });
  }
}

const fmt = (samples: number[], p: number) => Math.round(percentile(samples, p));

/** Request after request while `going()`: the latency of each, in ms. */
async function prober(going: () => boolean, request: () => Promise<{ status: number }>): Promise<number[] & { failed?: number }> {
  const times: number[] & { failed?: number } = [];
  times.failed = 0;
  while (going()) {
    const t0 = performance.now();
    const status = await request().then(
      (r) => r.status,
      () => 0,
    );
    times.push(performance.now() - t0);
    if (status !== 200) times.failed += 1;
    await sleep(20);
  }
  return times;
}

/** Over node:http, which sets no time limit on an answer: the point is how long the checkout at DIR takes, however long. */
function request(base: URL, method: string, path: string, token?: string, body?: unknown): Promise<{ status: number }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((done, fail) => {
    const sent = httpRequest(
      new URL(path, base),
      {
        method,
        agent: false,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(payload ? { "content-type": "application/json", "content-length": Buffer.byteLength(payload) } : {}),
        },
      },
      (response) => {
        response.resume();
        response.once("end", () => done({ status: response.statusCode ?? 0 }));
        response.once("error", fail);
      },
    );
    sent.once("error", fail);
    sent.end(payload);
  });
}

const post = (base: URL, path: string, token: string, body: unknown) => request(base, "POST", path, token, body);
const get = (base: URL, path: string, token?: string) => request(base, "GET", path, token);

const WORDS = (
  "the lock ordering decision for the cache layer was measured against the retry helper and the queue " +
  "flush path before we chose the simplest fix that keeps writes exactly once across restarts and replicas " +
  "while the importer reads commits from git and the console shows what the agents decided last week"
).split(" ");

/** Ordinary words, seeded: `chars` characters at most. */
function words(chars: number, seed: number): string {
  const random = prng(seed);
  let text = "";
  while (text.length < chars) text += `${WORDS[Math.floor(random() * WORDS.length)]} `;
  return text.slice(0, chars).trimEnd();
}

const turn = (session: string, n: number, chars: number) => ({
  session_id: session,
  prompt: words(Math.round(chars * 0.3), n * 3 + 1),
  thought: words(Math.round(chars * 0.2), n * 3 + 2),
  response: words(Math.round(chars * 0.5), n * 3 + 3),
});

const longTurn = (n: number) => ({
  session_id: `long-${n}`,
  prompt: words(32_767, n * 3 + 1),
  thought: words(32_767, n * 3 + 2),
  response: words(32_767, n * 3 + 3),
});

const batch = (n: number, items: number) => ({
  memories: Array.from({ length: items }, (_, i) => turn(`batch-${n}`, n * 1000 + i, 850)),
});

async function untilHealthy(base: URL, server: ChildProcess): Promise<void> {
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (server.exitCode !== null) throw new Error(`memory-core exited at start (code ${server.exitCode})`);
    const ok = await fetch(new URL("/healthz", base), { signal: AbortSignal.timeout(1000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error("memory-core did not answer /healthz in 3 minutes");
    await sleep(200);
  }
}

async function residentMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return Math.round(kb / 1024);
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once("error", fail);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => done(port));
    });
  });
}
