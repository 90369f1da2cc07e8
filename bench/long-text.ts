import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import yaml from "js-yaml";
import { newToken } from "../services/memory-core/src/auth/tokens.js";
import { Bm25Index } from "../services/memory-core/src/lexical/bm25-index.js";
import { tokenize } from "../services/memory-core/src/lexical/text-analysis.js";
import { snippetText } from "../services/memory-core/src/lexical/snippets.js";
import { writeAdvice } from "../services/memory-core/src/records/write-advice.js";
import { buildTurnRecord } from "../services/memory-core/src/records/turn-record.js";
import { turnOf, type StoredTurn } from "../services/memory-core/src/records/stored-turn.js";
import { startBenchServer } from "./bench-server.js";
import { prng, round, summarize } from "./stats.js";
import { startHashStub } from "./timed-embedder.js";

/**
 * Long texts (issue 34, items 2 and 7): what text analysis, a brief hit's snippet and the lexical index cost on
 * long runs without spaces and on unique junk words.
 *
 * - `tokenize`: milliseconds to analyse one run of each kind (Chinese, Thai, one unbroken Latin "word", English
 *   prose) at each size, the best of `--reps`, and the ratio to the size before (2 per doubling is linear, 4 is
 *   quadratic);
 * - `snippet`: milliseconds for one brief hit's text (snippetText) of a turn holding that much of each kind in each
 *   of its three fields;
 * - `advice`: milliseconds for a write's advice (writeAdvice, on the request thread of every add_memory) on a turn
 *   whose thought and response each hold that much of each kind (and of one unbroken number);
 * - `index`: the distinct terms one turn of three fields of unique junk words gives a lexical index, and the heap
 *   it grows by (heap and array buffers, after a collection; run with `node --expose-gc` for the heap);
 * - `stack` (unless `--no-stack`): memory-core in a process of its own with the hashing embeddings stub: a turn of
 *   `--stack-chars` unspaced Chinese characters per field is stored, then `query_raw_memories` brief and full are
 *   asked `--samples` times, and /healthz beside each brief query (its latency while the query runs).
 *
 *   npm run bench -- long-text [--sizes 1024,2048,4096,8192,16384,65536] [--reps 3] [--samples 5]
 *     [--stack-chars 16000] [--parts tokenize,snippet,advice,index,stack] [--no-stack] [--json]
 */
export async function benchLongText(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      sizes: { type: "string", default: "1024,2048,4096,8192,16384,65536" },
      reps: { type: "string", default: "3" },
      samples: { type: "string", default: "5" },
      "stack-chars": { type: "string", default: "16000" },
      parts: { type: "string", default: "tokenize,snippet,advice,index,stack" },
      "no-stack": { type: "boolean", default: false },
      json: { type: "boolean", default: false },
    },
  });
  const sizes = values.sizes.split(",").map(Number);
  const reps = Number(values.reps);
  const report: Record<string, unknown> = {};
  const parts = new Set(values.parts.split(","));
  if (values["no-stack"]) parts.delete("stack");

  const tokenizeRows: Array<Record<string, number | string>> = [];
  for (const [kind, make] of parts.has("tokenize") ? Object.entries(KINDS) : []) {
    let previous: number | undefined;
    for (const size of sizes) {
      const text = make(size, 1);
      const ms = best(reps, () => tokenize(text));
      tokenizeRows.push({ kind, chars: size, ms: round(ms, 2), ratio: previous ? round(ms / previous, 2) : "" });
      previous = ms;
      console.log(
        `tokenize ${kind} ${size}: ${round(ms, 2)} ms${tokenizeRows.at(-1)!.ratio === "" ? "" : ` (×${tokenizeRows.at(-1)!.ratio})`}`,
      );
    }
  }
  report.tokenize = tokenizeRows;

  const snippetRows: Array<Record<string, number | string>> = [];
  for (const [kind, make] of parts.has("snippet") ? Object.entries(KINDS) : []) {
    for (const size of sizes.filter((s) => s <= 32_768)) {
      const turn = record(make(size, 1), make(size, 2), make(size, 3));
      const ms = best(reps, () => snippetText(turn, "cache decision 缓存"));
      const bytes = Buffer.byteLength(snippetText(turn, "cache decision 缓存"));
      snippetRows.push({ kind, chars_per_field: size, ms: round(ms, 2), bytes });
      console.log(`snippet ${kind} 3×${size}: ${round(ms, 2)} ms, ${bytes} bytes`);
    }
  }
  report.snippet = snippetRows;

  const adviceRows: Array<Record<string, number | string>> = [];
  const adviceKinds: Record<string, (chars: number, seed: number) => string> = { ...KINDS, digits: (chars) => "7".repeat(chars) };
  for (const [kind, make] of parts.has("advice") ? Object.entries(adviceKinds) : []) {
    for (const size of sizes.filter((s) => s <= 32_768)) {
      const text = make(size, 1);
      const ms = best(reps, () => writeAdvice({ prompt: "Note the decision.", thought: text, response: text }));
      adviceRows.push({ kind, chars_per_field: size, ms: round(ms, 2) });
      console.log(`advice ${kind} 2×${size}: ${round(ms, 2)} ms`);
    }
  }
  report.advice = adviceRows;

  if (parts.has("index")) {
    report.index = junkIndex();
    console.log(`index: a turn of 3×32,768 characters of unique junk words: ${JSON.stringify(report.index)}`);
  }

  if (parts.has("stack")) report.stack = await stackFigures(Number(values["stack-chars"]), Number(values.samples));
  if (values.json) console.log(JSON.stringify(report));
}

