import { parseArgs } from "node:util";
import MiniSearch from "minisearch";
import { Bm25Index } from "../services/memory-core/src/lexical/bm25-index.js";
import { Ranking } from "../services/memory-core/src/lexical/ranking.js";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { SNAPSHOT_STRETCH } from "../services/memory-core/src/lexical/indexes.js";
import { RankingHost } from "../services/memory-core/src/lexical/ranking-host.js";
import { readSnapshot, writeSnapshot, type SnapshotHeader } from "../services/memory-core/src/lexical/snapshot.js";
import type { Condition } from "../services/memory-core/src/records/filters.js";
import { DEFAULT_TUNING } from "../services/memory-core/src/retrieval/retrieval-tuning.js";
import { tokenize, toTerm } from "../services/memory-core/src/lexical/text-analysis.js";
import { snippetText } from "../services/memory-core/src/lexical/snippets.js";
import { buildTurnRecord } from "../services/memory-core/src/records/turn-record.js";
import { turnOf } from "../services/memory-core/src/records/stored-turn.js";
import { corpus } from "./corpus.js";
import { prng, round, summarize } from "./stats.js";

/**
 * The lexical retriever alone, in process: memory-core's BM25 index against MiniSearch (what it replaced,
 * with the same scoring) over the same turns and queries, at each size asked. Query p50/p95 and the share
 * of top-k lists on which both agree. Then text analysis alone (`analysis`): what turning one text into its terms
 * costs, in microseconds per text, for the bench corpus's English turns and for texts in scripts written without
 * spaces, Russian, Arabic and code (`--analysis-texts` of each).
 *
 *   npm run bench -- lexical [--sizes 10000,100000] [--samples 200] [--limit 200] [--analysis-texts 20000] [--json]
 *
 * With `--snapshot FILE` it ranks a kept store's turns instead: a lexical snapshot (DIR/lexical/<workspace>/turns.snap
 * of `bench scale --data-dir DIR`) loaded into a ranking as memory-core's ranking thread holds it, then the bench's
 * queries asked as query_raw_memories asks them (the default tuning: feedback, turn context, the validity filter;
 * 10 hits), `--rounds` times; each round's p50/p95. The first round's first queries include one-time costs: the
 * query accumulators and the lookup tables of the terms first asked about.
 *
 *   npm run bench -- lexical --snapshot FILE [--samples 100] [--rounds 3] [--json]
 *
 * With `--write` as well, the snapshot is loaded into a ranking thread instead (memory-core's RankingHost), and
 * written again to a temporary file as memory-core's background pass writes it, while the queries are asked of
 * the thread one after another: their p50/p95 while it writes and after, and the longest and p99 delay of this
 * thread's event loop while it writes (what every other request waits for meanwhile).
 *
 *   npm run bench -- lexical --snapshot FILE --write [--samples 100] [--json]
 */
