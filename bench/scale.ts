import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import { adminAgents, keptStore } from "./kept-store.js";
import { requester, startBenchServer, type BenchServer } from "./bench-server.js";
import { corpus } from "./corpus.js";
import { round, summarize, timed } from "./stats.js";
import { startHashStub } from "./timed-embedder.js";

/**
 * A store of N turns on one machine (issue 20): loads N turns through the bulk path (`add_memories`, batches of
 * one agent's turns, spread over 20 agents and sessions of about 25 turns) into a memory-core of its own process,
 * with the hashing embeddings stub, and measures along the way:
 *
 * - `load_turns_per_s`; `rss_mb` at each tenth of N (memory-core's resident size, from its /metrics) and its slope
 *   `rss_mb_per_1k_turns` (least squares over the tenths);
 * - `recent_p95_ms` at N/10 and at N, and their ratio;
 * - at N: `hybrid_p95_ms`, `semantic_p95_ms` and `lexical_p95_ms` (query_raw_memories; p50s beside them), `write_p50_ms_c16` (add_memory with 16
 *   concurrent writers);
 * - `restart_ready_s`: memory-core stopped and started again over the loaded store, until its first hybrid
 *   query is answered (the embedded Chroma restarts with it, as `npm start` would);
 * - `hybrid_chroma`: what Chroma's reads took while the hybrid queries ran (memory-core's
 *   `cairn_chroma_request_duration_seconds`): per request kind, how many, their mean, and the share over 25 ms.
 *
 *   npm run bench -- scale --n N [--samples 100] [--concurrency 2] [--data-dir DIR] [--add K] [--json]
 *
 * `--add K` then loads K more turns on top, timed on their own (`added_turns_per_s`): the rate of a bulk load at
 * the size the store has reached, where `load_turns_per_s` is the average since its first turn.
 *
 * With `--data-dir` the store is kept there, and a run over a store a run with the same N left part-loaded
 * (stopped, or killed) resumes at the first tenth not stored whole: the turns of each tenth are the same in
 * every run and carry idempotency keys, so a tenth cut short is sent again whole and its stored turns replay.
 * Then `load_turns_per_s` and `rss_mb` cover the tenths this run loaded (`resumed_at` says where it began), and
 * `recent_p95_ratio` is left out unless this run measured N/10 itself. A store loaded whole goes straight to
 * the measurements at N.
 *
 * Progress goes to stderr; the last line of stdout is the JSON report.
 */
