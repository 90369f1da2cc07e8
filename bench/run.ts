import { benchAssessChange } from "./assess-change.js";
import { benchBulk } from "./bulk.js";
import { benchCapture } from "./capture.js";
import { benchCaptureQuality } from "./capture-quality.js";
import { benchChromaChanges } from "./chroma-changes.js";
import { benchChromaTether } from "./chroma-tether.js";
import { benchChromaWrites } from "./chroma-writes.js";
import { benchEditHook } from "./edit-hook.js";
import { benchEmbedderCost } from "./embedder-cost.js";
import { benchEmbeddingLoad } from "./embedding-load.js";
import { benchHttpEdges } from "./http-edges.js";
import { benchHostile } from "./hostile.js";
import { benchLexical } from "./lexical.js";
import { benchLocomo } from "./locomo.js";
import { benchLongText } from "./long-text.js";
import { benchMailbox } from "./mailbox.js";
import { tuneLocomo } from "./locomo-tune.js";
import { benchMemoryCore } from "./memory-core.js";
import { benchSummarizer } from "./summarizer.js";
import { benchSummariesQuality } from "./summaries-quality.js";
import { benchOpsCli } from "./ops-cli.js";
import { benchParaphrase } from "./paraphrase.js";
import { benchPathQuery } from "./path-query.js";
import { benchEditHookHistory } from "./edit-hook-history.js";
import { benchPromptHook } from "./prompt-hook.js";
import { benchReadingFit } from "./reading-fit.js";
import { benchRedaction } from "./redaction.js";
import { benchRecordChecks } from "./record-checks.js";
import { benchScale } from "./scale.js";
import { benchResident } from "./resident.js";
import { benchRestart } from "./restart.js";
import { benchReview } from "./review.js";
import { benchSupersessions } from "./supersessions.js";
import { benchTools } from "./tools.js";
import { benchWrites } from "./writes.js";

/** `npm run bench -- <name> [options]`: benchmarks print figures and ratios; they are not tests. */
const benches: Record<string, (argv: string[]) => void | Promise<void>> = {
  "memory-core": benchMemoryCore,
  "assess-change": benchAssessChange,
  bulk: benchBulk,
  capture: benchCapture,
  "capture-quality": benchCaptureQuality,
  "chroma-changes": benchChromaChanges,
  "chroma-tether": benchChromaTether,
  "chroma-writes": benchChromaWrites,
  "edit-hook": benchEditHook,
  "embedder-cost": benchEmbedderCost,
  "embedding-load": benchEmbeddingLoad,
  "http-edges": benchHttpEdges,
  hostile: benchHostile,
  lexical: benchLexical,
  locomo: benchLocomo,
  "long-text": benchLongText,
  mailbox: benchMailbox,
  "locomo-tune": tuneLocomo,
  summarizer: benchSummarizer,
  "summaries-quality": benchSummariesQuality,
  "reading-fit": benchReadingFit,
  "ops-cli": benchOpsCli,
  paraphrase: benchParaphrase,
  "path-query": benchPathQuery,
  "edit-hook-history": benchEditHookHistory,
  "prompt-hook": benchPromptHook,
  redaction: benchRedaction,
  "record-checks": benchRecordChecks,
  scale: benchScale,
  resident: benchResident,
  restart: benchRestart,
  review: benchReview,
  supersessions: benchSupersessions,
  tools: benchTools,
  writes: benchWrites,
};

const [name = "memory-core", ...rest] = process.argv.slice(2);
const bench = benches[name];
if (!bench) {
  process.stderr.write(`unknown benchmark "${name}"; one of: ${Object.keys(benches).join(", ")}\n`);
  process.exit(2);
}
await bench(rest);
