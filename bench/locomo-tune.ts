import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadTokenRegistry } from "../services/memory-core/src/auth/tokens.js";
import { DEFAULT_TUNING, type RetrievalTuning } from "../services/memory-core/src/domain/retrieval-tuning.js";
import { startOwnedChroma } from "../services/memory-core/src/embedded/owned-chroma.js";
import { createEmbedder } from "../services/memory-core/src/embeddings/create.js";
import type { Embedder } from "../services/memory-core/src/embeddings/embedder.js";
import { silentLogger } from "../services/memory-core/src/logger.js";
import { createRuntime } from "../services/memory-core/src/runtime.js";
import { agentOf, CATEGORIES, evidenceOf, mean, score, workspaceOf, type Conversation, type Score } from "./locomo-data.js";

/**
 * A development tool, not the benchmark: runs the LoCoMo questions against data that `bench locomo
 * --data-dir DIR` imported, under several retrieval tunings, through the domain (no HTTP) so that a grid runs
 * in minutes. Decide defaults here; report them with `bench locomo`.
 *
 *   npm run bench -- locomo-tune --data FILE --data-dir DIR [--grid NAME]
 */
export async function tuneLocomo(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { data: { type: "string" }, "data-dir": { type: "string" }, grid: { type: "string", default: "fusion" } },
  });
  if (!values.data || !values["data-dir"]) throw new Error("--data and --data-dir are required");
  const conversations = JSON.parse(await readFile(values.data, "utf8")) as Conversation[];
  const chroma = await startOwnedChroma(values["data-dir"]);
  const tokens = await loadTokenRegistry(join(values["data-dir"], "tokens.yaml"));
  const embedder = cachingEmbedder(await createEmbedder({ kind: "local" }, silentLogger));
  try {
    for (const [name, tuning] of grid(values.grid!)) {
      const runtime = await createRuntime({ chromaUrl: chroma.url, embeddings: { kind: "local" }, tokens, log: silentLogger, embedder, processMetrics: false, tuning });
      const byCategory = new Map<number, Score[]>();
      for (const c of conversations) {
        const principal = { workspace: workspaceOf(c), agent: agentOf(c.speaker_a), role: "agent" as const };
        for (const qa of c.qa) {
          const evidence = evidenceOf(qa);
          if (!(qa.category in CATEGORIES) || evidence.size === 0) continue;
          const result = await runtime.memories.queryMemories(principal, { query: qa.question, limit: 10, mode: "hybrid", include_superseded: false, detail: "full" });
          const ranked = result.hits.map((h) => ("refs" in h.memory ? h.memory.refs[0]! : ""));
          byCategory.set(qa.category, [...(byCategory.get(qa.category) ?? []), score(ranked, evidence)]);
        }
      }
      const all = mean([...byCategory.values()].flat());
      const cats = [...byCategory].sort(([a], [b]) => a - b).map(([cat, s]) => `${CATEGORIES[cat]} ${mean(s).recall_at_10.toFixed(3)}`);
      console.log(`${name.padEnd(40)} R@5 ${all.recall_at_5.toFixed(3)}  R@10 ${all.recall_at_10.toFixed(3)}  MRR ${all.mrr.toFixed(3)}  | ${cats.join(", ")}`);
      await runtime.close();
    }
  } finally {
    await chroma.stop();
  }
}

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
      return [withFusion(1, 1), withFusion(1, 0.5), withFusion(1, 0.3), withFusion(1, 0.15), withFusion(1, 0), withFusion(1, 0.5, 20), withFusion(1, 0.3, 10)];
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
        { ...base, turnFields: { ...base.turnFields, prompt: 0.5 }, neighbourShare: 0.3, fusion: { lexical: 1, semantic: 0, k: 60 }, ...patch },
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
        { ...base, turnFields: { ...base.turnFields, prompt: 0.5, agent: 2 }, neighbourShare: 0.3, semanticGate: gate, fusion: { lexical: 1, semantic, k } },
      ];
      return [t("low", 0.1), t("medium", 0.1), t("medium", 0.3), t("medium", 0.5), t("medium", 1), t("high", 0.5), t("high", 1)];
    }
    case "default":
      return [["default tuning", base]];
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
