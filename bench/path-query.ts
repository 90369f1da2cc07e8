import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { adminAgents, keptStore } from "./kept-store.js";
import { requester, startBenchServer } from "./bench-server.js";
import { corpus } from "./corpus.js";
import { hookRunFigures, prng, round, summarize, timed, type HookRuns, runHook } from "./stats.js";
import { startHashStub } from "./timed-embedder.js";

const SERVICES = [
  "auth",
  "billing",
  "search",
  "ci",
  "payments",
  "notify",
  "export",
  "cache",
  "gateway",
  "migrations",
  "flags",
  "ratelimit",
];
const MODULES = ["api", "core", "db", "jobs", "http", "model", "util", "config"];
const FILES_PER_MODULE = 30;
/** The synthetic repository: services/<service>/src/<module>/file<k>.ts, 2,880 files. */
const FILE_COUNT = SERVICES.length * MODULES.length * FILES_PER_MODULE;

const fileAt = (index: number) => {
  const k = index % FILES_PER_MODULE;
  const module = MODULES[Math.floor(index / FILES_PER_MODULE) % MODULES.length]!;
  const service = SERVICES[Math.floor(index / (FILES_PER_MODULE * MODULES.length)) % SERVICES.length]!;
  return `services/${service}/src/${module}/file${k}.ts`;
};
/** Files by how often work touches them: a few hot files, a long tail (the index's cube skews towards the first files). */
const hotFile = (random: () => number) => Math.floor(FILE_COUNT * random() ** 3);

/**
 * `query_raw_memories` asked by path at N turns (issue 37): loads N corpus turns through `add_memories` (as `bench
 * scale` does: 20 agents, batches of 500, the hashing embeddings stub, memory-core in a process of its own), a
 * share of them (`--share`, default 0.3) citing one to four files of a synthetic repository of 2,880 files, most
 * of them in one folder, a few files cited often and most rarely. Then, query by query interleaved so that each
 * kind meets the same moments of a shared machine, p50/p95 and the mean number of hits of:
 *
 * - `plain`: a query alone (hybrid, limit 10), as `bench memory-core` asks;
 * - `paths_file`: `paths` alone, one file drawn as the load drew them (newest first, limit 10);
 * - `paths_and_query`: the same file and the query (and `_lexical`, `_semantic`: each retriever alone);
 * - `paths_folder`: `paths` alone, the file's folder (`services/<service>/src/<module>/`);
 * - `paths_uncited`: `paths` alone, a file no memory cites (what the edit hook asks most often).
 *
 * Beside each kind asked by path, its five slowest samples with the number of memories citing what they asked.
 *
 * With `--hook-samples K`, then the prompt hook (`cairn-load --hook prompt`) K times as a harness runs it, a child
 * process per prompt over the same store (each sample's query as the prompt): whole-process p50/p95, how often it spoke.
 *
 *   npm run bench -- path-query [--n 100000] [--share 0.3] [--samples 100] [--concurrency 2] [--hook-samples K] [--data-dir DIR] [--json]
 *
 * `--data-dir DIR` keeps the loaded store; a run over a store that holds the same N and share measures without
 * loading again.
 */
