import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import yaml from "js-yaml";
import { newToken } from "../services/memory-core/src/auth/tokens.js";
import { loadConfig } from "../services/memory-core/src/config.js";
import { silentLogger } from "../services/memory-core/src/logger.js";
import { startStack } from "../services/memory-core/src/stack.js";
import {
  agentOf,
  bump,
  CATEGORIES,
  evidenceOf,
  foreignQuestions,
  importWrites,
  isAnswerable,
  mean,
  noneRate,
  score,
  workspaceOf,
  type Conversation,
  type Score,
} from "./locomo-data.js";
import { percentile, round } from "./stats.js";
import { benchEmbeddings } from "./timed-embedder.js";

/**
 * Retrieval quality on LoCoMo (Maharana et al., ACL 2024): each conversation is imported into its own
 * workspace through the public API, then every question of categories 1-4 is asked through
 * query_raw_memories and its hits are scored against the annotated evidence turns — for dense only,
 * lexical only and hybrid, side by side. Category 5 (adversarial: not answerable) shows the confidence.
 * Refusal: each workspace is also asked a sample of the other conversations' questions (foreignQuestions);
 * `refusal` reports the share of those answered `none`, and of the workspace's own answerable questions.
 * `response_bytes_p50`: the median byte size of a query_raw_memories response's JSON text, over every query
 * the bench makes.
 *
 *   npm run bench -- locomo --data ../shared/bench/locomo/locomo-dev.json [--json] [--conversations N] [--data-dir DIR]
 *     [--embeddings-url URL --embeddings-model NAME]
 *
 * The embedder is the default (`local`) unless `--embeddings-url` names an OpenAI-compatible `/v1/embeddings` server
 * on this machine, which then embeds as `CAIRN_EMBEDDINGS=openai` with `--embeddings-model`.
 */

const MODES = ["semantic", "lexical", "hybrid"] as const;
type Mode = (typeof MODES)[number];
/** The fields this harness reads from memory-core's answers: a written memory's id, a query's confidence and hits. */
interface Answer {
  id: string;
  confidence: string;
  hits: { memory: { id: string } }[];
}

