import { parseArgs } from "node:util";
import MiniSearch from "minisearch";
import { Bm25Index } from "../services/memory-core/src/lexical/bm25-index.js";
import { Ranking } from "../services/memory-core/src/lexical/ranking.js";
import { DEFAULT_TUNING } from "../services/memory-core/src/retrieval/retrieval-tuning.js";
import { tokenize, toTerm } from "../services/memory-core/src/lexical/text-analysis.js";
import { corpus } from "./corpus.js";
import { round, summarize } from "./stats.js";

/**
 * The lexical retriever alone, in process: memory-core's BM25 index against MiniSearch (what it replaced,
 * with the same scoring) over the same turns and queries, at each size asked. Query p50/p95 and the share
 * of top-k lists on which both agree.
 *
 *   npm run bench -- lexical [--sizes 10000,100000] [--samples 200] [--limit 200] [--json]
 */
export async function benchLexical(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      sizes: { type: "string", default: "10000,100000" },
      samples: { type: "string", default: "200" },
      limit: { type: "string", default: "200" },
      json: { type: "boolean", default: false },
    },
  });
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
  if (values.json) console.log(JSON.stringify(reports));
}
