import { execFile } from "node:child_process";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import yaml from "js-yaml";
import { startOpenAIStub } from "../testing/openai-stub.js";
import { newToken } from "../services/memory-core/src/auth/tokens.js";
import { loadConfig } from "../services/memory-core/src/config.js";
import { createEmbedder } from "../services/memory-core/src/embeddings/create.js";
import { silentLogger } from "../services/memory-core/src/logger.js";
import { startStack, type Stack } from "../services/memory-core/src/stack.js";
import { corpus } from "./corpus.js";
import { round } from "./stats.js";

/**
 * The `cairn` CLI's throughput on a real stack (embedded Chroma, HTTP, the CLI as a child process): backup of
 * N turns, restore into a fresh stack, the same restore again (everything skipped), verify, and re-embedding
 * after a model change. Embeddings come from the hashing stub (the local model would dominate every figure).
 *
 *   npm run bench -- ops-cli [--n 2000] [--json]
 */
export async function benchOpsCli(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { n: { type: "string", default: "2000" }, json: { type: "boolean", default: false } },
  });
  const n = Number(values.n);
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const root = await mkdtemp(join(tmpdir(), "cairn-bench-ops-"));
  const workspace = "bench";
  const agents = Array.from({ length: 10 }, (_, i) => ({ token: newToken(), workspace, agent: `agent-${i}`, role: "agent" as const }));
  const admin = { token: newToken(), workspace, agent: "ops", role: "admin" as const };
  const tokensFile = join(root, "tokens.yaml");
  await writeFile(tokensFile, yaml.dump({ tokens: [...agents, admin] }));
  const stub512 = await startOpenAIStub({ dimension: 512 });
  const stub256 = await startOpenAIStub({ dimension: 256 });
  const stacks: Stack[] = [];
  const start = async (dir: string, baseUrl: string, model: string, maintenance = false) => {
    const config = loadConfig({
      CAIRN_DATA_DIR: join(root, dir),
      CAIRN_PORT: "0",
      CAIRN_TOKENS_FILE: tokensFile,
      CAIRN_MAINTENANCE: maintenance ? "1" : "0",
    });
    const embedder = await createEmbedder({ kind: "openai", baseUrl, model, apiKey: undefined }, silentLogger);
    const stack = await startStack({ config, log: silentLogger, embedder });
    stacks.push(stack);
    return stack;
  };
  const cli = async (args: string[]) => {
    const t0 = performance.now();
    const code = await new Promise<number>((resolve) =>
      execFile(
        process.execPath,
        [fileURLToPath(new URL("../services/ops-cli/bin/cairn.mjs", import.meta.url)), ...args],
        { env: { PATH: process.env.PATH ?? "" }, maxBuffer: 1 << 26 },
        (error) => resolve(error ? Number((error as { code?: number }).code ?? 1) : 0),
      ),
    );
    if (code !== 0) throw new Error(`cairn ${args[0]} exited ${code}`);
    return (performance.now() - t0) / 1000;
  };

  try {
    const source = await start("source", stub512.baseUrl, "hash-512");
    const tokenOf = new Map(agents.map((a) => [a.agent, a.token]));
    const turns = corpus(n, { agents: agents.length, sessions: Math.max(10, n / 20) });
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < turns.length) {
          const { agent, ...body } = turns[next++]!;
          const res = await fetch(new URL("/v1/memories", source.url), {
            method: "POST",
            headers: { authorization: `Bearer ${tokenOf.get(agent)}`, "content-type": "application/json" },
            body: JSON.stringify(body),
          });
          if (res.status !== 201) throw new Error(`load: ${res.status}`);
          await res.arrayBuffer();
        }
      }),
    );
    log(`loaded ${n} turns`);
    const file = join(root, "backup.ndjson");
    const backupSeconds = await cli(["backup", "--out", file, "--tokens-file", tokensFile, "--url", source.url.toString()]);
    const bytes = (await stat(file)).size;
    const fresh = await start("fresh", stub512.baseUrl, "hash-512");
    const restoreSeconds = await cli(["restore", "--in", file, "--tokens-file", tokensFile, "--url", fresh.url.toString()]);
    const againSeconds = await cli(["restore", "--in", file, "--tokens-file", tokensFile, "--url", fresh.url.toString()]);
    const verifySeconds = await cli(["verify", "--tokens-file", tokensFile, "--url", fresh.url.toString()]);
    await fresh.stop();
    const changed = await start("fresh", stub256.baseUrl, "hash-256", true);
    const reembedSeconds = await cli(["reembed", "--tokens-file", tokensFile, "--url", changed.url.toString()]);
    const report = {
      n,
      backup: { seconds: round(backupSeconds), records_per_second: round(n / backupSeconds), megabytes: round(bytes / 1e6) },
      restore: { seconds: round(restoreSeconds), records_per_second: round(n / restoreSeconds) },
      restore_again_all_skipped: { seconds: round(againSeconds), records_per_second: round(n / againSeconds) },
      verify: { seconds: round(verifySeconds) },
      reembed: { seconds: round(reembedSeconds), records_per_second: round(n / reembedSeconds) },
      note: "each figure includes the CLI's start (node + tsx, about 1 s)",
    };
    process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatReport(report)}\n`);
  } finally {
    for (const stack of stacks.reverse()) await stack.stop().catch(() => undefined);
    await stub512.close();
    await stub256.close();
    await rm(root, { recursive: true, force: true });
  }
}

function formatReport(r: Record<string, unknown>): string {
  return Object.entries(r)
    .map(
      ([k, v]) =>
        `${k.padEnd(28)} ${
          typeof v === "object"
            ? Object.entries(v as object)
                .map(([a, b]) => `${a}=${b}`)
                .join("  ")
            : String(v)
        }`,
    )
    .join("\n");
}