export async function benchLexical(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      sizes: { type: "string", default: "10000,100000" },
      samples: { type: "string", default: "200" },
      limit: { type: "string", default: "200" },
      "analysis-texts": { type: "string", default: "20000" },
      snapshot: { type: "string" },
      rounds: { type: "string", default: "3" },
      write: { type: "boolean", default: false },
      json: { type: "boolean", default: false },
    },
  });
  if (values.snapshot !== undefined && values.write) return benchSnapshotWrite(values.snapshot, Number(values.samples), values.json);
  if (values.snapshot !== undefined) return benchSnapshot(values.snapshot, Number(values.samples), Number(values.rounds), values.json);
  const samples = Number(values.samples);
  const limit = Number(values.limit);
  const boosts = DEFAULT_TUNING.turnFields;
  const queries = corpus(samples, { agents: 1, sessions: 1, seed: 99 }).map((t) => t.thought.split(".")[0]!);
  const reports = [];
  for (const size of values.sizes.split(",").map(Number)) {
    const turns = corpus(size, { agents: 20, sessions: 500 });
    const documents = turns.map((t, i) => ({
      id: `t${i}`,
      agent: t.agent,
      prompt: t.prompt,
      thought: t.thought,
      response: t.response,
      labels: "",
    }));

    const ours = new Bm25Index<string>(Object.keys(boosts), boosts, DEFAULT_TUNING.bm25);
    let start = performance.now();
    for (const { id, ...fields } of documents) ours.put(id, fields, id);
    const oursBuildMs = performance.now() - start;

    const mini = new MiniSearch({
      idField: "id",
      fields: Object.keys(boosts),
      tokenize,
      processTerm: toTerm,
      searchOptions: { boost: boosts, combineWith: "OR", bm25: DEFAULT_TUNING.bm25 },
    });
    start = performance.now();
    mini.addAll(documents);
    const miniBuildMs = performance.now() - start;

    // What a query costs memory-core's ranking thread (BM25, filter, turn context) at the default tuning.
    const lexical = new Ranking({ boosts, bm25: DEFAULT_TUNING.bm25, neighbourShare: DEFAULT_TUNING.neighbourShare });
    for (const [i, { id, ...fields }] of documents.entries()) {
      lexical.put({ id, fields, facts: { session_id: turns[i]!.session_id, valid_from: i } });
    }

    const oursMs: number[] = [];
    const miniMs: number[] = [];
    const lexicalMs: number[] = [];
    let agree = 0;
    for (const query of queries) {
      let t = performance.now();
      const a = ours.search(query, limit, () => true);
      oursMs.push(performance.now() - t);
      t = performance.now();
      const b = mini.search(query).slice(0, limit);
      miniMs.push(performance.now() - t);
      t = performance.now();
      lexical.query({ text: query, limit: 40, conditions: [] });
      lexicalMs.push(performance.now() - t);
      if (a.map((h) => h.id).join() === b.map((h) => String(h.id)).join()) agree += 1;
    }
    const report = {
      records: size,
      limit,
      build_ms: { ours: round(oursBuildMs), minisearch: round(miniBuildMs) },
      query_ms: { ours: summarize(oursMs), minisearch: summarize(miniMs), lexical_index_default: summarize(lexicalMs) },
      minisearch_to_ours_p95: round(summarize(miniMs).p95 / summarize(oursMs).p95, 1),
      same_top_k: round(agree / queries.length, 3),
    };
    reports.push(report);
    console.log(
      `${size} records: BM25 top-${limit} p50/p95 ${report.query_ms.ours.p50}/${report.query_ms.ours.p95} ms ` +
        `(MiniSearch ${report.query_ms.minisearch.p50}/${report.query_ms.minisearch.p95} ms, ${report.minisearch_to_ours_p95}x at p95); ` +
        `Ranking.query (turn context) ${report.query_ms.lexical_index_default.p50}/${report.query_ms.lexical_index_default.p95} ms; ` +
        `same top-${limit}: ${report.same_top_k}; build ${report.build_ms.ours} ms (MiniSearch ${report.build_ms.minisearch} ms)`,
    );
  }
  const analysis = analysisCost(Number(values["analysis-texts"]));
  for (const [set, cost] of Object.entries(analysis)) {
    console.log(`analysis, ${set}: ${cost.us_per_text} µs per text (${cost.chars_per_text} characters, ${cost.tokens_per_text} tokens)`);
  }
  const snippet = snippetCost(Number(values.samples));
  console.log(`snippets: ${snippet.us_per_hit} µs per hit (${snippet.hits} hits of ${snippet.chars_per_hit} characters)`);
  if (values.json) console.log(JSON.stringify({ sizes: reports, analysis, snippet }));
}

/**
 * What a brief hit's snippet costs (`snippetText`: the stretch of a turn's text that holds most of the query's
 * words, found on the request thread for every hit of query_raw_memories): `queries` bench queries, each over ten
 * bench-corpus turns stored as add_memory stores them.
 */
