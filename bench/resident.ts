import { fork } from "node:child_process";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import { ChromaClient } from "chromadb";
import yaml from "js-yaml";
import { startEmbeddedChroma } from "../services/memory-core/src/embedded/chroma-server.js";
import { Bm25Index } from "../services/memory-core/src/lexical/bm25-index.js";
import { CollectionIndex } from "../services/memory-core/src/lexical/collection-index.js";
import type { RankingHandle } from "../services/memory-core/src/lexical/ranking-host.js";
import { Ranking } from "../services/memory-core/src/lexical/ranking.js";
import { turnId } from "../services/memory-core/src/records/ids.js";
import { buildTurnRecord } from "../services/memory-core/src/records/turn-record.js";
import { textOf, turnOf } from "../services/memory-core/src/records/stored-turn.js";
import { DEFAULT_TUNING } from "../services/memory-core/src/retrieval/retrieval-tuning.js";
import type { Metadata } from "../services/memory-core/src/store/chroma-store.js";
import { corpus } from "./corpus.js";
import type { Ready } from "./memory-core-server.js";
import { startHashStub, timedEmbedder } from "./timed-embedder.js";

/**
 * What memory-core holds per turn (issue 20; docs/benchmarks.md, "Resident size per turn").
 *
 *   npm run bench -- resident --n 50000 [--cite K]
 *     In this process, the lexical side built from N bench-corpus
 *     turns shaped as add_memory stores them: bytes per turn (V8 heap and typed arrays, after full GCs) of the
 *     BM25 index alone, of everything the ranking thread holds, and of what the main thread holds. With --cite,
 *     each turn cites 1..K code paths of a repository of 2,000 files in 200 folders, as imported history does.
 *   npm run bench -- resident --data-dir DIR [--grow N --prefix P]
 *     DIR is a store kept by `bench memory-core --embedder hash --data-dir DIR`. With --grow, first adds N
 *     bench-corpus turns straight into its `turns` collection (hash vectors; not through the API, so no feed
 *     or recency entries: only the lexical index's build from Chroma reads them). Then starts memory-core over
 *     DIR in a process of its own, as `bench memory-core` does, and prints its resident size at start, after a
 *     first hybrid query and after 100 more. The slope between two stores is the figure.
 */
export async function benchResident(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      n: { type: "string", default: "50000" },
      "data-dir": { type: "string" },
      grow: { type: "string" },
      prefix: { type: "string", default: "grown" },
      cite: { type: "string", default: "0" },
    },
  });
  const dataDir = values["data-dir"];
  if (!dataDir) return inProcess(Number(values.n), Number(values.cite));
  if (values.grow) await grow(dataDir, Number(values.grow), values.prefix);
  await serverResident(dataDir);
}

/** A full GC on demand, without --expose-gc on the command line. */
let collect: (() => void) | undefined;
const gc = () => {
  if (!collect) {
    v8.setFlagsFromString("--expose-gc");
    collect = runInNewContext("gc") as () => void;
  }
  for (let i = 0; i < 4; i++) collect();
};
const used = () => {
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
};

/** Metadata the main thread leaves out of what the ranking thread gets (collection-index.ts). */
const UNFILTERED = new Set(["payload_sha256", "idempotency_key", "write_id", "tags", "refs", "code", "checks", "supersedes"]);

/** 1..`most` paths of a repository of 2,000 files in 200 folders (two levels deep), the same for the same turn. */
function citedPaths(i: number, most: number): string[] {
  const count = 1 + ((i * 7919) % most);
  return Array.from({ length: count }, (_, k) => {
    const file = (i * 31 + k * 977) % 2000;
    const folder = file % 200;
    return `services/part-${folder % 20}/src/module-${folder}/file-${file}.ts`;
  });
}

function turnRecords(n: number, options: { prefix: string; seed: number; sessions: number; cite?: number }) {
  return corpus(n, { agents: 10, sessions: options.sessions, seed: options.seed }).map(({ agent, ...input }, i) => {
    const key = `${options.prefix}-${i}`;
    const code = options.cite ? { code: { paths: citedPaths(i, options.cite).map((path) => ({ path })) } } : {};
    const { document, metadata } = buildTurnRecord({
      input: { ...input, session_id: `${options.prefix}-${input.session_id}`, ...code },
      agent,
      idempotencyKey: key,
      recordedAt: 1.7e12 + i * 1000,
      source: "agent",
      seq: i,
      writeId: `w_${key}`,
    });
    return { id: turnId(agent, key), document, metadata };
  });
}

