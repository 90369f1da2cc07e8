import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import yaml from "js-yaml";
import { newToken, parseTokensFile, TokenRegistry } from "../services/memory-core/src/auth/tokens.js";
import { startEmbeddedChroma } from "../services/memory-core/src/embedded/chroma-server.js";
import { createEmbedder } from "../services/memory-core/src/embeddings/create.js";
import { silentLogger } from "../services/memory-core/src/logger.js";
import { ChromaFaults } from "../services/memory-core/test/support/chroma-faults.js";
import { corpus } from "./corpus.js";
import { summarize, timed } from "./stats.js";
import { startInProcessServer } from "./in-process-server.js";
import { startHashStub } from "./timed-embedder.js";

/**
 * What one `add_memory` costs on its way to Chroma: Chroma requests per write (counted by a pass-through proxy
 * in front of the real Chroma), and the write's latency alone and under concurrent writers, with the hashing
 * embeddings stub so that the embedding does not hide the store's round trips.
 *
 *   npm run bench -- writes [--preload 2000] [--samples 200] [--writers 16] [--kind turn|decision]
 *     [--change-wording] [--json]
 *
 * `--kind decision` writes the measured turns as decisions: each also looks for the live decisions it may
 * supersede (a lexical search, and a dense one when it says it changes something), which other kinds skip.
 * `--change-wording` ends each measured turn's response with a sentence saying it replaces something, so that
 * every decision takes the dense look too.
 *
 * Client and server share one process here: latencies include the client's side of each request.
 */
export async function benchWrites(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      preload: { type: "string", default: "2000" },
      samples: { type: "string", default: "200" },
      writers: { type: "string", default: "16" },
      kind: { type: "string", default: "turn" },
      "change-wording": { type: "boolean", default: false },
      json: { type: "boolean", default: false },
    },
  });
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const dir = await mkdtemp(join(tmpdir(), "cairn-bench-writes-"));
  const chroma = await startEmbeddedChroma({ path: join(dir, "chroma"), logFile: join(dir, "chroma.log") });
  const proxy = await ChromaFaults.start(chroma.url);
  const stub = await startHashStub();
  const embedder = await createEmbedder({ kind: "openai", baseUrl: stub.baseUrl, model: "hash-512", apiKey: undefined }, silentLogger);
  const agents = Array.from({ length: 20 }, (_, i) => ({
    token: newToken(),
    workspace: "writes",
    agent: `agent-${i}`,
    role: "agent" as const,
  }));
  const tokens = new TokenRegistry(parseTokensFile(yaml.dump({ tokens: agents })));
  const server = await startInProcessServer({ chromaUrl: proxy.url, embedder, tokens });
  const url = server.url;
  const tokenOf = new Map(agents.map((a) => [a.agent, a.token]));
  const write = async (turn: ReturnType<typeof corpus>[number], tag: string) => {
    const { agent, ...body } = turn;
    const response = await fetch(new URL("/v1/memories", url), {
      method: "POST",
      headers: { authorization: `Bearer ${tokenOf.get(agent)!}`, "content-type": "application/json" },
      body: JSON.stringify({
        ...body,
        session_id: `${body.session_id}-${tag}`,
        ...(tag === "preload" ? {} : { kind: values.kind }),
        ...(tag !== "preload" && values["change-wording"] ? { response: `${body.response} It replaces the earlier approach.` } : {}),
      }),
    });
    await response.arrayBuffer();
    if (response.status !== 201) throw new Error(`add_memory answered ${response.status}`);
  };
  const run = async (turns: ReturnType<typeof corpus>, writers: number, tag: string) => {
    const latencies: number[] = [];
    const before = proxy.calls.length;
    let next = 0;
    await Promise.all(
      Array.from({ length: writers }, async () => {
        while (next < turns.length) {
          const turn = turns[next++]!;
          latencies.push((await timed(() => write(turn, tag))).ms);
        }
      }),
    );
    const calls = proxy.calls.slice(before);
    return { latency: summarize(latencies), chroma_requests_per_write: Number((calls.length / turns.length).toFixed(2)) };
  };

  try {
    const preload = Number(values.preload);
    const samples = Number(values.samples);
    const writers = Number(values.writers);
    await run(corpus(preload, { agents: 20, sessions: 200 }), 8, "preload");
    log(`preloaded ${preload} turns`);
    const alone = await run(corpus(samples, { agents: 20, sessions: 50, seed: 7 }), 1, "alone");
    const concurrent = await run(corpus(samples * 2, { agents: 20, sessions: 50, seed: 11 }), writers, "concurrent");
    const report = { preload, samples, writers, kind: values.kind, alone, concurrent };
    if (values.json) process.stdout.write(`${JSON.stringify(report)}\n`);
    else {
      const line = (name: string, r: typeof alone) =>
        `${name.padEnd(22)} p50 ${r.latency.p50.toFixed(1)} ms  p95 ${r.latency.p95.toFixed(1)} ms  Chroma requests per write ${r.chroma_requests_per_write}`;
      process.stdout.write(`add_memory (kind ${values.kind}) over ${preload} stored turns, hashing embeddings stub\n`);
      process.stdout.write(`${line("one writer", alone)}\n${line(`${writers} writers`, concurrent)}\n`);
    }
  } finally {
    await server.close();
    await proxy.stop();
    await stub.close();
    await chroma.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