export async function benchLocomo(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      data: { type: "string" },
      json: { type: "boolean", default: false },
      conversations: { type: "string" },
      concurrency: { type: "string", default: "4" },
      "data-dir": { type: "string" },
      "embeddings-url": { type: "string" },
      "embeddings-model": { type: "string" },
    },
  });
  if (!values.data) throw new Error("--data FILE is required (a LoCoMo-format JSON file)");
  const embeddings = benchEmbeddings(values["embeddings-url"], values["embeddings-model"]);
  const embeddingsEnv =
    embeddings.kind === "openai"
      ? { CAIRN_EMBEDDINGS: "openai", CAIRN_EMBEDDINGS_BASE_URL: embeddings.baseUrl, CAIRN_EMBEDDINGS_MODEL: embeddings.model }
      : {};
  const started = performance.now();
  let conversations = JSON.parse(await readFile(values.data, "utf8")) as Conversation[];
  if (values.conversations) conversations = conversations.slice(0, Number(values.conversations));
  const log = (line: string) => process.stderr.write(`${line}\n`);

  // A kept data dir makes a second run skip the embedding work: imports are idempotent.
  const dataDir = values["data-dir"] ?? (await mkdtemp(join(tmpdir(), "cairn-locomo-")));
  await mkdir(dataDir, { recursive: true });
  const tokens = new Map<string, string>(); // `${workspace}/${speaker}` → token
  const entries = [];
  for (const c of conversations) {
    for (const speaker of [c.speaker_a, c.speaker_b] as string[]) {
      const token = newToken();
      tokens.set(`${workspaceOf(c)}/${agentOf(speaker)}`, token);
      entries.push({ token, workspace: workspaceOf(c), agent: agentOf(speaker), role: "agent" });
    }
  }
  const tokensFile = join(dataDir, "tokens.yaml");
  await writeFile(tokensFile, yaml.dump({ tokens: entries }));
  const stack = await startStack({
    config: loadConfig({ CAIRN_DATA_DIR: dataDir, CAIRN_PORT: "0", CAIRN_TOKENS_FILE: tokensFile, ...embeddingsEnv }),
    log: silentLogger,
  });
  const responseBytes: number[] = [];
  /** The dialog turn each stored memory was imported from (its `dia_id`, also kept as its first ref). */
  const diaOf = new Map<string, string>();
  const post = async (path: string, token: string, body: unknown) => {
    const response = await fetch(new URL(path, stack.url), {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (path === "/v1/memories/query") responseBytes.push(Buffer.byteLength(text));
    const json = JSON.parse(text) as Answer;
    if (!response.ok) throw new Error(`${path} answered ${response.status}: ${JSON.stringify(json)}`);
    return json;
  };

  try {
    // 1. Import every dialog turn as a memory.
    let imported = 0;
    for (const c of conversations) {
      const writes = importWrites(c);
      let next = 0;
      await Promise.all(
        Array.from({ length: Number(values.concurrency) }, async () => {
          while (next < writes.length) {
            const write = writes[next++]!;
            const written = await post("/v1/memories", tokens.get(`${workspaceOf(c)}/${write.agent}`)!, write.body);
            diaOf.set(written.id, (write.body.refs as string[])[0]!);
            imported++;
          }
        }),
      );
      log(`imported ${c.sample_id}: ${writes.length} turns`);
    }
    const importSeconds = (performance.now() - started) / 1000;

    // 2. Ask every question in every mode.
    const perMode = new Map<Mode, Map<number, Score[]>>();
    const confidence = { answerable: new Map<string, number>(), adversarial: new Map<string, number>() };
    const refusals = { answerable: [] as string[], foreign: [] as string[] };
    for (const c of conversations) {
      const token = tokens.get(`${workspaceOf(c)}/${agentOf(c.speaker_a as string)}`)!;
      for (const qa of c.qa) {
        const evidence = evidenceOf(qa);
        if (qa.category === 5) {
          const res = await post("/v1/memories/query", token, { query: qa.question, limit: 10 });
          bump(confidence.adversarial, res.confidence);
          continue;
        }
        if (!isAnswerable(qa)) continue;
        for (const mode of MODES) {
          // Asked as an agent asks, brief: each hit's id leads back to the dialog turn it was imported from.
          const res = await post("/v1/memories/query", token, { query: qa.question, limit: 10, mode });
          if (mode === "hybrid") {
            bump(confidence.answerable, res.confidence);
            refusals.answerable.push(res.confidence);
          }
          const ranked: string[] = res.hits.map((h: { memory: { id: string } }) => diaOf.get(h.memory.id) ?? "");
          const byCategory = perMode.get(mode) ?? new Map<number, Score[]>();
          byCategory.set(qa.category, [...(byCategory.get(qa.category) ?? []), score(ranked, evidence)]);
          perMode.set(mode, byCategory);
        }
      }
      // Questions whose evidence is in another workspace, in the default mode.
      for (const qa of foreignQuestions(conversations, c)) {
        refusals.foreign.push((await post("/v1/memories/query", token, { query: qa.question, limit: 10 })).confidence);
      }
      log(`asked ${c.sample_id}`);
    }
    const refusal = { foreign_none_rate: noneRate(refusals.foreign), answerable_none_rate: noneRate(refusals.answerable) };
    const response_bytes_p50 = percentile(responseBytes, 50);

    const summary = Object.fromEntries(
      MODES.map((mode) => {
        const byCategory = perMode.get(mode) ?? new Map();
        const all = [...byCategory.values()].flat();
        return [
          mode,
          {
            ...mean(all),
            by_category: Object.fromEntries(
              [...byCategory].sort(([a], [b]) => a - b).map(([cat, scores]) => [CATEGORIES[cat], mean(scores)]),
            ),
          },
        ];
      }),
    ) as Record<Mode, Score & { by_category: Record<string, Score> }>;
    const seconds = round((performance.now() - started) / 1000, 1);
    printTable(summary, confidence, imported, round(importSeconds, 1), seconds);
    console.log("refusal (hybrid)   questions   answered none");
    console.log(`foreign            ${String(refusals.foreign.length).padStart(9)}   ${refusal.foreign_none_rate.toFixed(3)}`);
    console.log(`answerable         ${String(refusals.answerable.length).padStart(9)}   ${refusal.answerable_none_rate.toFixed(3)}`);
    console.log(`response bytes p50: ${response_bytes_p50} (over ${responseBytes.length} query_raw_memories responses)`);
    if (values.json) {
      const { by_category, ...overall } = summary.hybrid;
      console.log(
        JSON.stringify({
          ...overall,
          by_category,
          ablations: { semantic: summary.semantic, lexical: summary.lexical },
          confidence: { answerable: Object.fromEntries(confidence.answerable), adversarial: Object.fromEntries(confidence.adversarial) },
          refusal,
          response_bytes_p50,
          turns: imported,
          seconds,
        }),
      );
    }
  } finally {
    await stack.stop();
    if (!values["data-dir"]) await rm(dataDir, { recursive: true, force: true });
  }
}

function printTable(
  summary: Record<Mode, Score & { by_category: Record<string, Score> }>,
  confidence: { answerable: Map<string, number>; adversarial: Map<string, number> },
  turns: number,
  importSeconds: number,
  seconds: number,
) {
  console.log(`LoCoMo retrieval: ${turns} turns imported in ${importSeconds} s; ${seconds} s in all`);
  console.log("mode       scope          n     R@5    R@10   any@5   MRR");
  for (const mode of MODES) {
    const s = summary[mode];
    const row = (scope: string, x: Score) =>
      console.log(
        `${mode.padEnd(11)}${scope.padEnd(13)}${String(x.n).padStart(4)}${[x.recall_at_5, x.recall_at_10, x.any_at_5, x.mrr]
          .map((v) => v.toFixed(3).padStart(8))
          .join("")}`,
      );
    row("all", s);
    for (const [cat, x] of Object.entries(s.by_category)) row(cat, x);
  }
  const dist = (m: Map<string, number>) => ["high", "medium", "low", "none"].map((c) => `${c} ${m.get(c) ?? 0}`).join(", ");
  console.log(`confidence, categories 1-4 (hybrid): ${dist(confidence.answerable)}`);
  console.log(`confidence, category 5 adversarial:  ${dist(confidence.adversarial)}`);
}
