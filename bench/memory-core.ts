import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ChromaClient } from "chromadb";
import yaml from "js-yaml";
import { newToken } from "../services/memory-core/src/auth/tokens.js";
import { JsonClient } from "../services/memory-core/src/net/json-client.js";
import { collectionPath } from "../services/memory-core/src/store/chroma-store.js";
import { startBenchServer } from "./bench-server.js";
import { corpus } from "./corpus.js";
import { startHashStub } from "./timed-embedder.js";
import { round, summarize, timed, type Summary } from "./stats.js";

/**
 * Loads N turns through the public API of a real stack (embedded Chroma, local embedder, HTTP) and prints
 * p50/p95 of each operation, and the ratio of query_raw_memories (embedding excluded) to the raw Chroma query.
 * The stack runs in a process of its own (memory-core-server.ts); this process is the client of both it and Chroma.
 *
 *   npm run bench -- memory-core [--n 10000] [--samples 200] [--concurrency 8] [--embedder local|hash] [--json]
 *                                [--data-dir DIR]
 *
 * `--embedder hash` serves hashing bag-of-words vectors from a local OpenAI-compatible stub instead of the
 * local model (whose rate makes a load of 100k take hours: docs/benchmarks.md, "memory-core latency"): for runs
 * at 100k, where what is measured is memory-core's own cost around the embedding, which the report separates
 * anyway.
 *
 * `--data-dir DIR` keeps the loaded store in DIR and, when DIR already holds a load of the same shape, measures
 * over it without loading again (a 100k load takes over an hour on two cores; the code measured may change).
 */
