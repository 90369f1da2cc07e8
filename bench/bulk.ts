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
import { ChromaFaults } from "../services/memory-core/test/support/chroma-faults.js";
import type { AddMemoryRequest } from "../services/ops-cli/src/import/draft.js";
import { RedactingClient, storeMemories, totalsOf } from "../services/ops-cli/src/import/writer.js";
import { corpus } from "./corpus.js";
import { round } from "./stats.js";
import { startInProcessServer } from "./in-process-server.js";
import { startHashStub } from "./timed-embedder.js";

/**
 * The importers' write path: turns per second through `add_memories` (the ops CLI's storeMemories, chunks of
 * 500) against `add_memory` one at a time (what the importers did before), with the hashing embeddings stub so
 * that the embedding does not hide the store's round trips. Each run writes into an empty workspace of its own;
 * a second pass of the largest run measures replays (an import run again). With --count-requests, Chroma
 * requests per turn are counted by a pass-through proxy in front of the real Chroma (in this process: it slows
 * the server down, so turns/s are measured without it).
 *
 *   npm run bench -- bulk [--sizes 5000,20000] [--single 300] [--count-requests] [--json]
 *
 * Client and server share one process here, as in the writes bench.
 */
export async function benchBulk(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      sizes: { type: "string", default: "5000,20000" },
      single: { type: "string", default: "300" },
      json: { type: "boolean", default: false },
      "count-requests": { type: "boolean", default: false },
    },
  });
  const sizes = values.sizes.split(",").map(Number);
  const singles = Number(values.single);
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const dir = await mkdtemp(join(tmpdir(), "cairn-bench-bulk-"));
  const chroma = await startEmbeddedChroma({ path: join(dir, "chroma"), logFile: join(dir, "chroma.log") });
  // The counting proxy shares this process with the server and costs it time: only when asked for.
  const proxy = values["count-requests"] ? await ChromaFaults.start(chroma.url) : undefined;
  const stub = await startHashStub();
  const embedder = await createEmbedder({ kind: "openai", baseUrl: stub.baseUrl, model: "hash-512", apiKey: undefined }, silentLogger);
  const runs = [...sizes.map((n, i) => ({ name: `bulk-${i}`, n })), { name: "single", n: singles }];
  const admins = runs.map((r) => ({ token: newToken(), workspace: r.name, agent: "importer", role: "admin" as const }));
  const tokens = new TokenRegistry(parseTokensFile(yaml.dump({ tokens: admins })));
  const server = await startInProcessServer({ chromaUrl: proxy?.url ?? chroma.url, embedder, tokens });
  const url = server.url;
  const clientOf = (name: string) => new RestClient({ baseUrl: url, token: admins.find((a) => a.workspace === name)!.token });
  const turnsOf = (n: number, seed: number): AddMemoryRequest[] =>
    corpus(n, { agents: 20, sessions: Math.max(1, Math.floor(n / 25)), seed }).map(({ agent, ...turn }, i) => ({
      ...turn,
      author: agent,
      source: "import",
      idempotency_key: `bench-${seed}-${i}`,
    }));
  const measure = async (run: () => Promise<unknown>, n: number) => {
    const before = proxy?.calls.length ?? 0;
    const start = performance.now();
    const value = await run();
    const seconds = (performance.now() - start) / 1000;
    return {
      value,
      turns: n,
      seconds: round(seconds, 1),
      turns_per_s: round(n / seconds, 1),
      ...(proxy ? { chroma_requests_per_turn: round((proxy.calls.length - before) / n, 3) } : {}),
    };
  };

  try {
    const bulk = [];
    for (const [i, n] of sizes.entries()) {
      const turns = turnsOf(n, 100 + i);
      const client = new RedactingClient(clientOf(`bulk-${i}`));
      const first = await measure(() => storeMemories(client, turns), n);
      const totals = totalsOf(first.value as Awaited<ReturnType<typeof storeMemories>>);
      if (totals.stored !== n) throw new Error(`add_memories stored ${totals.stored} of ${n}`);
      log(`add_memories: ${n} turns in ${first.seconds} s`);
      const again = i === sizes.length - 1 ? await measure(() => storeMemories(client, turns), n) : undefined;
      if (again && totalsOf(again.value as Awaited<ReturnType<typeof storeMemories>>).replayed !== n)
        throw new Error("a second import did not replay");
      bulk.push({ ...strip(first), ...(again ? { replay: strip(again) } : {}) });
    }
    const client = clientOf("single");
    const singleTurns = turnsOf(singles, 999);
    const single = await measure(async () => {
      for (const turn of singleTurns) await client.call("add_memory", turn);
    }, singles);
    log(`add_memory: ${singles} turns one at a time in ${single.seconds} s`);
    const report = { bulk, single: strip(single) };
    if (values.json) process.stdout.write(`${JSON.stringify(report)}\n`);
    else {
      process.stdout.write("importer writes into an empty workspace, hashing embeddings stub, one client\n");
      const line = (name: string, r: Figures) =>
        `${name.padEnd(34)} ${String(r.turns_per_s).padStart(7)} turns/s  (${r.turns} turns in ${r.seconds} s${r.chroma_requests_per_turn === undefined ? "" : `, Chroma requests per turn ${r.chroma_requests_per_turn}`})`;
      for (const b of bulk) {
        process.stdout.write(`${line(`add_memories, ${b.turns} turns`, b)}\n`);
        if (b.replay) process.stdout.write(`${line(`add_memories, the same ${b.turns} again`, b.replay)}\n`);
      }
      process.stdout.write(`${line(`add_memory one at a time, ${singles}`, report.single)}\n`);
      const best = bulk.at(-1)!;
      process.stdout.write(`bulk / one at a time: ${round(best.turns_per_s / report.single.turns_per_s, 1)}×\n`);
    }
  } finally {
    await server.close();
    await proxy?.stop();
    await stub.close();
    await chroma.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

interface Figures {
  turns: number;
  seconds: number;
  turns_per_s: number;
  chroma_requests_per_turn?: number;
}

const strip = <T extends Figures & { value: unknown }>({ value: _value, ...rest }: T): Figures => rest;
