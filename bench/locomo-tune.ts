import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadTokenRegistry } from "../services/memory-core/src/auth/tokens.js";
import { DEFAULT_TUNING, type RetrievalTuning } from "../services/memory-core/src/retrieval/retrieval-tuning.js";
import { claimChroma } from "../services/memory-core/src/embedded/owned-chroma.js";
import { benchEmbeddings } from "./timed-embedder.js";
import { createEmbedder } from "../services/memory-core/src/embeddings/create.js";
import type { Embedder } from "../services/memory-core/src/embeddings/embedder.js";
import { silentLogger } from "../services/memory-core/src/logger.js";
import { createRuntime } from "../services/memory-core/src/runtime.js";
import {
  agentOf,
  CATEGORIES,
  evidenceOf,
  foreignQuestions,
  isAnswerable,
  mean,
  noneRate,
  score,
  workspaceOf,
  type Conversation,
  type Score,
} from "./locomo-data.js";

/**
 * A development tool, not the benchmark: runs the LoCoMo questions against data that `bench locomo
 * --data-dir DIR` imported, under several retrieval tunings, through the domain (no HTTP) so that a grid runs
 * in minutes. Decide defaults here; report them with `bench locomo`.
 *
 * Each workspace is also asked a sample of the other conversations' questions (`foreignQuestions`): the share
 * answered `none` there, and among its own answerable questions, measure refusal.
 *
 * `--loo`: leave one conversation out. For each conversation, the tuning of the grid with the best objective
 * on the other four is chosen and scored on it; the held-out scores, pooled over the five folds (each question
 * counted once, under a tuning chosen without its conversation), are the figure that tuning to the file's
 * particulars cannot inflate. Objective: mean of R@5, R@10 and MRR, plus half the foreign `none` rate, minus
 * twice any answerable `none` rate above 0.10. `--objective bounds`: refusal held as bounds instead: mean of R@5,
 * R@10 and MRR, minus twice the foreign `none` rate's shortfall below 0.85 and twice the answerable `none` rate's
 * excess above 0.08.
 *
 *   npm run bench -- locomo-tune --data FILE --data-dir DIR [--grid NAME] [--mode hybrid|lexical|semantic] [--loo]
 *     [--objective weighed|bounds]
 *     [--embeddings-url URL --embeddings-model NAME]
 *
 * The queries are embedded by the local default unless `--embeddings-url` names the OpenAI-compatible server the
 * data dir was imported with (`bench locomo --embeddings-url`).
 */