export async function benchMemoryCore(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      n: { type: "string", default: "10000" },
      samples: { type: "string", default: "200" },
      concurrency: { type: "string", default: "8" },
      agents: { type: "string", default: "10" },
      sessions: { type: "string", default: "500" },
      embedder: { type: "string", default: "local" },
      json: { type: "boolean", default: false },
      "data-dir": { type: "string" },
    },
  });
  const n = Number(values.n);
  const samples = Number(values.samples);
  const concurrency = Number(values.concurrency);
  const agentCount = Number(values.agents);
  const log = (line: string) => process.stderr.write(`${line}\n`);

  const kept = values["data-dir"];
  const dataDir = kept ?? (await mkdtemp(join(tmpdir(), "cairn-bench-")));
  const workspace = "bench";
  const shape = { n, agents: agentCount, sessions: Number(values.sessions), embedder: values.embedder };
  const marker = join(dataDir, "bench-load.json");
  const previous = kept ? await readFile(marker, "utf8").then(JSON.parse, () => undefined) : undefined;
  const reuse = previous !== undefined && JSON.stringify(previous.shape) === JSON.stringify(shape);
  if (kept && !reuse) await mkdir(dataDir, { recursive: true });
  const tokens: Array<{ token: string; workspace: string; agent: string; role: "agent" }> = reuse
    ? previous.tokens
    : Array.from({ length: agentCount }, (_, i) => ({ token: newToken(), workspace, agent: `agent-${i}`, role: "agent" as const }));
  const tokenOf = new Map(tokens.map((t) => [t.agent, t.token]));
  const tokensFile = join(dataDir, "tokens.yaml");
  await writeFile(tokensFile, yaml.dump({ tokens }));
  // Turns sampled on a reused store need sessions of their own, or they would be replays of the last run's.
  const runTag = Date.now().toString(36);

  if (values.embedder !== "local" && values.embedder !== "hash") throw new Error("--embedder is local or hash");
  const hashStub = values.embedder === "hash" ? await startHashStub() : undefined;
  const stack = await startBenchServer({ dataDir, tokensFile, embedder: values.embedder, hashStubUrl: hashStub?.baseUrl });
  const post = (path: string, token: string, body: unknown) =>
    fetch(new URL(path, stack.url), {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const get = (path: string, token: string) => fetch(new URL(path, stack.url), { headers: { authorization: `Bearer ${token}` } });

  try {
    // 1. Bulk load through the API.
    const turns = reuse ? [] : corpus(n, { agents: agentCount, sessions: Number(values.sessions) });
    const loadLatencies: number[] = [];
    let next = 0;
    const loadStart = performance.now();
    if (reuse) log(`reusing the load of ${n} turns in ${dataDir}`);
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < turns.length) {
          const { agent, ...body } = turns[next++]!;
          const { ms, value } = await timed(() => post("/v1/memories", tokenOf.get(agent)!, body));
          if (value.status !== 201) throw new Error(`load: add_memory answered ${value.status}`);
          await value.arrayBuffer();
          loadLatencies.push(ms);
          if (loadLatencies.length % 1000 === 0) log(`loaded ${loadLatencies.length}/${n}`);
        }
      }),
    );
    const loadSeconds = reuse ? Number(previous.load_seconds) : (performance.now() - loadStart) / 1000;
    if (kept && !reuse) await writeFile(marker, JSON.stringify({ shape, tokens, load_seconds: loadSeconds }));

    // 2. add_memory one at a time, so each request's embedding time is known (the server does nothing else while
    // a write embeds, so the time it measures around the call is the embedding's alone).
    const extra = corpus(samples, { agents: agentCount, sessions: 50, seed: 7 });
    const addTotal: number[] = [];
    const addWithoutEmbedding: number[] = [];
    await stack.drainEmbedMs();
    for (const { agent, ...body } of extra) {
      const { ms, value } = await timed(async () => {
        const response = await post("/v1/memories", tokenOf.get(agent)!, { ...body, session_id: `${body.session_id}-sampled-${runTag}` });
        await response.arrayBuffer();
        return response;
      });
      if (value.status !== 201) throw new Error(`add_memory answered ${value.status}`);
      addTotal.push(ms);
      addWithoutEmbedding.push(ms - (await stack.drainEmbedMs()));
    }

    // 3. query_recent_turns: first pages and the page after a cursor.
    const recentFirst: number[] = [];
    const recentNext: number[] = [];
    for (let i = 0; i < samples; i++) {
      const token = tokens[i % tokens.length]!.token;
      const first = await timed(
        async () => (await get("/v1/memories/recent?limit=20", token)).json() as Promise<{ turns: unknown[]; next_cursor: string }>,
      );
      if (first.value.turns.length !== 20) throw new Error("query_recent_turns returned a short page");
      recentFirst.push(first.ms);
      const second = await timed(async () => (await get(`/v1/memories/recent?limit=20&before=${first.value.next_cursor}`, token)).json());
      recentNext.push(second.ms);
    }

    // 4. query_raw_memories (hybrid, and semantic alone), and the raw Chroma query for the same k and vectors,
    // interleaved query by query so that all three meet the same moments of a shared, noisy machine.
    const queries = corpus(samples, { agents: 1, sessions: 1, seed: 99 }).map((t) => t.thought.split(".")[0]!);
    const vectors = await stack.embed(queries);
    const chroma = new ChromaClient({ host: stack.chromaUrl.hostname, port: Number(stack.chromaUrl.port), database: workspace });
    const collection = await chroma.getCollection({ name: "turns" });
    // The embedding's time is what embedding the query takes alone, measured just before the query: time that
    // the server measures around the embedding call during the query would also hold whatever of its own work
    // (lexical scoring) ran on the thread meanwhile, and leaving that out would flatter the figure.
    const search = async (query: string, token: string, mode: string, filters: Record<string, string> = {}) => {
      const embedding = await stack.embeddingMs(query);
      const { ms, value } = await timed(async () => {
        const response = await post("/v1/memories/query", token, { query, limit: 10, mode, ...filters });
        await response.arrayBuffer();
        return response;
      });
      if (value.status !== 200) throw new Error(`query_raw_memories answered ${value.status}`);
      return { total: ms, withoutEmbedding: ms - embedding };
    };
    const hybrid = { total: [] as number[], withoutEmbedding: [] as number[] };
    const semantic = { total: [] as number[], withoutEmbedding: [] as number[] };
    const chromaQuery: number[] = [];
    // The same query sent to Chroma's REST API over node:http, as memory-core sends its own: chromadb's client
    // costs more CPU per call, which the baseline above includes (docs/benchmarks.md, "memory-core latency": "the
    // calls every query makes go over node:http").
    const bareChroma = new JsonClient(new URL(stack.chromaUrl.origin), { timeoutMs: 60_000 });
    const queryPath = `${collectionPath(collection)}/query`;
    const chromaQueryHttp: number[] = [];
    for (const [i, query] of queries.entries()) {
      const token = tokens[i % tokens.length]!.token;
      for (const [mode, times] of [
        ["hybrid", hybrid],
        ["semantic", semantic],
      ] as const) {
        const { total, withoutEmbedding } = await search(query, token, mode);
        times.total.push(total);
        times.withoutEmbedding.push(withoutEmbedding);
      }
      const { ms } = await timed(() =>
        collection.query({ queryEmbeddings: [vectors[i]!], nResults: 10, include: ["documents", "metadatas", "distances"] as never }),
      );
      chromaQuery.push(ms);
      const bare = await timed(() =>
        bareChroma.post(queryPath, { query_embeddings: [vectors[i]!], n_results: 10, include: ["documents", "metadatas", "distances"] }),
      );
      chromaQueryHttp.push(bare.ms);
    }
    bareChroma.close();
    // 5. Filtered by one session or one agent, against Chroma filtering on the same field (and nothing else);
    // and get_session for the same sessions.
    const filtered = {
      session: [] as number[],
      agent: [] as number[],
      chromaSession: [] as number[],
      chromaAgent: [] as number[],
      getSession: [] as number[],
    };
    for (const [i, query] of queries.slice(0, 50).entries()) {
      const token = tokens[i % tokens.length]!.token;
      const session_id = `session-${(i * 37) % Number(values.sessions)}`;
      const agent = `agent-${i % agentCount}`;
      filtered.session.push((await search(query, token, "hybrid", { session_id })).withoutEmbedding);
      const listed = await timed(async () => (await get(`/v1/sessions/${session_id}`, token)).json() as Promise<{ turns: unknown[] }>);
      if (listed.value.turns.length === 0) throw new Error("get_session returned no turns");
      filtered.getSession.push(listed.ms);
      filtered.agent.push((await search(query, token, "hybrid", { agent })).withoutEmbedding);
      for (const [where, times] of [
        [{ session_id }, filtered.chromaSession],
        [{ agent }, filtered.chromaAgent],
      ] as const) {
        const { ms } = await timed(() =>
          collection.query({
            queryEmbeddings: [vectors[i]!],
            nResults: 10,
            where: where as never,
            include: ["documents", "metadatas", "distances"] as never,
          }),
        );
        times.push(ms);
      }
    }

    // The filter every default query carries, valid now (see QueryService.queryMemories), asked of Chroma itself;
    // in a loop of its own, since each of these slows the query that follows it.
    const chromaValidQuery: number[] = [];
    for (const vector of vectors.slice(0, 50)) {
      const now = Date.now();
      const where = { $and: [{ valid_until: { $gt: now } }, { valid_from: { $lte: now } }] } as never;
      const { ms } = await timed(() =>
        collection.query({ queryEmbeddings: [vector], nResults: 10, where, include: ["documents", "metadatas", "distances"] as never }),
      );
      chromaValidQuery.push(ms);
    }

    const report = {
      n,
      embedder: stack.model,
      records: n + samples,
      load_seconds: round(loadSeconds, 1),
      load_turns_per_second: round(n / loadSeconds, 1),
      ...(reuse ? { reused_load: true } : { add_memory_under_load: summarize(loadLatencies) }),
      add_memory: summarize(addTotal),
      add_memory_without_embedding: summarize(addWithoutEmbedding),
      query_recent_turns: summarize(recentFirst),
      query_recent_turns_next_page: summarize(recentNext),
      query_raw_memories: summarize(hybrid.total),
      query_raw_memories_without_embedding: summarize(hybrid.withoutEmbedding),
      query_raw_memories_semantic_without_embedding: summarize(semantic.withoutEmbedding),
      chroma_query: summarize(chromaQuery),
      chroma_query_over_http: summarize(chromaQueryHttp),
      chroma_query_valid_now: summarize(chromaValidQuery),
      query_raw_memories_one_session_without_embedding: summarize(filtered.session),
      chroma_query_where_session: summarize(filtered.chromaSession),
      query_raw_memories_one_agent_without_embedding: summarize(filtered.agent),
      chroma_query_where_agent: summarize(filtered.chromaAgent),
      get_session: summarize(filtered.getSession),
      ratio_raw_memories_to_chroma_p95: round(summarize(hybrid.withoutEmbedding).p95 / summarize(chromaQuery).p95),
      ratio_semantic_to_chroma_p95: round(summarize(semantic.withoutEmbedding).p95 / summarize(chromaQuery).p95),
      ratio_semantic_to_chroma_p50: round(summarize(semantic.withoutEmbedding).p50 / summarize(chromaQuery).p50),
      ratio_raw_memories_to_chroma_p50: round(summarize(hybrid.withoutEmbedding).p50 / summarize(chromaQuery).p50),
      ratio_raw_memories_to_chroma_over_http_p50: round(summarize(hybrid.withoutEmbedding).p50 / summarize(chromaQueryHttp).p50),
      ratio_raw_memories_to_chroma_over_http_p95: round(summarize(hybrid.withoutEmbedding).p95 / summarize(chromaQueryHttp).p95),
    };
    printTable(report);
    if (values.json) console.log(JSON.stringify(report));
  } finally {
    await stack.stop();
    await hashStub?.close();
    if (!kept) await rm(dataDir, { recursive: true, force: true });
  }
}