function inProcess(n: number, cite: number): void {
  // As Chroma's JSON hands records over: serialized once, parsed afresh for each part measured.
  const json = turnRecords(n, { prefix: "bench", seed: 42, sessions: 500, cite }).map((r) => JSON.stringify(r));
  const parsed = (s: string) => {
    const record = JSON.parse(s) as { id: string; document: string; metadata: Metadata };
    const turn = turnOf(record);
    const labels = [...turn.tags, ...turn.refs].join(" ");
    const facts: Metadata = {};
    for (const [k, v] of Object.entries(record.metadata)) if (!UNFILTERED.has(k)) facts[k] = v;
    return { record, fields: { agent: turn.agent, ...textOf(turn), labels }, facts };
  };
  const tuning = DEFAULT_TUNING;
  const queries = ["race between two writers in the billing worker", "timeout too short cold starts", "memory leak connection pool"];
  const kept: unknown[] = [];
  const perTurn: Record<string, number> = {};
  const measure = (name: string, build: () => unknown) => {
    const before = used();
    kept.push(build());
    perTurn[name] = Math.round((used() - before) / n);
  };
  measure("bm25_index", () => {
    const index = new Bm25Index(Object.keys(tuning.turnFields), tuning.turnFields, tuning.bm25);
    for (const s of json) {
      const d = parsed(s);
      index.put(d.record.id, d.fields, 0);
    }
    for (const q of queries) index.search(q, 40, () => true);
    return index;
  });
  measure("ranking_thread", () => {
    const ranking = new Ranking({
      boosts: tuning.turnFields,
      bm25: tuning.bm25,
      neighbourShare: tuning.neighbourShare,
      feedback: tuning.feedback,
    });
    for (const s of json) {
      const d = parsed(s);
      ranking.put({ id: d.record.id, fields: d.fields, facts: d.facts });
    }
    for (const q of queries) ranking.query({ text: q, limit: 40, conditions: [] });
    return ranking;
  });
  measure("main_thread", () => {
    const nowhere: RankingHandle = {
      alive: true,
      put() {},
      remove() {},
      query: () => Promise.resolve([]),
      dump: () => Promise.resolve({ lines: new Uint8Array(), records: 0, next: undefined }),
      stats: () => Promise.resolve(undefined),
      prepare: () => Promise.resolve(undefined),
      drop() {},
    };
    const index = new CollectionIndex(nowhere, ["agent", "session_id", "kind", "check_status", "review_state"]);
    for (const s of json) {
      const d = parsed(s);
      index.put({ id: d.record.id, fields: d.fields, metadata: d.record.metadata });
    }
    return index;
  });
  console.log(JSON.stringify({ n, cite, bytes_per_turn: perTurn }));
}

async function grow(dataDir: string, n: number, prefix: string): Promise<void> {
  const stub = await startHashStub();
  const embedding = await timedEmbedder("hash", { hashStubUrl: stub.baseUrl });
  const chroma = await startEmbeddedChroma({ path: `${dataDir}/chroma`, logFile: `${dataDir}/logs/chroma.log` });
  try {
    const client = new ChromaClient({ host: chroma.url.hostname, port: Number(chroma.url.port), database: "bench" });
    const turns = await client.getCollection({ name: "turns" });
    const records = turnRecords(n, { prefix, seed: 1234, sessions: 5000 });
    for (let i = 0; i < records.length; i += 500) {
      const batch = records.slice(i, i + 500);
      await turns.add({
        ids: batch.map((r) => r.id),
        documents: batch.map((r) => r.document),
        metadatas: batch.map((r) => r.metadata),
        embeddings: await embedding.inner.embed(batch.map((r) => r.document)),
      });
    }
    process.stderr.write(`the store holds ${await turns.count()} turns\n`);
  } finally {
    await chroma.stop();
    await embedding.close();
    await stub.close();
  }
}

async function serverResident(dataDir: string): Promise<void> {
  const stub = await startHashStub();
  const tokensFile = `${dataDir}/tokens.yaml`;
  const { tokens } = yaml.load(await readFile(tokensFile, "utf8")) as { tokens: Array<{ token: string }> };
  const server = fork(
    fileURLToPath(new URL("./memory-core-server.ts", import.meta.url)),
    [JSON.stringify({ dataDir, tokensFile, embedder: "hash", hashStubUrl: stub.baseUrl })],
    { execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] },
  );
  try {
    const ready = await new Promise<Ready>((resolve) => server.on("message", (m: Ready) => m.type === "ready" && resolve(m)));
    const residentMb = async () => Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${server.pid}/status`, "utf8"))![1]) / 1024;
    const ask = async (query: string) => {
      const response = await fetch(new URL("/v1/memories/query", ready.url), {
        method: "POST",
        headers: { authorization: `Bearer ${tokens[0]!.token}`, "content-type": "application/json" },
        body: JSON.stringify({ query, limit: 10, mode: "hybrid" }),
      });
      if (response.status !== 200) throw new Error(`query_raw_memories answered ${response.status}`);
      await response.arrayBuffer();
    };
    const queries = corpus(101, { agents: 1, sessions: 1, seed: 99 }).map((t) => t.thought.split(".")[0]!);
    const report: Record<string, number> = { start_mb: await residentMb() };
    await ask(queries[0]!);
    report.after_first_query_mb = await residentMb();
    for (const q of queries.slice(1)) await ask(q);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    report.after_100_queries_mb = await residentMb();
    console.log(JSON.stringify(report));
  } finally {
    server.send({ id: 0, type: "stop" });
    await new Promise((resolve) => server.once("exit", resolve));
    await stub.close();
  }
}