export async function tuneLocomo(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      data: { type: "string" },
      "data-dir": { type: "string" },
      grid: { type: "string", default: "fusion" },
      mode: { type: "string", default: "hybrid" },
      loo: { type: "boolean", default: false },
      objective: { type: "string", default: "weighed" },
      "embeddings-url": { type: "string" },
      "embeddings-model": { type: "string" },
    },
  });
  if (!values.data || !values["data-dir"]) throw new Error("--data and --data-dir are required");
  const mode = values.mode as "hybrid" | "lexical" | "semantic";
  const objective = OBJECTIVES[values.objective!];
  if (!objective) throw new Error(`--objective is one of ${Object.keys(OBJECTIVES).join(", ")}`);
  const conversations = JSON.parse(await readFile(values.data, "utf8")) as Conversation[];
  const chroma = await claimChroma({ chromaUrl: undefined, dataDir: values["data-dir"], log: silentLogger });
  const chromaUrl = await chroma.start();
  const tokens = await loadTokenRegistry(join(values["data-dir"], "tokens.yaml"));
  const embedder = cachingEmbedder(
    await createEmbedder(benchEmbeddings(values["embeddings-url"], values["embeddings-model"]), silentLogger),
  );
  const results: Array<{ name: string; byConversation: Map<string, Outcome> }> = [];
  try {
    for (const [name, tuning] of grid(values.grid!)) {
      const runtime = await createRuntime({
        chromaUrl,
        embeddings: { kind: "local" },
        tokens,
        log: silentLogger,
        embedder,
        processMetrics: false,
        tuning,
      });
      const byConversation = new Map<string, Outcome>();
      for (const c of conversations) {
        const principal = { workspace: workspaceOf(c), agent: agentOf(c.speaker_a), role: "agent" as const };
        const ask = (question: string) =>
          runtime.services.queries.queryMemories(principal, {
            query: question,
            limit: 10,
            mode,
            include_superseded: false,
            evidence: false,
            detail: "full",
          });
        const outcome: Outcome = { scores: [], answerable: [], foreign: [] };
        for (const qa of c.qa) {
          if (!isAnswerable(qa)) continue;
          const result = await ask(qa.question);
          const ranked = result.hits.map((h) => ("refs" in h.memory ? h.memory.refs[0]! : ""));
          outcome.scores.push({ category: qa.category, score: score(ranked, evidenceOf(qa)) });
          outcome.answerable.push(result.confidence);
        }
        for (const qa of foreignQuestions(conversations, c)) outcome.foreign.push((await ask(qa.question)).confidence);
        byConversation.set(c.sample_id, outcome);
      }
      results.push({ name, byConversation });
      console.log(`${name.padEnd(48)} ${describe(pool([...byConversation.values()]))}`);
      await runtime.close();
    }
  } finally {
    await chroma.stop();
  }
  if (!values.loo) return;
  console.log("leave one conversation out (tuning chosen on the other four):");
  const heldOut: Outcome[] = [];
  for (const c of conversations) {
    const train = (r: (typeof results)[number]) =>
      pool(conversations.filter((o) => o !== c).map((o) => r.byConversation.get(o.sample_id)!));
    const chosen = results.reduce((best, r) => (objective(train(r)) > objective(train(best)) ? r : best));
    const outcome = chosen.byConversation.get(c.sample_id)!;
    heldOut.push(outcome);
    console.log(`  ${c.sample_id.padEnd(8)} chose ${chosen.name.padEnd(48)} held out: ${describe(pool([outcome]))}`);
  }
  console.log(`  ${"LOO".padEnd(63)} pooled:   ${describe(pool(heldOut))}`);
}

interface Outcome {
  scores: Array<{ category: number; score: Score }>;
  /** The response's confidence for each own answerable question, and for each foreign one. */
  answerable: string[];
  foreign: string[];
}

interface Pooled extends Score {
  answerable_none_rate: number;
  foreign_none_rate: number;
  by_category: Record<string, number>;
}

function pool(outcomes: Outcome[]): Pooled {
  const scores = outcomes.flatMap((o) => o.scores);
  const cats = [...new Set(scores.map((s) => s.category))].sort();
  return {
    ...mean(scores.map((s) => s.score)),
    answerable_none_rate: noneRate(outcomes.flatMap((o) => o.answerable)),
    foreign_none_rate: noneRate(outcomes.flatMap((o) => o.foreign)),
    by_category: Object.fromEntries(
      cats.map((cat) => [CATEGORIES[cat]!, mean(scores.filter((s) => s.category === cat).map((s) => s.score)).recall_at_10]),
    ),
  };
}

const OBJECTIVES: Record<string, (p: Pooled) => number> = {
  weighed: (p) => (p.recall_at_5 + p.recall_at_10 + p.mrr) / 3 + 0.5 * p.foreign_none_rate - 2 * Math.max(0, p.answerable_none_rate - 0.1),
  bounds: (p) =>
    (p.recall_at_5 + p.recall_at_10 + p.mrr) / 3 -
    2 * Math.max(0, 0.85 - p.foreign_none_rate) -
    2 * Math.max(0, p.answerable_none_rate - 0.08),
};