function printTable(report: Record<string, unknown>) {
  console.log(
    `memory-core benchmark: ${report.n} turns loaded through the API with ${report.embedder} (${report.load_turns_per_second} turns/s)`,
  );
  console.log("operation                               n      p50 ms   p95 ms");
  for (const [name, value] of Object.entries(report)) {
    if (value && typeof value === "object" && "p95" in value) {
      const s = value as Summary;
      console.log(`${name.padEnd(38)}${String(s.n).padStart(5)}${String(s.p50).padStart(10)}${String(s.p95).padStart(9)}`);
    }
  }
  console.log(`query_raw_memories hybrid (no embedding) p95 / chroma query p95 = ${report.ratio_raw_memories_to_chroma_p95}`);
  console.log(`query_raw_memories hybrid (no embedding) p50 / chroma query p50 = ${report.ratio_raw_memories_to_chroma_p50}`);
  console.log(`query_raw_memories semantic (no embedding) p95 / chroma query p95 = ${report.ratio_semantic_to_chroma_p95}`);
  console.log(
    `query_raw_memories hybrid (no embedding) against chroma query over plain HTTP: p50 ${report.ratio_raw_memories_to_chroma_over_http_p50}, p95 ${report.ratio_raw_memories_to_chroma_over_http_p95}`,
  );
}