export async function benchScale(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      n: { type: "string", default: "20000" },
      samples: { type: "string", default: "100" },
      concurrency: { type: "string", default: "2" },
      "data-dir": { type: "string" },
      add: { type: "string", default: "0" },
      json: { type: "boolean", default: false },
    },
  });
  const n = Number(values.n);
  const samples = Number(values.samples);
  const concurrency = Number(values.concurrency);
  const add = Number(values.add);
  if (!Number.isInteger(n) || n < 1000) throw new Error("--n is a whole number of turns, at least 1000");
  if (!Number.isInteger(add) || add < 0) throw new Error("--add is a whole number of turns");
  const log = (line: string) => process.stderr.write(`${line}\n`);

  const AGENTS = 20;
  const BATCH = 500;
  const workspace = "scale";
  const store = await keptStore(values["data-dir"], { prefix: "cairn-bench-scale-", agents: adminAgents(AGENTS), workspace });
  const { dataDir, tokensFile, tokens, tokenOf } = store;
  const hashStub = await startHashStub();
  const start = () => startBenchServer({ dataDir, tokensFile, embedder: "hash", hashStubUrl: hashStub.baseUrl });
  let stack: BenchServer = await start();

  const request = requester(() => stack.url);
  const residentMb = async () => {
    const metrics = await request("GET", "/metrics", tokens[0]!.token);
    const line = metrics.split("\n").find((l) => l.startsWith("cairn_memory_resident_bytes"));
    if (!line) throw new Error("/metrics has no cairn_memory_resident_bytes");
    return Number(line.split(" ").at(-1)) / 2 ** 20;
  };
  /** memory-core's Chroma request histogram (/metrics): per request, count, sum (s) and count at or under 25 ms. */
  const chromaRequests = async () => {
    const text = await request("GET", "/metrics", tokens[0]!.token);
    const out = new Map<string, { count: number; sum: number; fast: number }>();
    const entry = (name: string) => out.get(name) ?? out.set(name, { count: 0, sum: 0, fast: 0 }).get(name)!;
    for (const line of text.split("\n")) {
      const match = /^cairn_chroma_request_duration_seconds_(count|sum|bucket)\{(?:le="([^"]+)",)?request="([^"]+)"\} (\S+)$/.exec(line);
      if (!match) continue;
      const [, part, le, name, value] = match;
      if (part === "count") entry(name!).count = Number(value);
      else if (part === "sum") entry(name!).sum = Number(value);
      else if (le === "0.025") entry(name!).fast = Number(value);
    }
    return out;
  };
  /** What Chroma's reads took between two readings of the histogram. */
  const chromaBetween = (before: Awaited<ReturnType<typeof chromaRequests>>, after: Awaited<ReturnType<typeof chromaRequests>>) =>
    Object.fromEntries(
      [...after].flatMap(([name, a]) => {
        const b = before.get(name) ?? { count: 0, sum: 0, fast: 0 };
        const count = a.count - b.count;
        if (count === 0 || !/\.(get|query|present)$/.test(name)) return [];
        return [
          [name, { count, mean_ms: round(((a.sum - b.sum) / count) * 1000, 1), over_25_ms: round(1 - (a.fast - b.fast) / count, 2) }],
        ];
      }),
    );
  const recentP95 = async () => {
    // Untimed, one read per agent first: an agent's first read in a process finds its stream's length with a probe
    // of its own (once per process); at N/10 the load has just written and known every length, so without this the
    // p95 at N, after a restart, would time those probes and the ratio would compare unlike reads.
    for (const t of tokens) await request("GET", "/v1/memories/recent?limit=20", t.token);
    const times: number[] = [];
    for (let i = 0; i < samples; i++)
      times.push((await timed(() => request("GET", "/v1/memories/recent?limit=20", tokens[i % AGENTS]!.token))).ms);
    return summarize(times).p95;
  };
  const queries = corpus(samples, { agents: 1, sessions: 1, seed: 99 }).map((t) => t.thought.split(".")[0]!);
  const searchTimes = async (mode: "hybrid" | "semantic" | "lexical") => {
    const times: number[] = [];
    for (const [i, query] of queries.entries()) {
      times.push((await timed(() => request("POST", "/v1/memories/query", tokens[i % AGENTS]!.token, { query, mode, limit: 10 }))).ms);
    }
    return summarize(times);
  };

  /**
   * Sends `size` corpus turns (from `seed`) through add_memories, grouped by agent into batches, `concurrency` in
   * flight; their sessions end in `-<tag>`, their keys are `scale-<keys>-<i>`. The time it took, in ms.
   */
  const bulkLoad = async (size: number, seed: number, tag: string, keys: string) => {
    const turns = corpus(size, { agents: AGENTS, sessions: Math.max(1, Math.floor(size / 25)), seed });
    const batches: Array<{ agent: string; memories: object[] }> = [];
    const byAgent = new Map<string, object[]>();
    for (const [i, { agent, ...turn }] of turns.entries()) {
      const memory = { ...turn, session_id: `${turn.session_id}-${tag}`, idempotency_key: `scale-${keys}-${i}` };
      const list = byAgent.get(agent) ?? [];
      list.push(memory);
      if (list.length === BATCH) {
        batches.push({ agent, memories: list });
        byAgent.set(agent, []);
      } else byAgent.set(agent, list);
    }
    for (const [agent, list] of byAgent) if (list.length > 0) batches.push({ agent, memories: list });
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < batches.length) {
          const batch = batches[next++]!;
          await request("POST", "/v1/memories/batch", tokenOf.get(batch.agent)!, { memories: batch.memories });
        }
      }),
    );
    return performance.now() - started;
  };

  try {
    // 1. The load, a tenth at a time: each tenth's turns grouped by agent into batches, `concurrency` in flight.
    const tenth = Math.floor(n / 10);
    const rss: Array<{ turns: number; rss_mb: number }> = [];
    const stored = (JSON.parse(await request("GET", "/v1/admin/status", tokens[0]!.token)) as { turns: number }).turns;
    const resumedAt = Math.min(10, Math.floor(stored / tenth));
    if (resumedAt === 10) log(`the store holds ${stored} turns: all ${n} are loaded, measuring at N`);
    else if (resumedAt > 0) log(`the store holds ${stored} turns: loading resumes at tenth ${resumedAt + 1} of 10`);
    let loaded = resumedAt * tenth;
    let loadedNow = 0;
    let loadMs = 0;
    let recentAtTenth: number | undefined;
    for (let part = resumedAt; part < 10; part++) {
      const size = part === 9 ? n - loaded : tenth;
      const partMs = await bulkLoad(size, 1000 + part, `p${part}`, String(part));
      loadMs += partMs;
      loaded += size;
      loadedNow += size;
      // A search brings the lexical index up to date with the load (it catches up on the feed when asked), so the
      // resident size counts what N turns cost a memory-core that answers, not one that has only written.
      await request("POST", "/v1/memories/query", tokens[0]!.token, { query: queries[part % queries.length], limit: 10 });
      rss.push({ turns: loaded, rss_mb: round(await residentMb(), 1) });
      if (part === 0) recentAtTenth = await recentP95();
      log(
        `loaded ${loaded}/${n} turns (this tenth ${round(size / (partMs / 1000), 1)} turns/s, this run ${round(loadedNow / (loadMs / 1000), 1)}), memory-core resident ${rss.at(-1)!.rss_mb} MB`,
      );
    }

    // 1b. More turns on top of the store as it stands, timed on their own: a bulk load's rate at the size reached,
    // rather than the average since the first turn. Each run's are new (a tag of their own), not replays.
    let addedPerS: number | undefined;
    if (add > 0) {
      const tag = `a${randomUUID().slice(0, 8)}`;
      const addMs = await bulkLoad(add, 2000, tag, tag);
      addedPerS = add / (addMs / 1000);
      log(`added ${add} turns on top (${round(addedPerS, 1)} turns/s)`);
    }

    // 2. At N: reads, then writes with 16 writers.
    const recentAtN = await recentP95();
    const beforeHybrid = await chromaRequests();
    const hybrid = await searchTimes("hybrid");
    const hybridChroma = chromaBetween(beforeHybrid, await chromaRequests());
    const semantic = await searchTimes("semantic");
    // The lexical side alone, to tell which side a hybrid query's time goes to.
    const lexical = await searchTimes("lexical");
    // New turns in every run: without a key a turn's id comes from its session and text, so a run over a kept
    // store would otherwise replay the turns an earlier run wrote here, and time replays.
    const runTag = randomUUID().slice(0, 8);
    const extra = corpus(samples * 2, { agents: AGENTS, sessions: 50, seed: 7 });
    const writes: number[] = [];
    let nextWrite = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (nextWrite < extra.length) {
          const { agent, ...turn } = extra[nextWrite++]!;
          writes.push(
            (
              await timed(() =>
                request("POST", "/v1/memories", tokenOf.get(agent)!, { ...turn, session_id: `${turn.session_id}-c16-${runTag}` }),
              )
            ).ms,
          );
        }
      }),
    );

    // 3. A restart over the loaded store, until the first hybrid query is answered.
    await stack.stop();
    const restartStarted = performance.now();
    stack = await start();
    await request("POST", "/v1/memories/query", tokens[0]!.token, { query: queries[0], limit: 10 });
    const restartReady = (performance.now() - restartStarted) / 1000;

    const report = {
      n,
      ...(resumedAt > 0 ? { resumed_at: resumedAt * tenth } : {}),
      ...(loadedNow > 0 ? { load_turns_per_s: round(loadedNow / (loadMs / 1000), 1) } : {}),
      ...(addedPerS === undefined ? {} : { added: add, added_turns_per_s: round(addedPerS, 1) }),
      rss_mb: rss.map((r) => r.rss_mb),
      ...(rss.length > 1 ? { rss_mb_per_1k_turns: round(slope(rss.map((r) => [r.turns / 1000, r.rss_mb])), 3) } : {}),
      restart_ready_s: round(restartReady, 1),
      write_p50_ms_c16: round(summarize(writes).p50, 1),
      hybrid_p95_ms: round(hybrid.p95, 1),
      hybrid_p50_ms: round(hybrid.p50, 1),
      semantic_p95_ms: round(semantic.p95, 1),
      semantic_p50_ms: round(semantic.p50, 1),
      lexical_p95_ms: round(lexical.p95, 1),
      lexical_p50_ms: round(lexical.p50, 1),
      hybrid_chroma: hybridChroma,
      recent_p95_ms: round(recentAtN, 1),
      ...(recentAtTenth === undefined
        ? {}
        : { recent_p95_at_tenth_ms: round(recentAtTenth, 1), recent_p95_ratio: round(recentAtN / recentAtTenth, 2) }),
    };
    if (!values.json) {
      log(`memory-core resident by tenth of N (MB): ${report.rss_mb.join(", ")}`);
      log(`slope ${report.rss_mb_per_1k_turns ?? "-"} MB per 1k turns; restart to first hybrid answer ${report.restart_ready_s} s`);
    }
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } finally {
    await stack.stop().catch(() => undefined);
    await hashStub.close();
    await store.dispose();
  }
}

/** The least-squares slope of y over x. */
function slope(points: Array<[number, number]>): number {
  const mean = (f: (p: [number, number]) => number) => points.reduce((s, p) => s + f(p), 0) / points.length;
  const mx = mean((p) => p[0]);
  const my = mean((p) => p[1]);
  const num = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const den = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}
