import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { loadTokenRegistry } from "../services/memory-core/src/auth/tokens.js";
import { DEFAULT_TUNING } from "../services/memory-core/src/domain/retrieval-tuning.js";
import { startOwnedChroma } from "../services/memory-core/src/embedded/owned-chroma.js";
import { createEmbedder } from "../services/memory-core/src/embeddings/create.js";
import { silentLogger } from "../services/memory-core/src/logger.js";
import { createRuntime } from "../services/memory-core/src/runtime.js";
import { agentOf, evidenceOf, isAnswerable, workspaceOf, type Conversation } from "./locomo-data.js";
const dir = "/tmp/retr/locomo";
const conversations = JSON.parse(await readFile("/work/shared/bench/locomo/locomo-dev.json", "utf8")) as Conversation[];
const chroma = await startOwnedChroma(dir);
const tokens = await loadTokenRegistry(join(dir, "tokens.yaml"));
const embedder = await createEmbedder({ kind: "local" }, silentLogger);
const runtime = await createRuntime({ chromaUrl: chroma.url, embeddings: { kind: "local" }, tokens, log: silentLogger, embedder, processMetrics: false, tuning: DEFAULT_TUNING });
const out: any[] = [];
for (const c of conversations) {
  const principal = { workspace: workspaceOf(c), agent: agentOf(c.speaker_a), role: "agent" as const };
  for (const qa of c.qa) {
    if (!isAnswerable(qa)) continue;
    const ev = evidenceOf(qa);
    const rec: any = { conv: c.sample_id, q: qa.question, cat: qa.category, ev: [...ev] };
    for (const mode of ["lexical", "semantic"] as const) {
      const r = await runtime.memories.queryMemories(principal, { query: qa.question, limit: 100, mode, include_superseded: false });
      rec[mode] = r.hits.map((h) => [h.memory.refs[0], h.memory.session_id, h.score]);
    }
    out.push(rec);
  }
}
const { writeFile } = await import("node:fs/promises");
await writeFile("/tmp/retr/analysis.json", JSON.stringify(out));
await runtime.close(); await chroma.stop();
