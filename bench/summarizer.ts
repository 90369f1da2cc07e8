import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import yaml from "js-yaml";
import { loadConfig, silentLogger, startStack, TokenRegistry } from "@cairn/memory-core";
import { createSummarizer, loadSummarizerConfig } from "@cairn/summarizer";
import { newToken } from "../services/memory-core/src/auth/tokens.js";
import { summarizerPort } from "../services/memory-core/src/domain/summarizer-port.js";
import { corpus } from "./corpus.js";
import { timedEmbedder } from "./timed-embedder.js";
import { round, summarize, timed } from "./stats.js";

/**
 * Sessions per minute of the extractive summarizer (no chat model), at 20 and at 200 turns per session,
 * over a real embedded Chroma. Each size gets its own workspace; the summarizer's background round runs over
 * it from a cold start (scan of the workspace included), then every session is summarized again one at a time
 * (`force`) for per-session latencies. Embedding time is reported apart.
 *
 *   npm run bench -- summarizer [--embedder local|hash] [--sessions-20 24] [--sessions-200 4] [--concurrency 2] [--json]
 *
 * `--embedder local` is the real Universal Sentence Encoder lite (the default of `npm start`); `hash` serves
 * hashing bag-of-words vectors from the local OpenAI-compatible stub, to show the summarizer's own cost.
 */
export async function benchSummarizer(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      embedder: { type: "string", default: "local" },
      "sessions-20": { type: "string", default: "24" },
      "sessions-200": { type: "string", default: "4" },
      concurrency: { type: "string", default: "2" },
      json: { type: "boolean", default: false },
    },
  });
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const timing = await timedEmbedder(values.embedder);
  const { embedder, times: embedTimes } = timing;

  const dataDir = await mkdtemp(join(tmpdir(), "cairn-bench-summarizer-"));
  const sizes = [
    { turns: 20, sessions: Number(values["sessions-20"]), workspace: "bench-20" },
    { turns: 200, sessions: Number(values["sessions-200"]), workspace: "bench-200" },
  ];
  const tokensFile = join(dataDir, "tokens.yaml");
  await writeFile(
    tokensFile,
    yaml.dump({ tokens: sizes.map((s) => ({ token: newToken(), workspace: s.workspace, agent: "agent-0", role: "agent" })) }),
  );
  const stack = await startStack({
    config: loadConfig({ CAIRN_DATA_DIR: dataDir, CAIRN_PORT: "0", CAIRN_TOKENS_FILE: tokensFile }),
    log: silentLogger,
    embedder,
  });
  const results = [];
  try {
    for (const size of sizes) {
      const total = size.turns * size.sessions;
      log(`loading ${size.sessions} sessions of ${size.turns} turns (${total} turns, ${values.embedder} embedder)`);
      const turns = corpus(total, { agents: 3, sessions: 1, seed: size.turns });
      for (const [i, { agent, ...body }] of turns.entries()) {
        const principal = { workspace: size.workspace, agent, role: "agent" as const };
        await stack.runtime.services.writes.addMemory(principal, { ...body, session_id: `s${size.turns}-${Math.floor(i / size.turns)}` });
      }

      const memory = summarizerPort({
        storage: stack.runtime.storage,
        writes: stack.runtime.services.writes,
        embedder,
        tokens: new TokenRegistry([{ tokenSha256: "bench", workspace: size.workspace, agent: "summarizer", role: "agent" }]),
      });
      const config = loadSummarizerConfig({
        CAIRN_SUMMARY_WORKER: "off",
        CAIRN_SUMMARY_IDLE_MS: "0",
        CAIRN_SUMMARY_CONCURRENCY: values.concurrency,
      });
      const summarizer = createSummarizer(config, memory, silentLogger);

      embedTimes.length = 0;
      const round1 = await timed(() => summarizer.runOnce());
      const roundEmbedMs = embedTimes.reduce((a, b) => a + b, 0);

      const perSession: number[] = [];
      embedTimes.length = 0;
      for (let s = 0; s < size.sessions; s++) {
        const { ms, value } = await timed(() => summarizer.summarizeSession(size.workspace, `s${size.turns}-${s}`, { force: true }));
        if (!value.generated || value.summary.method !== "extractive" || value.summary.turn_count !== size.turns) {
          throw new Error(`unexpected summary for session ${s}`);
        }
        perSession.push(ms);
      }
      const sequentialEmbedMs = embedTimes.reduce((a, b) => a + b, 0);
      await summarizer.stop();

      const sequentialMs = perSession.reduce((a, b) => a + b, 0);
      results.push({
        turns_per_session: size.turns,
        sessions: size.sessions,
        worker_round: {
          concurrency: config.concurrency,
          seconds: round(round1.ms / 1000),
          sessions_per_minute: round((size.sessions / round1.ms) * 60_000, 1),
          embedding_share: round(roundEmbedMs / round1.ms),
        },
        one_at_a_time: {
          sessions_per_minute: round((size.sessions / sequentialMs) * 60_000, 1),
          per_session_ms: summarize(perSession),
          embedding_share: round(sequentialEmbedMs / sequentialMs),
        },
      });
      log(JSON.stringify(results.at(-1)));
    }
  } finally {
    await stack.stop();
    await timing.close();
    await rm(dataDir, { recursive: true, force: true });
  }

  const report = { embedder: `${values.embedder} (${embedder.model})`, results };
  if (values.json) {
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return;
  }
  process.stdout.write(`extractive summarizer, embedder ${report.embedder}\n`);
  for (const r of results) {
    process.stdout.write(
      `  ${r.turns_per_session} turns/session, ${r.sessions} sessions: worker round ${r.worker_round.sessions_per_minute} sessions/min ` +
        `(concurrency ${r.worker_round.concurrency}, cold start incl. scan, embedding ${Math.round(r.worker_round.embedding_share * 100)}%); ` +
        `one at a time ${r.one_at_a_time.sessions_per_minute} sessions/min, p50 ${r.one_at_a_time.per_session_ms.p50} ms, p95 ${r.one_at_a_time.per_session_ms.p95} ms ` +
        `(embedding ${Math.round(r.one_at_a_time.embedding_share * 100)}%)\n`,
    );
  }
  if (results.length === 2) {
    process.stdout.write(
      `  ratio 200/20 of per-session p50: ${round(results[1]!.one_at_a_time.per_session_ms.p50 / results[0]!.one_at_a_time.per_session_ms.p50)}\n`,
    );
  }
}