const describe = (p: Pooled) =>
  `R@5 ${p.recall_at_5.toFixed(3)}  R@10 ${p.recall_at_10.toFixed(3)}  any@5 ${p.any_at_5.toFixed(3)}  MRR ${p.mrr.toFixed(3)}  none: foreign ${p.foreign_none_rate.toFixed(3)} answerable ${p.answerable_none_rate.toFixed(3)}  | ` +
  Object.entries(p.by_category)
    .map(([c, r]) => `${c} ${r.toFixed(3)}`)
    .join(", ");

function grid(name: string): Array<[string, RetrievalTuning]> {
  const base = DEFAULT_TUNING;
  const withFusion = (lexical: number, semantic: number, k = 60): [string, RetrievalTuning] => [
    `fusion lex ${lexical} sem ${semantic} k ${k}`,
    { ...base, fusion: { lexical, semantic, k } },
  ];
  const withFields = (fields: Partial<RetrievalTuning["turnFields"]>, fusion = base.fusion): [string, RetrievalTuning] => [
    `fields ${JSON.stringify(fields)} fusion ${fusion.lexical}/${fusion.semantic}`,
    { ...base, fusion, turnFields: { ...base.turnFields, ...fields } },
  ];
  switch (name) {
    case "fusion":
      return [
        withFusion(1, 1),
        withFusion(1, 0.5),
        withFusion(1, 0.3),
        withFusion(1, 0.15),
        withFusion(1, 0),
        withFusion(1, 0.5, 20),
        withFusion(1, 0.3, 10),
      ];
    case "dense-weight": {
      // The dense list's weight in today's fusion, for comparing embedders: 0 is lexical alone.
      const weighted = (semantic: number): [string, RetrievalTuning] => [
        `default, sem ${semantic}`,
        { ...base, fusion: { ...base.fusion, semantic } },
      ];
      return [weighted(0), weighted(0.1), weighted(0.2), weighted(0.3), weighted(0.5)];
    }
    case "fields":
      return [
        withFields({}, { lexical: 1, semantic: 0, k: 60 }),
        withFields({ prompt: 0.5 }, { lexical: 1, semantic: 0, k: 60 }),
        withFields({ thought: 0.3 }, { lexical: 1, semantic: 0, k: 60 }),
        withFields({ agent: 0, thought: 0.3 }, { lexical: 1, semantic: 0, k: 60 }),
        withFields({ response: 2 }, { lexical: 1, semantic: 0, k: 60 }),
        withFields({}),
        withFields({ prompt: 0.5 }),
        withFields({ prompt: 0.25 }),
        withFields({ prompt: 0 }),
        withFields({ thought: 0.5 }),
        withFields({ agent: 0 }),
        withFields({ response: 2 }),
      ];
    case "context": {
      const fields = { ...base.turnFields, prompt: 0.5 };
      const t = (neighbourShare: number, semantic: number, k = 60): [string, RetrievalTuning] => [
        `prompt 0.5 neighbours ${neighbourShare} sem ${semantic} k ${k}`,
        { ...base, turnFields: fields, neighbourShare, fusion: { lexical: 1, semantic, k } },
      ];
      return [t(0, 0), t(0.2, 0), t(0.4, 0), t(0.6, 0), t(0.4, 0.2), t(0.4, 0.1), t(0.4, 0.3, 20)];
    }
    case "bm25": {
      const t = (label: string, patch: Partial<RetrievalTuning>): [string, RetrievalTuning] => [
        label,
        {
          ...base,
          turnFields: { ...base.turnFields, prompt: 0.5 },
          neighbourShare: 0.3,
          fusion: { lexical: 1, semantic: 0, k: 60 },
          ...patch,
        },
      ];
      return [
        t("ctx 0.3", {}),
        t("ctx 0.3 b 0.5", { bm25: { k: 1.2, b: 0.5, d: 0.5 } }),
        t("ctx 0.3 b 0.9", { bm25: { k: 1.2, b: 0.9, d: 0.5 } }),
        t("ctx 0.3 k 0.8", { bm25: { k: 0.8, b: 0.7, d: 0.5 } }),
        t("ctx 0.3 k 2", { bm25: { k: 2, b: 0.7, d: 0.5 } }),
        t("ctx 0.3 agent 2", { turnFields: { ...base.turnFields, prompt: 0.5, agent: 2 } }),
        t("ctx 0.3 prompt 0.3", { turnFields: { ...base.turnFields, prompt: 0.3 } }),
        t("ctx 0.3 prompt 0.7", { turnFields: { ...base.turnFields, prompt: 0.7 } }),
        t("ctx 0.3 thought 0.05", { turnFields: { ...base.turnFields, prompt: 0.5, thought: 0.05 } }),
      ];
    }
    case "gated": {
      const t = (semantic: number, k = 60, share = 0.3): [string, RetrievalTuning] => [
        `agent 2 prompt 0.5 ctx ${share} sem ${semantic} k ${k}`,
        { ...base, turnFields: { ...base.turnFields, prompt: 0.5, agent: 2 }, neighbourShare: share, fusion: { lexical: 1, semantic, k } },
      ];
      return [t(0), t(0.1), t(0.2), t(0.3), t(0.5), t(0.2, 20), t(0.3, 30, 0.4)];
    }
    case "gate": {
      const t = (gate: RetrievalTuning["semanticGate"], semantic: number, k = 60): [string, RetrievalTuning] => [
        `gate ${gate} sem ${semantic} k ${k}`,
        {
          ...base,
          turnFields: { ...base.turnFields, prompt: 0.5, agent: 2 },
          neighbourShare: 0.3,
          semanticGate: gate,
          fusion: { lexical: 1, semantic, k },
        },
      ];
      return [t("low", 0.1), t("medium", 0.1), t("medium", 0.3), t("medium", 0.5), t("medium", 1), t("high", 0.5), t("high", 1)];
    }
    case "default":
      return [["default tuning", base]];
    case "rankfusion": {
      // Per-retriever k: a small lexical k keeps BM25's order at the top; dense weight; similarity scaling.
      const t = (lexicalK: number, semantic: number, scaledSim = false, semanticK = 60): [string, RetrievalTuning] => [
        `lexK ${lexicalK} semK ${semanticK} sem ${semantic}${scaledSim ? " scaled" : ""}`,
        { ...base, fusion: { lexical: 1, semantic, k: 60, lexicalK, semanticK, similarityScaled: scaledSim } },
      ];
      return [
        t(60, 0.1),
        t(60, 0),
        t(20, 0.1),
        t(10, 0.1),
        t(5, 0.1),
        t(2, 0.1),
        t(10, 0.2),
        t(5, 0.2),
        t(5, 0.3),
        t(10, 0.3, true),
        t(5, 0.5, true),
        t(5, 1, true),
        t(2, 0.5, true),
      ];
    }
    case "feedback": {
      const t = (hits: number, terms: number, weight: number, minHits = 2): [string, RetrievalTuning] => [
        `feedback ${hits} hits ${terms} terms w ${weight} min ${minHits}`,
        { ...base, feedback: { hits, terms, weight, minHits } },
      ];
      return [
        t(10, 0, 0.3),
        t(5, 5, 0.3),
        t(10, 10, 0.3),
        t(10, 10, 0.5),
        t(10, 20, 0.3),
        t(20, 10, 0.3),
        t(10, 10, 0.2, 3),
        t(5, 10, 0.5, 1),
      ];
    }
    case "lexical": {
      // On top of RRF with lexical k 20: coordination and feedback.
      const fusion = { ...base.fusion, lexicalK: 20 };
      const t = (label: string, patch: Partial<RetrievalTuning>): [string, RetrievalTuning] => [label, { ...base, fusion, ...patch }];
      return [
        ["default (lexK 60)", base],
        t("lexK 20", {}),
        t("lexK 20 coord^2", { bm25: { ...base.bm25, coordination: 2 } }),
        t("lexK 20 coord^0.5", { bm25: { ...base.bm25, coordination: 0.5 } }),
        t("lexK 20 idf coord", { bm25: { ...base.bm25, idfCoordination: true } }),
        t("lexK 20 idf coord^2", { bm25: { ...base.bm25, idfCoordination: true, coordination: 2 } }),
        t("lexK 20 fb 5/5/0.3", { feedback: { hits: 5, terms: 5, minHits: 2, weight: 0.3 } }),
        t("lexK 20 fb 20/10/0.3", { feedback: { hits: 20, terms: 10, minHits: 2, weight: 0.3 } }),
      ];
    }
    case "combined": {
      // lexical k 20 with idf coordination and feedback, side by side.
      const fusion = { ...base.fusion, lexicalK: 20 };
      const t = (label: string, idf: boolean, feedback?: RetrievalTuning["feedback"], semantic = 0.1): [string, RetrievalTuning] => [
        label,
        { ...base, fusion: { ...fusion, semantic }, bm25: { ...base.bm25, idfCoordination: idf }, ...(feedback ? { feedback } : {}) },
      ];
      return [
        t("lexK 20", false),
        t("lexK 20 idf coord", true),
        t("lexK 20 idf coord fb 5/5/0.3", true, { hits: 5, terms: 5, minHits: 2, weight: 0.3 }),
        t("lexK 20 idf coord fb 5/5/0.2", true, { hits: 5, terms: 5, minHits: 2, weight: 0.2 }),
        t("lexK 20 idf coord fb 10/5/0.3", true, { hits: 10, terms: 5, minHits: 2, weight: 0.3 }),
        t("lexK 20 idf coord fb 5/10/0.3", true, { hits: 5, terms: 10, minHits: 2, weight: 0.3 }),
        t("lexK 20 fb 5/5/0.3", false, { hits: 5, terms: 5, minHits: 2, weight: 0.3 }),
        t("lexK 20 idf coord fb 5/5/0.3 sem 0.3", true, { hits: 5, terms: 5, minHits: 2, weight: 0.3 }, 0.3),
      ];
    }
    case "context2": {
      // Turn context and feedback on top of the defaults.
      const t = (neighbourShare: number, terms = 5, hits = 10): [string, RetrievalTuning] => [
        `ctx ${neighbourShare} fb ${hits}/${terms}`,
        { ...base, neighbourShare, feedback: { ...base.feedback, hits, terms } },
      ];
      return [t(0.3), t(0.2), t(0.4), t(0.5), t(0.3, 8), t(0.4, 8), t(0.3, 5, 15)];
    }
    case "session6": {
      // Confidence, dates, feedback and lexical k candidates side by side, for one leave-one-conversation-out figure
      // over all of them (docs/benchmarks.md, "LoCoMo retrieval quality": "confidence that refuses").
      const old: RetrievalTuning = {
        ...base,
        fusion: { lexical: 1, semantic: 0.1, k: 60 },
        bm25: { k: 1.2, b: 0.7, d: 0.5 },
        feedback: { ...base.feedback, terms: 0 },
      };
      const confidence = (low: number, medium: number, semanticAlone: "medium" | "high") => ({
        lexical: { low, medium, high: 0.9 },
        semanticAlone,
        semanticSure: false,
      });
      return [
        ["RRF k 60, BM25 1.2/0.7/0.5, no feedback", old],
        ["lexK 20", { ...old, fusion: { ...old.fusion, lexicalK: 20 } }],
        ["lexK 20 idf coord", { ...old, fusion: { ...old.fusion, lexicalK: 20 }, bm25: base.bm25 }],
        ["default (lexK 20 idf coord fb 10/5/0.3)", base],
        ["default, fb 5/5/0.3", { ...base, feedback: { ...base.feedback, hits: 5 } }],
        ["default, fb 10/10/0.3", { ...base, feedback: { ...base.feedback, terms: 10 } }],
        ["default, ctx 0.4", { ...base, neighbourShare: 0.4 }],
        ["default, sem 0.3", { ...base, fusion: { ...base.fusion, semantic: 0.3 } }],
        ["default, conf 0.4/0.6 sem-alone high", { ...base, confidence: confidence(0.4, 0.6, "high") }],
        ["default, conf 0.45/0.6 sem-alone medium", { ...base, confidence: confidence(0.45, 0.6, "medium") }],
      ];
    }
    case "recall7": {
      // The lexical list's head kept, and the dense list's nearest (above a gate) voting below it, against plain
      // RRF (docs/benchmarks.md, "LoCoMo retrieval quality": "a fusion that keeps BM25's head").
      const plainFusion: RetrievalTuning = { ...base, fusion: { lexical: 1, semantic: 0.1, k: 60, lexicalK: 20 }, semanticGate: "low" };
      const t = (
        head: number,
        semantic: number,
        semanticK: number,
        gate: RetrievalTuning["semanticGate"],
        perHit = 1,
      ): [string, RetrievalTuning] => [
        `head ${head} sem ${semantic} k ${semanticK} gate ${gate} depth ${perHit}/hit`,
        {
          ...base,
          semanticGate: gate,
          fusion: { lexical: 1, semantic, k: 60, lexicalK: 20, semanticK, lexicalHead: head, semanticPerHit: perHit },
        },
      ];
      return [
        ["RRF lexK 20 sem 0.1 gate low", plainFusion],
        t(0, 0.1, 5, "low"),
        t(0, 0.1, 5, "medium"),
        t(0, 0.3, 20, "low"),
        t(0, 0.3, 20, "medium"),
        t(3, 0.1, 5, "low"),
        t(3, 0.1, 5, "medium"),
        t(3, 0.3, 20, "low"),
        t(3, 0.3, 20, "medium"),
        t(3, 0.1, 60, "medium"),
        t(4, 0.1, 5, "medium"),
        t(3, 0.1, 5, "medium", 2),
        t(3, 0.1, 5, "low", 2),
        t(3, 0.1, 10, "medium"),
        t(3, 0.1, 20, "medium"),
        t(3, 0.1, 30, "medium"),
        t(0, 0.1, 60, "medium"),
        t(0, 0.1, 60, "medium", 2),
        t(0, 0.1, 60, "low", 1),
        t(3, 0.2, 60, "medium"),
      ];
    }
    case "bm25-6": {
      // BM25 and field weights again, on the defaults.
      const t = (label: string, patch: Partial<RetrievalTuning>): [string, RetrievalTuning] => [label, { ...base, ...patch }];
      return [
        t("default", {}),
        t("b 0.5", { bm25: { ...base.bm25, b: 0.5 } }),
        t("b 0.85", { bm25: { ...base.bm25, b: 0.85 } }),
        t("k 0.9", { bm25: { ...base.bm25, k: 0.9 } }),
        t("k 1.6", { bm25: { ...base.bm25, k: 1.6 } }),
        t("d 0", { bm25: { ...base.bm25, d: 0 } }),
        t("d 1", { bm25: { ...base.bm25, d: 1 } }),
        t("prompt 0.3", { turnFields: { ...base.turnFields, prompt: 0.3 } }),
        t("prompt 0.7", { turnFields: { ...base.turnFields, prompt: 0.7 } }),
        t("agent 1", { turnFields: { ...base.turnFields, agent: 1 } }),
        t("thought 0.5", { turnFields: { ...base.turnFields, thought: 0.5 } }),
      ];
    }
    case "meaning": {
      // Issue 39: levels that follow the rank (always on), the lexical low floor, similarity alone read as medium
      // when sure, the dense list's weight when the lexical side holds little of the query, and BM25's head kept
      // with the dense list's nearest voting below it; on the RRF fusion the default had before unless said
      // (docs/benchmarks.md, "Meaning: fusion and confidence").
      const t = (
        label: string,
        low: number,
        semanticSure: boolean,
        weakLexical?: RetrievalTuning["fusion"]["weakLexical"],
        fusion: Partial<RetrievalTuning["fusion"]> = {},
      ): [string, RetrievalTuning] => {
        return [
          label,
          {
            ...base,
            semanticGate: "low",
            fusion: { lexical: 1, semantic: 0.1, k: 60, lexicalK: 20, ...fusion, ...(weakLexical ? { weakLexical } : {}) },
            confidence: { ...base.confidence, lexical: { ...base.confidence.lexical, low }, semanticSure },
          },
        ];
      };
      const recall7 = { semanticK: 5, lexicalHead: 3, semanticPerHit: 1 };
      return [
        t("follow rank, low 0.5", 0.5, false),
        t("follow rank, low 0.4", 0.4, false),
        t("follow rank, low 0.43", 0.43, false),
        t("follow rank, low 0.43, sure", 0.43, true),
        t("follow rank, low 0.43, sure, weak<0.3 sem 1", 0.43, true, { below: 0.3, semantic: 1 }),
        t("follow rank, low 0.4, sure, weak<0.3 sem 1", 0.4, true, { below: 0.3, semantic: 1 }),
        t("follow rank, low 0.45, sure, weak<0.3 sem 1", 0.45, true, { below: 0.3, semantic: 1 }),
        t("follow rank, low 0.43, sure, weak<0.3 sem 0.3", 0.43, true, { below: 0.3, semantic: 0.3 }),
        t("follow rank, low 0.43, sure, weak<0.4 sem 1", 0.43, true, { below: 0.4, semantic: 1 }),
        [
          "follow rank, low 0.43, sure, head 3 sem k 5 gate medium",
          { ...t("", 0.43, true, undefined, recall7)[1], semanticGate: "medium" },
        ],
        ["default: follow rank, low 0.43, sure, head 3 sem k 5 gate medium, weak<0.05 gate low", base],
        [
          "follow rank, low 0.43, sure, head 3 sem k 5 gate medium, weak<0.3 sem 1 gate low",
          { ...t("", 0.43, true, { below: 0.3, semantic: 1, gate: "low" }, recall7)[1], semanticGate: "medium" },
        ],
      ];
    }
    case "confidence": {
      const t = (low: number, medium: number, high: number, semanticAlone: "low" | "medium" | "high"): [string, RetrievalTuning] => [
        `info ${low}/${medium}/${high} semantic alone ${semanticAlone}`,
        { ...base, confidence: { lexical: { low, medium, high }, semanticAlone, semanticSure: false } },
      ];
      return [
        t(0.3, 0.6, 0.9, "high"),
        t(0.35, 0.6, 0.9, "high"),
        t(0.4, 0.6, 0.9, "high"),
        t(0.45, 0.6, 0.9, "high"),
        t(0.5, 0.7, 0.9, "high"),
        t(0.3, 0.6, 0.9, "medium"),
        t(0.35, 0.6, 0.9, "medium"),
        t(0.4, 0.6, 0.9, "medium"),
        t(0.45, 0.6, 0.9, "medium"),
        t(0.5, 0.7, 0.9, "medium"),
      ];
    }
    default:
      throw new Error(`unknown grid ${name}`);
  }
}

/** Questions repeat across tunings: embed each once. */
function cachingEmbedder(inner: Embedder): Embedder {
  const cache = new Map<string, number[]>();
  return {
    model: inner.model,
    dimension: inner.dimension,
    async embed(texts) {
      const missing = texts.filter((t) => !cache.has(t));
      if (missing.length > 0) (await inner.embed(missing)).forEach((v, i) => cache.set(missing[i]!, v));
      return texts.map((t) => cache.get(t)!);
    },
  };
}