function snippetCost(queries: number) {
  const turns = corpus(queries * 10, { agents: 4, sessions: 50, seed: 11 });
  const records = turns.map((t, i) => {
    const built = buildTurnRecord({
      input: { session_id: t.session_id, prompt: t.prompt, thought: t.thought, response: t.response },
      agent: t.agent,
      idempotencyKey: `snippet-${i}`,
      recordedAt: Date.now(),
      seq: i,
      writeId: `w-${i}`,
      source: "agent",
    });
    return { id: `t${i}`, document: built.document, metadata: built.metadata };
  });
  const storedTurns = records.map(turnOf);
  const asked = corpus(queries, { agents: 1, sessions: 1, seed: 99 }).map((t) => t.thought.split(".")[0]!);
  const run = () => {
    for (let q = 0; q < asked.length; q++) for (let h = 0; h < 10; h++) snippetText(storedTurns[q * 10 + h]!, asked[q]!);
  };
  run(); // warm-up
  const start = performance.now();
  run();
  const us = ((performance.now() - start) * 1000) / records.length;
  const chars = records.reduce((sum, r) => sum + r.document.length, 0) / records.length;
  return { hits: records.length, us_per_hit: round(us, 1), chars_per_hit: round(chars, 0) };
}

/** Query p50/p95 over a kept store's lexical snapshot, round by round (see above). */
async function benchSnapshot(file: string, samples: number, rounds: number, json: boolean): Promise<void> {
  const tuning = DEFAULT_TUNING;
  const ranking = new Ranking({
    boosts: tuning.turnFields,
    bm25: tuning.bm25,
    neighbourShare: tuning.neighbourShare,
    feedback: tuning.feedback,
  });
  let records = 0;
  const started = performance.now();
  const read = await readSnapshot(
    file,
    () => undefined,
    (document) => {
      ranking.put(document);
      records += 1;
    },
  );
  if (!read.ok) throw new Error(`${file}: ${read.reason}`);
  const loadS = round((performance.now() - started) / 1000, 1);
  console.log(`${records} records loaded in ${loadS} s`);
  const queries = corpus(samples, { agents: 1, sessions: 1, seed: 99 }).map((t) => t.thought.split(".")[0]!);
  const at = Date.now();
  // What query_raw_memories asks by default: valid now.
  const conditions: Condition[] = [
    { field: "valid_until", op: "gt", value: at },
    { field: "valid_from", op: "lte", value: at },
  ];
  const byRound = [];
  for (let r = 0; r < rounds; r++) {
    const times: number[] = [];
    for (const text of queries) {
      const t = performance.now();
      ranking.query({ text, limit: 10, conditions });
      times.push(performance.now() - t);
    }
    const { p50, p95 } = summarize(times);
    byRound.push({ p50, p95 });
    console.log(`round ${r + 1}: p50 ${p50} ms, p95 ${p95} ms`);
  }
  if (json) console.log(JSON.stringify({ records, load_s: loadS, rounds: byRound }));
}

/** Queries to a ranking thread while it writes a snapshot, and this thread's event loop meanwhile (see above). */
async function benchSnapshotWrite(file: string, samples: number, json: boolean): Promise<void> {
  const tuning = DEFAULT_TUNING;
  const host = new RankingHost();
  const ranking = host.create({
    boosts: tuning.turnFields,
    bm25: tuning.bm25,
    neighbourShare: tuning.neighbourShare,
    feedback: tuning.feedback,
  });
  let header: SnapshotHeader | undefined;
  let records = 0;
  const read = await readSnapshot(
    file,
    (h) => {
      header = h;
      return undefined;
    },
    async (document) => {
      ranking.put(document);
      if (++records % SNAPSHOT_STRETCH === 0) await new Promise((resolve) => setImmediate(resolve));
    },
  );
  if (!read.ok || !header) throw new Error(`${file}: ${read.ok ? "no header" : read.reason}`);
  await ranking.prepare();
  console.log(`${records} records on the ranking thread`);
  const queries = corpus(samples, { agents: 1, sessions: 1, seed: 99 }).map((t) => t.thought.split(".")[0]!);
  const at = Date.now();
  const conditions: Condition[] = [
    { field: "valid_until", op: "gt", value: at },
    { field: "valid_from", op: "lte", value: at },
  ];
  /** Queries one after another while `more` says so of the count asked. */
  const ask = async (more: (asked: number) => boolean) => {
    const times: number[] = [];
    for (let i = 0; more(i); i++) {
      const t = performance.now();
      await ranking.query({ text: queries[i % queries.length]!, limit: 10, conditions });
      times.push(performance.now() - t);
    }
    return summarize(times);
  };
  await ask((n) => n < queries.length); // the accumulators and the terms' tables, once
  const dir = await mkdtemp(join(tmpdir(), "cairn-bench-snapshot-"));
  try {
    let done = false;
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    const started = performance.now();
    // What the file was written with, less what writeSnapshot sets itself.
    const { format: _format, records: _records, ...fields } = header;
    const writing = writeSnapshot(
      join(dir, "turns.snap"),
      fields,
      (async function* () {
        for (let from: number | undefined = 0; from !== undefined;) {
          const stretch = await ranking.dump(from, SNAPSHOT_STRETCH);
          yield stretch;
          from = stretch.next;
        }
      })(),
    ).finally(() => (done = true));
    const during = await ask((n) => n === 0 || !done);
    const written = await writing;
    const writeS = round((performance.now() - started) / 1000, 1);
    loop.disable();
    const after = await ask((n) => n < queries.length);
    const report = {
      records: written.records,
      bytes: written.bytes,
      write_s: writeS,
      query_during_write: { n: during.n, p50: during.p50, p95: during.p95 },
      query_after: { n: after.n, p50: after.p50, p95: after.p95 },
      event_loop_during_write_ms: { max: round(loop.max / 1e6, 1), p99: round(loop.percentile(99) / 1e6, 1) },
    };
    console.log(
      `written ${written.records} records in ${writeS} s; queries while writing p50 ${during.p50} p95 ${during.p95} ms (${during.n}), after p50 ${after.p50} p95 ${after.p95} ms; event loop while writing: longest ${report.event_loop_during_write_ms.max} ms, p99 ${report.event_loop_during_write_ms.p99} ms`,
    );
    if (json) console.log(JSON.stringify(report));
  } finally {
    await rm(dir, { recursive: true, force: true });
    await host.close();
  }
}

