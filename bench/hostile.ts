import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import yaml from "js-yaml";
import { freePort } from "../services/memory-core/src/embedded/chroma-server.js";
import { newToken } from "../services/memory-core/src/auth/tokens.js";
import { corpus } from "./corpus.js";
import { startHashStub } from "./timed-embedder.js";
import { percentile, prng, round, summarize, type Summary } from "./stats.js";

/**
 * What the heaviest valid requests do to everyone else (issue 34), and 30 mixed clients, against `npm start` as
 * an operator runs it (the composition root of services/server, local embedder, embedded Chroma) in a process of
 * its own. Each `--root` is a Cairn checkout with its dependencies installed; with two (say a worktree of an
 * earlier commit and this one) both are measured in the same run, one after the other, over the same requests.
 *
 *   npm run bench -- hostile [--root DIR]... [--clients 30] [--requests 40] [--scenarios mixed,long,cjk,batch,four,import]
 *                            [--batch 500] [--repo DIR] [--bulk 100000] [--embedder local|hash] [--json]
 *
 * Scenarios, each on a fresh server:
 * - mixed: 30 clients (5 over MCP with the SDK's client, the rest over REST), each sending `--requests` requests
 *   drawn from add_memory, query_raw_memories, query_recent_turns, get_memory and get_session: throughput,
 *   p50/p95 per operation, and every failure (a transport error or a 5xx) counted.
 * - long: one add_memory whose prompt, thought and response are each 32,767 characters of ordinary words.
 * - cjk: one add_memory of 16,000 unspaced CJK characters per field, then a brief query_raw_memories that returns it.
 * - batch: one add_memories of `--batch` items of ~850 characters. four: four such batches at once.
 * - import: `cairn import git --repo DIR` (default: this checkout) with an admin token.
 * - bulk (not in the default list): `--bulk` turns through add_memories; resident size at each tenth. With
 *   `--embedder hash` the server embeds through the hashing stub (the local model's rate: docs/benchmarks.md,
 *   "memory-core latency").
 * While each heavy scenario runs, `/healthz` is asked every 100 ms (whether or not the last one answered: a stall
 * shows as many slow probes, not one) and another agent reads query_recent_turns in a loop; memory-core's resident
 * size (VmRSS) is sampled every 250 ms, and once more after ten idle seconds.
 */
export async function benchHostile(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      root: { type: "string", multiple: true },
      clients: { type: "string", default: "30" },
      requests: { type: "string", default: "40" },
      scenarios: { type: "string", default: "mixed,long,cjk,batch,four,import" },
      batch: { type: "string", default: "500" },
      repo: { type: "string" },
      bulk: { type: "string", default: "100000" },
      embedder: { type: "string", default: "local" },
      json: { type: "boolean", default: false },
    },
  });
  const roots = (values.root ?? [process.cwd()]).map((r) => resolve(r));
  const scenarios = values.scenarios.split(",");
  const options: RunOptions = {
    clients: Number(values.clients),
    requests: Number(values.requests),
    batch: Number(values.batch),
    repo: resolve(values.repo ?? process.cwd()),
    bulk: Number(values.bulk),
  };
  if (values.embedder !== "local" && values.embedder !== "hash") throw new Error("--embedder is local or hash");
  const hashStub = values.embedder === "hash" ? await startHashStub() : undefined;
  const env: Record<string, string> = hashStub
    ? { CAIRN_EMBEDDINGS: "openai", CAIRN_EMBEDDINGS_BASE_URL: hashStub.baseUrl, CAIRN_EMBEDDINGS_MODEL: "hash-bow-512" }
    : {};
  const report: Record<string, Record<string, unknown>> = {};
  for (const scenario of scenarios) {
    for (const root of roots) {
      const label = `${scenario} @ ${root}`;
      process.stderr.write(`${label}\n`);
      const figures = await onFreshServer(root, env, (server) => runScenario(scenario, server, options));
      (report[scenario] ??= {})[root] = figures;
      printFigures(label, figures);
    }
  }
  await hashStub?.close();
  if (values.json) console.log(JSON.stringify(report));
}

