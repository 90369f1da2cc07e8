import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { RestClient } from "@cairn/openapi";
import yaml from "js-yaml";
import { newToken, parseTokensFile, TokenRegistry } from "../services/memory-core/src/auth/tokens.js";
import { startEmbeddedChroma } from "../services/memory-core/src/embedded/chroma-server.js";
import { createEmbedder } from "../services/memory-core/src/embeddings/create.js";
import { silentLogger } from "../services/memory-core/src/logger.js";
import type { AddMemoryRequest } from "../services/ops-cli/src/import/draft.js";
import { RedactingClient, storeMemories, totalsOf } from "../services/ops-cli/src/import/writer.js";
import { corpus } from "./corpus.js";
import { startInProcessServer } from "./in-process-server.js";
import { round, summarize } from "./stats.js";
import { startHashStub } from "./timed-embedder.js";

/**
 * Review at the scale of an import: N imported memories pending (`add_memories`, hashing embeddings stub), then
 * `query_review_queue` (a page and the count, unfiltered and filtered), a `review_matching` dry run, approving
 * them all through `review_matching` (the server's bound per call), and, for the ratio, `review_memory` one at a
 * time over a share of them. memory-core's heap is read before and after (same process as the client).
 *
 *   npm run bench -- review [--n 5000] [--single 200] [--json]
 */
export async function benchReview(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      n: { type: "string", default: "5000" },
      single: { type: "string", default: "200" },
      json: { type: "boolean", default: false },
    },
  });
  const n = Number(values.n);
  const singles = Number(values.single);
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const dir = await mkdtemp(join(tmpdir(), "cairn-bench-review-"));
  const chroma = await startEmbeddedChroma({ path: join(dir, "chroma"), logFile: join(dir, "chroma.log") });
  const stub = await startHashStub();
  const embedder = await createEmbedder({ kind: "openai", baseUrl: stub.baseUrl, model: "hash-512", apiKey: undefined }, silentLogger);
  const admin = { token: newToken(), workspace: "review", agent: "git-import", role: "admin" as const };
  const tokens = new TokenRegistry(parseTokensFile(yaml.dump({ tokens: [admin] })));
  const server = await startInProcessServer({ chromaUrl: chroma.url, embedder, tokens });
  const client = new RestClient({ baseUrl: server.url, token: admin.token });
  const heapMb = () => {
    globalThis.gc?.();
    return round(process.memoryUsage().heapUsed / 2 ** 20, 1);
  };
  const median = async (runs: number, call: () => Promise<unknown>) => {
    const samples: number[] = [];
    for (let i = 0; i < runs; i++) {
      const start = performance.now();
      await call();
      samples.push(performance.now() - start);
    }
    return round(summarize(samples).p50, 1);
  };

  try {
    const turns: AddMemoryRequest[] = corpus(n + singles, { agents: 20, sessions: Math.max(1, Math.floor(n / 25)), seed: 41 }).map(
      ({ agent, ...turn }, i) => ({ ...turn, author: agent, source: "import", idempotency_key: `review-${i}` }),
    );
    const stored = totalsOf(await storeMemories(new RedactingClient(client), turns)).stored;
    if (stored !== n + singles) throw new Error(`stored ${stored} of ${n + singles}`);
    log(`${stored} imported memories pending`);
    const first = await client.call("query_review_queue", { limit: 20 });
    if (first.total !== n + singles) throw new Error(`the queue counts ${first.total}`);
    const session = turns[0]!.session_id;
    const heapBefore = heapMb();

    const queuePage = await median(20, () => client.call("query_review_queue", { limit: 20 }));
    const queueSummary = await median(20, () => client.call("query_review_queue", { limit: 20, detail: "summary" }));
    const queueSession = await median(20, () => client.call("query_review_queue", { limit: 20, session_id: session }));
    const queueSince = await median(20, () => client.call("query_review_queue", { limit: 20, since: "2000-01-01T00:00:00Z" }));
    const dryRun = await median(20, () => client.call("review_matching", { decision: "approve", reason: "bench", dry_run: true }));

    // review_memory one at a time over the first `singles` of the queue, for the ratio.
    const oneByOne: string[] = [];
    for (let after: string | null = null; oneByOne.length < singles;) {
      const page: Awaited<ReturnType<typeof client.call<"query_review_queue">>> = await client.call("query_review_queue", {
        limit: 100,
        ...(after ? { after } : {}),
      });
      oneByOne.push(...page.memories.map((m) => m.id));
      after = page.next_cursor;
      if (after === null) break;
    }
    const singleStart = performance.now();
    for (const id of oneByOne.slice(0, singles))
      await client.call("review_memory", { memory_id: id, decision: "approve", reason: "bench" });
    const singleSeconds = (performance.now() - singleStart) / 1000;

    const bulkStart = performance.now();
    let calls = 0;
    let reviewed = 0;
    let perCall = 0;
    for (;;) {
      const answer = await client.call("review_matching", { decision: "approve", reason: "bench" });
      calls += 1;
      reviewed += answer.reviewed;
      perCall = answer.per_call;
      if (answer.remaining === 0 || answer.reviewed === 0) break;
    }
    const bulkSeconds = (performance.now() - bulkStart) / 1000;
    const heapAfter = heapMb();
    const left = await client.call("query_review_queue", { limit: 1 });
    if (reviewed !== n || left.pending !== 0) throw new Error(`review_matching reviewed ${reviewed} of ${n}; ${left.pending} left`);

    const report = {
      pending: n + singles,
      queue_page_ms: queuePage,
      queue_page_summary_ms: queueSummary,
      queue_by_session_ms: queueSession,
      queue_since_ms: queueSince,
      review_matching_dry_run_ms: dryRun,
      review_matching: {
        memories: reviewed,
        calls,
        per_call: perCall,
        seconds: round(bulkSeconds, 1),
        per_s: round(reviewed / bulkSeconds, 1),
      },
      review_memory_one_at_a_time: { memories: singles, seconds: round(singleSeconds, 1), per_s: round(singles / singleSeconds, 1) },
      heap_mb: { before: heapBefore, after: heapAfter },
    };
    if (values.json) process.stdout.write(`${JSON.stringify(report)}\n`);
    else {
      process.stdout.write(`review at scale: ${report.pending} imported memories pending, hashing embeddings stub, one client\n`);
      process.stdout.write(`query_review_queue, a page of 20 and the count     ${queuePage} ms (median of 20)\n`);
      process.stdout.write(`  the same, detail summary                          ${queueSummary} ms\n`);
      process.stdout.write(`  filtered by session                               ${queueSession} ms\n`);
      process.stdout.write(`  filtered by since                                 ${queueSince} ms\n`);
      process.stdout.write(`review_matching dry run (count)                     ${dryRun} ms\n`);
      const b = report.review_matching;
      const s = report.review_memory_one_at_a_time;
      process.stdout.write(
        `review_matching, all ${b.memories}: ${b.calls} calls of ${b.per_call}, ${b.seconds} s, ${b.per_s} memories/s\n`,
      );
      process.stdout.write(`review_memory one at a time, ${s.memories}: ${s.seconds} s, ${s.per_s} memories/s\n`);
      process.stdout.write(`review_matching / review_memory: ${round(b.per_s / s.per_s, 1)}×\n`);
      process.stdout.write(`memory-core and client heap: ${heapBefore} MB before, ${heapAfter} MB after\n`);
    }
  } finally {
    await server.close();
    await stub.close();
    await chroma.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
