import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import yaml from "js-yaml";
import { newToken } from "../services/memory-core/src/auth/tokens.js";
import { loadConfig } from "../services/memory-core/src/config.js";
import { silentLogger } from "../services/memory-core/src/logger.js";
import { startStack } from "../services/memory-core/src/stack.js";
import { benchEmbeddings } from "./timed-embedder.js";

/**
 * Questions in other words than the memory they ask for, and questions about nothing stored
 * (bench/fixtures/paraphrase/paraphrase.json): every memory of the file is written through the public API into a
 * fresh store, then each question is asked through query_raw_memories (`limit: 10`) in each mode. Reported per
 * group (`tuning`: written before the confidence rule was fixed; `held-out`: after) and per half (paired,
 * unrelated): recall@1 and @5 and MRR of the asked memory; the confidence of the response and of the asked
 * memory's hit (hybrid); for the unrelated ones, the response's confidence and how many answer no hit at
 * `min_confidence: low` (the budget: confidence `none` and no hits).
 *
 *   npm run bench -- paraphrase [--file FILE] [--json] [--embeddings-url URL --embeddings-model NAME]
 */

interface Fixture {
  memories: Array<{ id: string; group: string; prompt: string; thought: string; response: string }>;
  questions: Array<{ group: string; question: string; memory: string | null }>;
}
interface Answer {
  id: string;
  confidence: string;
  hits: Array<{ confidence: string; matched_by: string[]; memory: { id: string } }>;
}

const MODES = ["hybrid", "lexical", "semantic"] as const;
const LEVELS = ["high", "medium", "low", "none"] as const;

export async function benchParaphrase(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      file: { type: "string", default: join(import.meta.dirname, "fixtures/paraphrase/paraphrase.json") },
      json: { type: "boolean", default: false },
      "embeddings-url": { type: "string" },
      "embeddings-model": { type: "string" },
    },
  });
  const fixture = JSON.parse(await readFile(values.file!, "utf8")) as Fixture;
  const embeddings = benchEmbeddings(values["embeddings-url"], values["embeddings-model"]);
  const embeddingsEnv =
    embeddings.kind === "openai"
      ? { CAIRN_EMBEDDINGS: "openai", CAIRN_EMBEDDINGS_BASE_URL: embeddings.baseUrl, CAIRN_EMBEDDINGS_MODEL: embeddings.model }
      : {};
  const dataDir = await mkdtemp(join(tmpdir(), "cairn-paraphrase-"));
  const token = newToken();
  const tokensFile = join(dataDir, "tokens.yaml");
  await writeFile(tokensFile, yaml.dump({ tokens: [{ token, workspace: "paraphrase", agent: "dev", role: "agent" }] }));
  const stack = await startStack({
    config: loadConfig({ CAIRN_DATA_DIR: dataDir, CAIRN_PORT: "0", CAIRN_TOKENS_FILE: tokensFile, ...embeddingsEnv }),
    log: silentLogger,
  });
  const post = async (path: string, body: unknown) => {
    const response = await fetch(new URL(path, stack.url), {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const json = (await response.json()) as Answer;
    if (!response.ok) throw new Error(`${path} answered ${response.status}: ${JSON.stringify(json)}`);
    return json;
  };
  try {
    // Each memory in a session of its own, so that turn context links none of them.
    const idOf = new Map<string, string>();
    for (const m of fixture.memories) {
      const written = await post("/v1/memories", {
        session_id: `paraphrase-${m.id}`,
        prompt: m.prompt,
        thought: m.thought,
        response: m.response,
      });
      idOf.set(m.id, written.id);
    }
    const groups = [...new Set(fixture.questions.map((q) => q.group))];
    const report: Record<string, unknown> = {};
    for (const group of groups) {
      for (const paired of [true, false]) {
        const questions = fixture.questions.filter((q) => q.group === group && (q.memory !== null) === paired);
        if (questions.length === 0) continue;
        const rows: Record<string, unknown> = { n: questions.length };
        if (paired) {
          for (const mode of MODES) {
            const ranks: number[] = [];
            const responseConfidence = new Map<string, number>();
            const hitConfidence = new Map<string, number>();
            for (const q of questions) {
              const res = await post("/v1/memories/query", { query: q.question, limit: 10, mode });
              const at = res.hits.findIndex((h) => h.memory.id === idOf.get(q.memory!));
              ranks.push(at + 1);
              bump(responseConfidence, res.confidence);
              bump(hitConfidence, at >= 0 ? res.hits[at]!.confidence : "not found");
            }
            rows[mode] = {
              recall_at_1: share(ranks.filter((r) => r === 1).length, ranks.length),
              recall_at_5: share(ranks.filter((r) => r >= 1 && r <= 5).length, ranks.length),
              mrr: share(
                ranks.reduce((s, r) => s + (r > 0 ? 1 / r : 0), 0),
                ranks.length,
              ),
              ...(mode === "hybrid"
                ? { response_confidence: Object.fromEntries(responseConfidence), hit_confidence: Object.fromEntries(hitConfidence) }
                : {}),
            };
          }
        } else {
          const responseConfidence = new Map<string, number>();
          let silent = 0;
          for (const q of questions) {
            bump(responseConfidence, (await post("/v1/memories/query", { query: q.question, limit: 10 })).confidence);
            if ((await post("/v1/memories/query", { query: q.question, limit: 10, min_confidence: "low" })).hits.length === 0) silent++;
          }
          rows.hybrid = { response_confidence: Object.fromEntries(responseConfidence), no_hits_at_low: share(silent, questions.length) };
        }
        report[`${group} ${paired ? "paired" : "unrelated"}`] = rows;
      }
    }
    print(report);
    if (values.json) console.log(JSON.stringify(report));
  } finally {
    await stack.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

function print(report: Record<string, unknown>) {
  const dist = (m: Record<string, number> | undefined) => [...LEVELS, "not found"].map((c) => `${c} ${m?.[c] ?? 0}`).join(", ");
  for (const [name, value] of Object.entries(report)) {
    const rows = value as Record<string, Record<string, unknown>> & { n: number };
    console.log(`${name} (${rows.n} questions)`);
    for (const mode of MODES) {
      const r = rows[mode];
      if (!r) continue;
      if (r.recall_at_5 !== undefined)
        console.log(`  ${mode.padEnd(9)} R@1 ${fmt(r.recall_at_1)}  R@5 ${fmt(r.recall_at_5)}  MRR ${fmt(r.mrr)}`);
      if (r.response_confidence)
        console.log(`  ${mode.padEnd(9)} response confidence: ${dist(r.response_confidence as Record<string, number>)}`);
      if (r.hit_confidence) console.log(`  ${mode.padEnd(9)} asked memory's hit:  ${dist(r.hit_confidence as Record<string, number>)}`);
      if (r.no_hits_at_low !== undefined) console.log(`  ${mode.padEnd(9)} no hits at min_confidence low: ${fmt(r.no_hits_at_low)}`);
    }
  }
}

const fmt = (v: unknown) => (v as number).toFixed(3);
const share = (n: number, of: number) => Math.round((n / Math.max(1, of)) * 1000) / 1000;
function bump(counts: Map<string, number>, key: string) {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}