export async function benchPathQuery(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      n: { type: "string", default: "100000" },
      share: { type: "string", default: "0.3" },
      samples: { type: "string", default: "100" },
      concurrency: { type: "string", default: "2" },
      "hook-samples": { type: "string", default: "0" },
      "data-dir": { type: "string" },
      json: { type: "boolean", default: false },
    },
  });
  const n = Number(values.n);
  const share = Number(values.share);
  const samples = Number(values.samples);
  const concurrency = Number(values.concurrency);
  if (!Number.isInteger(n) || n < 100) throw new Error("--n is a whole number of turns, at least 100");
  if (!(share >= 0 && share <= 1)) throw new Error("--share is a fraction between 0 and 1");
  const log = (line: string) => process.stderr.write(`${line}\n`);

  const AGENTS = 20;
  const BATCH = 500;
  const store = await keptStore(values["data-dir"], { prefix: "cairn-bench-paths-", agents: adminAgents(AGENTS), workspace: "paths" });
  const { dataDir, tokensFile, tokens, tokenOf } = store;
  const marker = join(dataDir, "path-query-load.json");
  const shape = { n, share };
  const previous = await readFile(marker, "utf8").then(
    (text) => JSON.parse(text) as { shape: typeof shape; load_s: number },
    () => undefined,
  );
  const reuse = previous !== undefined && JSON.stringify(previous.shape) === JSON.stringify(shape);

  const hashStub = await startHashStub();
  const stack = await startBenchServer({ dataDir, tokensFile, embedder: "hash", hashStubUrl: hashStub.baseUrl });
  const request = requester(() => stack.url);

  try {
    // 1. The load: corpus turns, a share of them citing files, in batches of one agent's turns. The same turns in
    // every run (seeded), so a run over a kept store knows how many memories cite each file without loading.
    let loadS = previous?.load_s ?? 0;
    const random = prng(37);
    const turns = corpus(n, { agents: AGENTS, sessions: Math.max(1, Math.floor(n / 25)), seed: 1037 });
    const byAgent = new Map<string, object[]>();
    const batches: Array<{ agent: string; memories: object[] }> = [];
    /** How many memories cite each file, and each folder (by any file in it). */
    const citing = new Map<string, number>();
    let cited = 0;
    for (const [i, { agent, ...turn }] of turns.entries()) {
      const memory: Record<string, unknown> = { ...turn, idempotency_key: `paths-${i}` };
      if (random() < share) {
        cited++;
        const first = hotFile(random);
        const count = 1 + Math.floor(random() * 4);
        // Work mostly touches neighbours: the other files of the first one's module.
        const base = first - (first % FILES_PER_MODULE);
        const files = new Set([fileAt(first)]);
        while (files.size < count) files.add(fileAt(base + Math.floor(random() * FILES_PER_MODULE)));
        memory.code = {
          repository: "acme/shop",
          branch: "main",
          commit: (i * 2654435761).toString(16).padStart(12, "0").slice(-12),
          paths: [...files].map((path) => ({ path })),
        };
        for (const file of files) citing.set(file, (citing.get(file) ?? 0) + 1);
        const folder = fileAt(first).slice(0, fileAt(first).lastIndexOf("/") + 1);
        citing.set(folder, (citing.get(folder) ?? 0) + 1);
      }
      const list = byAgent.get(agent) ?? [];
      list.push(memory);
      if (list.length === BATCH) {
        batches.push({ agent, memories: list });
        byAgent.set(agent, []);
      } else byAgent.set(agent, list);
    }
    for (const [agent, list] of byAgent) if (list.length > 0) batches.push({ agent, memories: list });
    if (reuse) log(`reusing the load of ${n} turns in ${dataDir}`);
    else {
      let next = 0;
      let done = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < batches.length) {
            const batch = batches[next++]!;
            await request("POST", "/v1/memories/batch", tokenOf.get(batch.agent)!, { memories: batch.memories });
            const before = done;
            done += batch.memories.length;
            if (Math.floor(done / 10_000) > Math.floor(before / 10_000))
              log(`loaded ${done}/${n} turns (${round(done / ((performance.now() - started) / 1000), 1)} turns/s)`);
          }
        }),
      );
      loadS = (performance.now() - started) / 1000;
      if (store.kept) await writeFile(marker, JSON.stringify({ shape, load_s: loadS }));
    }

    // 2. The queries, interleaved: each sample asks every kind once, in the same order.
    const pick = prng(99);
    const queries = corpus(samples, { agents: 1, sessions: 1, seed: 99 }).map((t) => t.thought.split(".")[0]!);
    const kinds = [
      "plain",
      "paths_file",
      "paths_and_query",
      "paths_and_query_lexical",
      "paths_and_query_semantic",
      "paths_folder",
      "paths_uncited",
    ] as const;
    const times = Object.fromEntries(kinds.map((k) => [k, [] as number[]])) as Record<(typeof kinds)[number], number[]>;
    const hits = Object.fromEntries(kinds.map((k) => [k, 0])) as Record<(typeof kinds)[number], number>;
    /** Per kind, each sample's time beside how many memories cite what it asked. */
    const asked = Object.fromEntries(kinds.map((k) => [k, [] as Array<{ ms: number; citing: number }>])) as Record<
      (typeof kinds)[number],
      Array<{ ms: number; citing: number }>
    >;
    // A first query of each kind, untimed: the lexical index catches up on the load, the path index is read.
    const warm = fileAt(0);
    for (const body of [{ query: queries[0] }, { paths: [warm] }, { paths: [warm], query: queries[0] }, { paths: ["services/auth/"] }]) {
      await request("POST", "/v1/memories/query", tokens[0]!.token, { limit: 10, ...body });
    }
    for (let i = 0; i < samples; i++) {
      const token = tokens[i % AGENTS]!.token;
      const file = fileAt(hotFile(pick));
      const folder = file.slice(0, file.lastIndexOf("/") + 1);
      const bodies: Record<(typeof kinds)[number], object> = {
        plain: { query: queries[i]! },
        paths_file: { paths: [file] },
        paths_and_query: { paths: [file], query: queries[i]! },
        paths_and_query_lexical: { paths: [file], query: queries[i]!, mode: "lexical" },
        paths_and_query_semantic: { paths: [file], query: queries[i]!, mode: "semantic" },
        paths_folder: { paths: [folder] },
        paths_uncited: { paths: [`services/${SERVICES[i % SERVICES.length]}/src/never/cited${i}.ts`] },
      };
      for (const kind of kinds) {
        const { ms, value } = await timed(() => request("POST", "/v1/memories/query", token, { limit: 10, ...bodies[kind] }));
        times[kind].push(ms);
        const path = (bodies[kind] as { paths?: string[] }).paths?.[0];
        asked[kind].push({ ms, citing: path === undefined ? 0 : (citing.get(path) ?? 0) });
        hits[kind] += (JSON.parse(value) as { hits: unknown[] }).hits.length;
      }
    }
    const figures = Object.fromEntries(
      kinds.map((kind) => {
        const s = summarize(times[kind]);
        const slowest = [...asked[kind]].sort((a, b) => b.ms - a.ms).slice(0, 5);
        return [
          kind,
          {
            p50_ms: round(s.p50, 1),
            p95_ms: round(s.p95, 1),
            mean_hits: round(hits[kind] / samples, 1),
            ...(kind === "plain" ? {} : { slowest: slowest.map((x) => `${round(x.ms, 0)} ms, ${x.citing} citing`) }),
          },
        ];
      }),
    );
    // 3. The prompt hook as a harness runs it over this store: a child process per prompt, its JSON on stdin.
    const hookSamples = Number(values["hook-samples"]);
    const hook: HookRuns = { runs: 0, spoke: 0, ms: [], bytes: [] };
    for (let i = 0; i < hookSamples; i++) {
      const { ms, stdout } = await promptHookRun(stack.url, tokens[i % AGENTS]!.token, queries[i % queries.length]!);
      hook.runs++;
      hook.ms.push(ms);
      if (stdout.length > 0) {
        hook.spoke++;
        hook.bytes.push(Buffer.byteLength(stdout));
      }
    }
    const hookFigures = hookSamples > 0 ? { prompt_hook: hookRunFigures(hook) } : {};
    if (!values.json && hookSamples > 0) log(`prompt_hook      ${JSON.stringify(hookFigures.prompt_hook)}`);
    const report = {
      n,
      share,
      cited_turns: cited,
      ...(reuse ? {} : { load_turns_per_s: round(n / loadS, 1) }),
      ...figures,
      ...hookFigures,
    };
    if (!values.json) {
      for (const [kind, r] of Object.entries(figures))
        log(`${kind.padEnd(16)} p50 ${r.p50_ms} ms  p95 ${r.p95_ms} ms  hits ${r.mean_hits}`);
    }
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } finally {
    await stack.stop().catch(() => undefined);
    await hashStub.close();
    await store.dispose();
  }
}

/** The prompt hook over the bench's store, a sample's query as the prompt. */
const promptHookRun = (url: URL, token: string, prompt: string) =>
  runHook("prompt", JSON.stringify({ session_id: "bench", hook_event_name: "UserPromptSubmit", prompt }), {
    env: { PATH: process.env.PATH ?? "", CAIRN_URL: url.origin, CAIRN_TOKEN: token },
  });