interface RunOptions {
  clients: number;
  requests: number;
  batch: number;
  repo: string;
  bulk: number;
}

interface Server {
  root: string;
  url: URL;
  pid: number;
  admin: string;
  agents: string[];
}

async function onFreshServer<T>(root: string, env: Record<string, string>, run: (server: Server) => Promise<T>): Promise<T> {
  const dataDir = await mkdtemp(join(tmpdir(), "cairn-bench-hostile-"));
  const admin = newToken();
  const agents = Array.from({ length: 10 }, () => newToken());
  const tokens = [
    { token: admin, workspace: "bench", agent: "historian", role: "admin" },
    ...agents.map((token, i) => ({ token, workspace: "bench", agent: `agent-${i}`, role: "agent" })),
  ];
  const tokensFile = join(dataDir, "tokens.yaml");
  await writeFile(tokensFile, yaml.dump({ tokens }));
  const port = await freePort();
  const child = spawn(process.execPath, ["--import", "tsx", join(root, "services/server/src/main.ts")], {
    cwd: root,
    env: { ...process.env, ...env, CAIRN_DATA_DIR: dataDir, CAIRN_TOKENS_FILE: tokensFile, CAIRN_PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const url = new URL(`http://127.0.0.1:${port}`);
  try {
    await waitReady(url, child, () => stderr);
    return await run({ root, url, pid: child.pid!, admin, agents });
  } finally {
    await stop(child);
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function waitReady(url: URL, child: ChildProcess, stderr: () => string): Promise<void> {
  for (let i = 0; i < 1200; i++) {
    if (child.exitCode !== null) throw new Error(`memory-core exited at start: ${stderr()}`);
    try {
      const response = await fetch(new URL("/readyz", url), { signal: AbortSignal.timeout(2000) });
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  throw new Error("memory-core did not become ready");
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((done) => child.once("exit", done));
  child.kill("SIGINT");
  if (await Promise.race([exited.then(() => true), sleep(60_000).then(() => false)])) return;
  child.kill("SIGKILL");
  await exited;
}

async function residentMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  const kb = /VmRSS:\s+(\d+)/.exec(status)?.[1];
  return kb ? Number(kb) / 1024 : Number.NaN;
}

const post = (server: Server, path: string, token: string, body: unknown) =>
  fetch(new URL(path, server.url), {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
const get = (server: Server, path: string, token: string) =>
  fetch(new URL(path, server.url), { headers: { authorization: `Bearer ${token}` } });

/** Ordinary words, `chars` characters of them. */
function words(chars: number, seed: number): string {
  let text = "";
  for (const turn of corpus(Math.ceil(chars / 300) + 1, { agents: 1, sessions: 1, seed })) {
    text += `${turn.prompt} ${turn.thought} ${turn.response} `;
    if (text.length >= chars) break;
  }
  return text.slice(0, chars).trimEnd();
}

function cjk(chars: number, seed: number): string {
  const random = prng(seed);
  // CJK Unified Ideographs, no spaces or punctuation: one unbroken run of unspaced script.
  return Array.from({ length: chars }, () => String.fromCodePoint(0x4e00 + Math.floor(random() * 0x5000))).join("");
}

function batchItems(count: number, seed: number) {
  return corpus(count, { agents: 1, sessions: 40, seed }).map((t, i) => ({
    session_id: `import-${seed}-${t.session_id}`,
    prompt: t.prompt,
    // ~850 characters an item, as the probe sent.
    thought: `${t.thought} ${words(500, seed * 1000 + i)}`,
    response: t.response,
  }));
}

interface Watch {
  healthz: number[];
  healthzFailed: number;
  other: number[];
  otherFailed: number;
  rss: number[];
}

/** Probes /healthz every 100 ms and reads recent turns as another agent, until `work` settles. */
async function watched<T>(server: Server, work: () => Promise<T>): Promise<{ value: T; watch: Watch; workMs: number }> {
  const watch: Watch = { healthz: [], healthzFailed: 0, other: [], otherFailed: 0, rss: [] };
  let done = false;
  const probes: Promise<void>[] = [];
  const probing = (async () => {
    while (!done) {
      const started = performance.now();
      probes.push(
        fetch(new URL("/healthz", server.url), { signal: AbortSignal.timeout(300_000) })
          .then(async (r) => {
            await r.arrayBuffer();
            if (r.ok) watch.healthz.push(performance.now() - started);
            else watch.healthzFailed++;
          })
          .catch(() => void watch.healthzFailed++),
      );
      await sleep(100);
    }
  })();
  const sampling = (async () => {
    while (!done) {
      watch.rss.push(await residentMb(server.pid));
      await sleep(250);
    }
  })();
  const reading = (async () => {
    while (!done) {
      const started = performance.now();
      try {
        const response = await get(server, "/v1/memories/recent?limit=20", server.agents[9]!);
        await response.arrayBuffer();
        if (response.ok) watch.other.push(performance.now() - started);
        else watch.otherFailed++;
      } catch {
        // A connection the server closed or reset under the caller: what an agent sees as `fetch failed`.
        watch.otherFailed++;
      }
    }
  })();
  const started = performance.now();
  const value = await work();
  const workMs = performance.now() - started;
  done = true;
  await Promise.all([probing, sampling, reading]);
  await Promise.all(probes);
  return { value, watch, workMs };
}

function watchFigures(watch: Watch, before: number, after: number, workMs: number) {
  return {
    work_s: round(workMs / 1000, 1),
    healthz_p99_ms: round(percentile(watch.healthz, 99)),
    healthz_max_ms: round(Math.max(...watch.healthz)),
    healthz_failed: watch.healthzFailed,
    other_caller_recent: summarize(watch.other),
    other_caller_failed: watch.otherFailed,
    rss_before_mb: round(before, 0),
    rss_peak_mb: round(Math.max(...watch.rss), 0),
    rss_after_10s_idle_mb: round(after, 0),
  };
}

async function heavy(server: Server, work: () => Promise<Record<string, unknown>>) {
  // A few reads first, so the probes meet a warmed server.
  await (await get(server, "/v1/memories/recent?limit=20", server.agents[9]!)).arrayBuffer();
  const before = await residentMb(server.pid);
  const { value, watch, workMs } = await watched(server, work);
  await sleep(10_000);
  return { ...value, ...watchFigures(watch, before, await residentMb(server.pid), workMs) };
}

async function expectStatus(response: Response, status: number, what: string): Promise<unknown> {
  const body = await response.text();
  if (response.status !== status) throw new Error(`${what} answered ${response.status}: ${body.slice(0, 300)}`);
  return JSON.parse(body) as unknown;
}

async function runScenario(scenario: string, server: Server, options: RunOptions): Promise<Record<string, unknown>> {
  switch (scenario) {
    case "mixed":
      return mixed(server, options);
    case "long":
      return heavy(server, async () => {
        const body = { session_id: "long", prompt: words(32_767, 1), thought: words(32_767, 2), response: words(32_767, 3) };
        await expectStatus(await post(server, "/v1/memories", server.agents[0]!, body), 201, "add_memory (long)");
        return {};
      });
    case "cjk":
      return heavy(server, async () => {
        const body = { session_id: "cjk", prompt: `cache decision ${cjk(16_000, 1)}`, thought: cjk(16_000, 2), response: cjk(16_000, 3) };
        const stored = performance.now();
        await expectStatus(await post(server, "/v1/memories", server.agents[0]!, body), 201, "add_memory (cjk)");
        const storeMs = performance.now() - stored;
        const queried = performance.now();
        const answer = (await expectStatus(
          await post(server, "/v1/memories/query", server.agents[1]!, { query: "cache decision" }),
          200,
          "query_raw_memories",
        )) as { hits: unknown[] };
        return {
          store_s: round(storeMs / 1000, 2),
          brief_query_ms: round(performance.now() - queried),
          brief_query_hits: answer.hits.length,
        };
      });
    case "batch":
      return heavy(server, async () => batches(server, 1, options.batch));
    case "four":
      return heavy(server, async () => batches(server, 4, options.batch));
    case "import":
      return heavy(server, async () => {
        const cli = join(server.root, "services/ops-cli/bin/cairn.mjs");
        const child = spawn(
          process.execPath,
          [cli, "import", "git", "--repo", options.repo, "--url", server.url.href, "--token", server.admin],
          {
            stdio: ["ignore", "pipe", "pipe"],
          },
        );
        let out = "";
        child.stdout?.on("data", (c: Buffer) => (out += c.toString()));
        child.stderr?.on("data", (c: Buffer) => (out += c.toString()));
        const code = await new Promise<number | null>((done) => child.once("exit", done));
        if (code !== 0) throw new Error(`cairn import git exited ${code}: ${out.slice(-500)}`);
        return { import_summary: out.trim().split("\n").slice(-3).join(" | ") };
      });
    case "bulk":
      return bulk(server, options.bulk);
    default:
      throw new Error(`unknown scenario ${scenario}`);
  }
}

async function batches(server: Server, count: number, size: number) {
  const results = await Promise.all(
    Array.from({ length: count }, async (_, i) =>
      expectStatus(await post(server, "/v1/memories/batch", server.admin, { memories: batchItems(size, 11 + i) }), 200, "add_memories"),
    ),
  );
  return { stored: results.reduce((n: number, r) => n + (r as { stored: number }).stored, 0) };
}

/** `--bulk` turns through add_memories, 500 a request: resident size at each tenth, and after ten idle seconds. */
async function bulk(server: Server, n: number): Promise<Record<string, unknown>> {
  const turns = corpus(n, { agents: 1, sessions: 2000, seed: 21 }).map(({ agent: _agent, ...t }) => t);
  const tenths: number[] = [];
  const before = await residentMb(server.pid);
  let peak = before;
  const started = performance.now();
  for (let at = 0; at < n; at += 500) {
    await expectStatus(
      await post(server, "/v1/memories/batch", server.admin, { memories: turns.slice(at, at + 500) }),
      200,
      "add_memories",
    );
    peak = Math.max(peak, await residentMb(server.pid));
    while (tenths.length < 10 && Math.floor((at + 500) / (n / 10)) > tenths.length) tenths.push(round(await residentMb(server.pid), 0));
  }
  const seconds = (performance.now() - started) / 1000;
  await sleep(10_000);
  const after = await residentMb(server.pid);
  return {
    turns: n,
    turns_per_second: round(n / seconds, 1),
    rss_before_mb: round(before, 0),
    rss_at_tenths_mb: tenths,
    rss_peak_mb: round(peak, 0),
    rss_after_10s_idle_mb: round(after, 0),
    mb_per_1k_turns: round(((after - before) / n) * 1000, 2),
  };
}

type Operation = "add_memory" | "query_raw_memories" | "query_recent_turns" | "get_memory" | "get_session";
const MIX: Array<[Operation, number]> = [
  ["add_memory", 0.3],
  ["query_raw_memories", 0.25],
  ["query_recent_turns", 0.25],
  ["get_memory", 0.1],
  ["get_session", 0.1],
];

/** 30 clients, five of them over MCP: what each operation takes while all of them run. */
async function mixed(server: Server, options: RunOptions): Promise<Record<string, unknown>> {
  // Something to find: 200 turns written ahead, in ten sessions.
  const seeded = corpus(200, { agents: 10, sessions: 10, seed: 5 }).map(({ agent: _agent, ...t }) => t);
  const seededIds = (
    (await expectStatus(await post(server, "/v1/memories/batch", server.admin, { memories: seeded }), 200, "add_memories (seed)")) as {
      results: Array<{ id?: string }>;
    }
  ).results.flatMap((r) => (r.id ? [r.id] : []));
  const times = new Map<string, number[]>();
  const failures = new Map<string, number>();
  const fresh = corpus(options.clients * options.requests, { agents: 10, sessions: 10, seed: 6 });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: options.clients }, async (_, c) => {
      const random = prng(1000 + c);
      const token = server.agents[c % server.agents.length]!;
      const overMcp = c < 5;
      let mcp: Client | undefined;
      if (overMcp) {
        mcp = new Client({ name: "bench-hostile", version: "1.0.0" });
        await mcp.connect(
          new StreamableHTTPClientTransport(new URL("/mcp", server.url), {
            requestInit: { headers: { authorization: `Bearer ${token}` } },
          }),
        );
      }
      for (let r = 0; r < options.requests; r++) {
        let roll = random();
        const operation = MIX.find(([, weight]) => (roll -= weight) < 0)?.[0] ?? "get_session";
        const turn = fresh[c * options.requests + r]!;
        const name = `${operation} (${overMcp ? "mcp" : "rest"})`;
        const at = performance.now();
        let failed = false;
        try {
          failed = !(await call(server, mcp, token, operation, turn, seededIds[Math.floor(random() * seededIds.length)]!));
        } catch {
          failed = true;
        }
        if (failed) failures.set(name, (failures.get(name) ?? 0) + 1);
        else {
          const list = times.get(name) ?? [];
          list.push(performance.now() - at);
          times.set(name, list);
        }
      }
      await mcp?.close();
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const ops: Record<string, Summary> = {};
  for (const [name, list] of [...times.entries()].sort()) ops[name] = summarize(list);
  const total = [...times.values()].reduce((n, l) => n + l.length, 0);
  return {
    clients: options.clients,
    requests: total,
    failed: Object.fromEntries(failures),
    seconds: round(seconds, 1),
    requests_per_second: round(total / seconds, 1),
    ...ops,
  };
}

/** One request; false when it failed (a 5xx, or a tool error over MCP that is not the caller's). */
async function call(
  server: Server,
  mcp: Client | undefined,
  token: string,
  operation: Operation,
  turn: { session_id: string; prompt: string; thought: string; response: string },
  memoryId: string,
): Promise<boolean> {
  const { session_id, prompt, thought, response } = turn;
  const args: Record<Operation, Record<string, unknown>> = {
    add_memory: { session_id, prompt, thought, response },
    query_raw_memories: { query: thought.split(".")[0]! },
    query_recent_turns: { limit: 20 },
    get_memory: { memory_id: memoryId },
    get_session: { session_id },
  };
  if (mcp) {
    const result = await mcp.callTool({ name: operation, arguments: args[operation] });
    return !result.isError;
  }
  const rest: Record<Operation, () => Promise<Response>> = {
    add_memory: () => post(server, "/v1/memories", token, args.add_memory),
    query_raw_memories: () => post(server, "/v1/memories/query", token, args.query_raw_memories),
    query_recent_turns: () => get(server, "/v1/memories/recent?limit=20", token),
    get_memory: () => get(server, `/v1/memories/${memoryId}`, token),
    get_session: () => get(server, `/v1/sessions/${encodeURIComponent(session_id)}`, token),
  };
  const answer = await rest[operation]();
  await answer.arrayBuffer();
  return answer.status < 500;
}

function printFigures(label: string, figures: Record<string, unknown>) {
  console.log(`\n${label}`);
  for (const [name, value] of Object.entries(figures)) {
    if (value && typeof value === "object" && "p95" in value) {
      const s = value as Summary;
      console.log(
        `  ${name.padEnd(34)} n ${String(s.n).padStart(5)}  p50 ${String(s.p50).padStart(9)}  p95 ${String(s.p95).padStart(9)} ms`,
      );
    } else console.log(`  ${name.padEnd(34)} ${typeof value === "object" ? JSON.stringify(value) : String(value)}`);
  }
}
