import { readFile, writeFile } from "node:fs/promises";
import { startOwnedChroma } from "../services/memory-core/src/embedded/owned-chroma.js";
import { createEmbedder } from "../services/memory-core/src/embeddings/create.js";
import { silentLogger } from "../services/memory-core/src/logger.js";
import { ChromaStore } from "../services/memory-core/src/store/chroma-store.js";
import { LexicalRanking } from "../services/memory-core/src/domain/lexical-ranking.js";
import { DEFAULT_TUNING } from "../services/memory-core/src/domain/retrieval-tuning.js";
import { turnFields, parseList } from "../services/memory-core/src/domain/turn-record.js";
import { evidenceOf, isAnswerable, workspaceOf, foreignQuestions, type Conversation } from "./locomo-data.js";
const conversations = JSON.parse(await readFile("/work/shared/bench/locomo/locomo-dev.json", "utf8")) as Conversation[];
const embedder = await createEmbedder({ kind: "local" }, silentLogger);
const chroma = await startOwnedChroma("/tmp/retr/locomo");
const store = new ChromaStore(chroma.url, { model: embedder.model, dimension: embedder.dimension }, silentLogger);

const cos = (a: number[], b: number[]) => { let d=0,x=0,y=0; for (let i=0;i<a.length;i++){d+=a[i]!*b[i]!;x+=a[i]!**2;y+=b[i]!**2;} return d/Math.sqrt(x*y); };
const out: any[] = [];
for (const c of conversations) {
  const col = await store.collection(workspaceOf(c), "turns");
  const recs: any[] = [];
  for await (const page of col.pages({ size: 500, withDocuments: true, withEmbeddings: true })) recs.push(...page);
  const ranking = new LexicalRanking({ boosts: DEFAULT_TUNING.turnFields, bm25: DEFAULT_TUNING.bm25, neighbourShare: DEFAULT_TUNING.neighbourShare });
  for (const r of recs) {
    const labels = [...parseList<string>(r.metadata.tags), ...parseList<string>(r.metadata.refs)].join(" ");
    ranking.put({ id: r.id, fields: { agent: String(r.metadata.agent), ...turnFields(r), labels }, facts: r.metadata });
  }
  const ref = new Map(recs.map((r) => [r.id, parseList<string>(r.metadata.refs)[0]]));
  const ask = async (q: string) => {
    const [v] = await embedder.embed([q]);
    const dense = recs.map((r) => [ref.get(r.id), cos(v!, r.embedding)] as [string, number]).sort((a, b) => b[1] - a[1]).slice(0, 100);
    const lex = ranking.query({ text: q, limit: 100, conditions: [] }).map((h) => [ref.get(h.id), h.score, h.informative]);
    return { dense, lex };
  };
  for (const qa of c.qa) {
    if (!isAnswerable(qa)) continue;
    out.push({ conv: c.sample_id, q: qa.question, cat: qa.category, ev: [...evidenceOf(qa)], ...(await ask(qa.question)) });
  }
  for (const qa of foreignQuestions(conversations, c)) out.push({ conv: c.sample_id, q: qa.question, foreign: true, ...(await ask(qa.question)) });
  console.error("done", c.sample_id);
}
await writeFile("/tmp/retr/analysis2.json", JSON.stringify(out));
await chroma.stop();
