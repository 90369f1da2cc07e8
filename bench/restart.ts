import { fork } from "node:child_process";
import { rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { RestartChildOptions } from "./restart-child.js";
import { startHashStub } from "./timed-embedder.js";

/**
 * Restart to first answered query (issue 20 item 2), over a store kept by `bench memory-core --embedder hash
 * --data-dir DIR` (or grown with `bench resident --grow`): each start is a process of its own, timed from its
 * first line to the answer of one hybrid query, with the lexical index built from Chroma (`CAIRN_INDEX_DIR=off`)
 * and then loaded from its snapshot (written by the stop of a start before).
 *
 *   npm run bench -- restart --data-dir DIR [--runs 2] [--query TEXT]
 */
export async function benchRestart(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      "data-dir": { type: "string" },
      runs: { type: "string", default: "2" },
      query: { type: "string", default: "why did the deploy fail after the cache change" },
    },
  });
  const dataDir = values["data-dir"];
  if (!dataDir) throw new Error("--data-dir is required");
  const runs = Number(values.runs);
  const indexDir = join(dataDir, "lexical");
  const stub = await startHashStub();
  const start = (index: string) =>
    new Promise<Record<string, unknown> & { hits: string[] }>((resolve, reject) => {
      const options: RestartChildOptions = { dataDir, indexDir: index, hashStubUrl: stub.baseUrl, query: values.query };
      const child = fork(fileURLToPath(new URL("./restart-child.ts", import.meta.url)), [JSON.stringify(options)], {
        execArgv: ["--import", "tsx"],
        stdio: ["ignore", "inherit", "inherit", "ipc"],
      });
      child.once("message", (m) => resolve(m as Record<string, unknown> & { hits: string[] }));
      child.once("exit", (code) => (code !== 0 ? reject(new Error(`the start exited (code ${code})`)) : undefined));
    });
  const report = (label: string, r: Record<string, unknown>) =>
    process.stdout.write(`${JSON.stringify({ start: label, ...r, hits: (r.hits as string[]).length })}\n`);
  try {
    await rm(indexDir, { recursive: true, force: true });
    const cold: Array<Record<string, unknown> & { hits: string[] }> = [];
    for (let i = 0; i < runs; i++) {
      const r = await start("off");
      report("cold (index built from Chroma)", r);
      cold.push(r);
    }
    // The first start with snapshots on builds from Chroma and saves the snapshots when it stops.
    report("first with snapshots (built, saved on stop)", await start(indexDir));
    const bytes = (await stat(join(indexDir, "bench", "turns.snap"))).size;
    const warm: Array<Record<string, unknown> & { hits: string[] }> = [];
    for (let i = 0; i < runs; i++) {
      const r = await start(indexDir);
      report("from snapshot", r);
      warm.push(r);
    }
    const same = warm.every((w) => JSON.stringify(w.hits) === JSON.stringify(cold[0]!.hits));
    const median = (rs: Array<Record<string, unknown>>) =>
      rs.map((r) => Number(r.answered_s)).sort((a, b) => a - b)[Math.floor(rs.length / 2)];
    process.stdout.write(
      `${JSON.stringify({ cold_answered_s: median(cold), snapshot_answered_s: median(warm), snapshot_bytes: bytes, same_hits: same })}\n`,
    );
  } finally {
    await stub.close();
  }
}
