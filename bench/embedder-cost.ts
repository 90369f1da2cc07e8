import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { benchEmbeddings } from "./timed-embedder.js";
import { createEmbedder } from "../services/memory-core/src/embeddings/create.js";
import { silentLogger } from "../services/memory-core/src/logger.js";
import { turnDocument } from "../services/memory-core/src/records/turn-record.js";
import { importWrites, type Conversation } from "./locomo-data.js";
import { round } from "./stats.js";

/**
 * What an embedder costs in this process: resident size before it is created, once it is loaded, and at its peak
 * while it embeds; and its rate, texts per second, over the first TEXTS LoCoMo turns as the store embeds them
 * (`turnDocument`), handed over in calls of 64 as a bulk write does. The embedder is the configured default
 * (`local`) unless `--embeddings-url` names an OpenAI-compatible server (its own cost is then in that process).
 *
 *   npm run bench -- embedder-cost --data ../shared/bench/locomo/locomo-dev.json [--texts 1000]
 *     [--embeddings-url URL --embeddings-model NAME]
 */
export async function benchEmbedderCost(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      data: { type: "string" },
      texts: { type: "string", default: "1000" },
      "embeddings-url": { type: "string" },
      "embeddings-model": { type: "string" },
    },
  });
  if (!values.data) throw new Error("--data FILE is required (a LoCoMo-format JSON file)");
  const conversations = JSON.parse(await readFile(values.data, "utf8")) as Conversation[];
  const texts = conversations
    .flatMap((c) => importWrites(c))
    .map((w) => turnDocument(w.body as { prompt: string; thought: string; response: string }))
    .slice(0, Number(values.texts));
  const mb = (bytes: number) => round(bytes / 2 ** 20, 0);
  const rssBefore = process.memoryUsage.rss();
  const loadStarted = performance.now();
  const embedder = await createEmbedder(benchEmbeddings(values["embeddings-url"], values["embeddings-model"]), silentLogger);
  const loadSeconds = (performance.now() - loadStarted) / 1000;
  const rssLoaded = process.memoryUsage.rss();
  let rssPeak = rssLoaded;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage.rss())), 50);
  const started = performance.now();
  for (let i = 0; i < texts.length; i += 64) await embedder.embed(texts.slice(i, i + 64));
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  rssPeak = Math.max(rssPeak, process.memoryUsage.rss());
  await embedder.close?.();
  console.log(
    JSON.stringify({
      model: embedder.model,
      dimension: embedder.dimension,
      texts: texts.length,
      load_s: round(loadSeconds, 1),
      texts_per_s: round(texts.length / seconds, 1),
      rss_mb: { before: mb(rssBefore), loaded: mb(rssLoaded), peak: mb(rssPeak) },
    }),
  );
}