/** Texts of each kind, `chars` long, drawn by a fixed sequence from `seed`. */
const CHINESE =
  "的一是不了人我在有他这为之大来以个中上们到说国和地也子时道出而要于就下得可你年生自会那后能对着事其里所去行过家十用发天如然";
const THAI = ["การ", "ตัดสินใจ", "เกี่ยวกับ", "แคช", "ของ", "เรา", "เก็บ", "เซสชัน", "ไว้", "ใน", "ระบบ", "ข้อมูล"];
const PROSE = "we kept the session in redis because restarts lost the queue and measured the cache before deciding".split(" ");
const KINDS: Record<string, (chars: number, seed: number) => string> = {
  chinese: (chars, seed) => drawn(chars, seed, (next) => CHINESE[Math.floor(next() * CHINESE.length)]!, ""),
  thai: (chars, seed) => drawn(chars, seed, (next) => THAI[Math.floor(next() * THAI.length)]!, ""),
  "latin-word": (chars, seed) => drawn(chars, seed, (next) => "abcdefghijklmnopqrstuvwxyz"[Math.floor(next() * 26)]!, ""),
  prose: (chars, seed) => drawn(chars, seed, (next) => PROSE[Math.floor(next() * PROSE.length)]!, " "),
};

function drawn(chars: number, seed: number, piece: (next: () => number) => string, between: string): string {
  const next = prng(seed);
  const parts: string[] = [];
  let length = 0;
  while (length < chars) {
    const p = piece(next);
    parts.push(p);
    length += p.length + between.length;
  }
  return parts.join(between).slice(0, chars);
}

function best(reps: number, run: () => unknown): number {
  let least = Number.POSITIVE_INFINITY;
  for (let i = 0; i < reps; i++) {
    const started = performance.now();
    run();
    least = Math.min(least, performance.now() - started);
  }
  return least;
}

function record(prompt: string, thought: string, response: string): StoredTurn {
  const built = buildTurnRecord({
    input: { session_id: "bench", prompt, thought, response },
    agent: "bench",
    idempotencyKey: "bench",
    recordedAt: Date.now(),
    seq: 1,
    writeId: "w-1",
    source: "agent",
  });
  return turnOf({ id: "t_bench", document: built.document, metadata: built.metadata });
}

/** One turn of unique junk words (base-36 numbers) in three fields of 32,768 characters, put in a turn-shaped index. */
function junkIndex() {
  const next = prng(34);
  const field = () => drawn(32_768, Math.floor(next() * 1e6), (n) => `j${Math.floor(n() * 36 ** 6).toString(36)}`, " ");
  const fields = { prompt: field(), thought: field(), response: field() };
  const gc = (globalThis as { gc?: () => void }).gc;
  const used = () => {
    gc?.();
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  const index = new Bm25Index<number>(["agent", "prompt", "thought", "response", "labels"], {}, { k: 1.2, b: 0.7, d: 0.5 });
  const before = used();
  index.put("t_junk", { agent: "bench", ...fields, labels: "" }, 1);
  const grown = used() - before;
  return { terms: index.stats().terms, heap_kb: gc ? round(grown / 1024, 0) : "run with --expose-gc" };
}

async function stackFigures(chars: number, samples: number) {
  const dataDir = await mkdtemp(join(tmpdir(), "cairn-bench-long-text-"));
  const token = newToken();
  const tokensFile = join(dataDir, "tokens.yaml");
  await writeFile(tokensFile, yaml.dump({ tokens: [{ token, workspace: "long-text", agent: "bench", role: "agent" }] }));
  const hashStub = await startHashStub();
  const stack = await startBenchServer({ dataDir, tokensFile, embedder: "hash", hashStubUrl: hashStub.baseUrl });
  const call = async (method: string, path: string, body?: unknown) => {
    const started = performance.now();
    const response = await fetch(new URL(path, stack.url), {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 200)}`);
    return { ms: performance.now() - started, text };
  };
  try {
    await call("POST", "/v1/memories", { session_id: "warm", prompt: "warm up", thought: "warm up", response: "warm up" });
    const chinese = KINDS.chinese!;
    const stored = await call("POST", "/v1/memories", {
      session_id: "long",
      prompt: `cache decision ${chinese(chars, 11)}`,
      thought: chinese(chars, 12),
      response: chinese(chars, 13),
    });
    console.log(`stack: stored a turn of 3×${chars} Chinese characters in ${round(stored.ms, 0)} ms`);
    const brief: number[] = [];
    const health: number[] = [];
    const full: number[] = [];
    let briefBytes = 0;
    for (let i = 0; i < samples; i++) {
      const query = call("POST", "/v1/memories/query", { query: "cache decision" });
      const healthz = call("GET", "/healthz");
      const [q, h] = await Promise.all([query, healthz]);
      brief.push(q.ms);
      health.push(h.ms);
      briefBytes = Buffer.byteLength(q.text);
      full.push((await call("POST", "/v1/memories/query", { query: "cache decision", detail: "full" })).ms);
    }
    const figures = {
      chars_per_field: chars,
      store_ms: round(stored.ms, 0),
      brief: summarize(brief),
      healthz_beside_brief: summarize(health),
      full: summarize(full),
      brief_answer_bytes: briefBytes,
    };
    console.log(`stack: ${JSON.stringify(figures)}`);
    return figures;
  } finally {
    await stack.stop();
    await hashStub.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}