/** Sentences of the kinds of text that take the analyzer's other paths. */
const SCRIPT_SENTENCES = {
  chinese: [
    "我们决定把会话存到Redis里因为重启会丢失队列",
    "数据库迁移推迟到下周一",
    "登录测试在高负载下不稳定，重试了三次",
    "缓存层在部署后返回旧数据",
  ],
  japanese: ["データベースの移行を来週に延期します", "ログインのテストが高負荷で不安定です", "キャッシュの有効期限を五分に短縮しました"],
  thai: ["เราตัดสินใจเก็บเซสชันไว้ใน Redis เพราะการรีสตาร์ททำให้คิวหายไป", "การย้ายฐานข้อมูลเลื่อนไปสัปดาห์หน้า"],
  russian_arabic: [
    "Мы решили хранить сессии в Redis, потому что перезапуск теряет очередь",
    "قررنا تخزين الجلسات في ريديس لأن إعادة التشغيل تفقد الطابور",
  ],
  code: [
    "The HTTPServerError handler in src/authService.ts now rotates the refreshToken",
    "Renamed getUserById to findUserById and moved it to lib/users/repository.ts",
    "XMLHttpRequest polyfill broke the retryCount of the OrdersClient in PAY-8842",
  ],
};

/** Microseconds per text to turn texts into terms (tokenize, then toTerm on every token), per kind of text. */
function analysisCost(count: number) {
  const random = prng(7);
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const english = corpus(Math.ceil(count / 3), { agents: 4, sessions: 50, seed: 5 }).flatMap((t) => [t.prompt, t.thought, t.response]);
  const sets: Record<string, string[]> = { english_corpus: english.slice(0, count) };
  for (const [name, sentences] of Object.entries(SCRIPT_SENTENCES)) {
    sets[name] = Array.from({ length: count }, () => `${pick(sentences)} ${pick(sentences)}`);
  }
  const analyse = (text: string) => {
    let n = 0;
    for (const token of tokenize(text)) if (toTerm(token) !== null) n++;
    return n;
  };
  return Object.fromEntries(
    Object.entries(sets).map(([name, texts]) => {
      for (const text of texts.slice(0, 500)) analyse(text); // warm-up
      const start = performance.now();
      let tokens = 0;
      for (const text of texts) tokens += analyse(text);
      const us = ((performance.now() - start) * 1000) / texts.length;
      const chars = texts.reduce((sum, t) => sum + t.length, 0) / texts.length;
      return [name, { us_per_text: round(us, 2), chars_per_text: round(chars, 0), tokens_per_text: round(tokens / texts.length, 1) }];
    }),
  );
}
