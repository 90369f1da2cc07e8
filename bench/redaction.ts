import { randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { looksRandom, redact, redactStrings } from "../services/ops-cli/src/import/redact.js";
import { corpus } from "./corpus.js";
import { round } from "./stats.js";

/**
 * How the importers' redaction of bare AWS secret access keys (`looksRandom`) does on both sides: the share of
 * random 40-character keys it takes, and the runs of 40 base64 characters in real text (this repository and its
 * node_modules: code, docs, JSON) it takes although they are not keys. Then what redaction costs per turn, as
 * the importers' send boundary (`redactStrings` on each request) runs it.
 *
 *   npm run bench -- redaction [--keys 200000] [--turns 2000]
 */
export async function benchRedaction(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { keys: { type: "string", default: "200000" }, turns: { type: "string", default: "2000" } },
  });
  const keys = Number(values.keys);
  let missed = 0;
  for (let i = 0; i < keys; i++) if (!looksRandom(randomBytes(30).toString("base64"))) missed++;
  process.stdout.write(`random 40-character keys: ${keys}, kept (not read as random): ${missed} (${round((missed / keys) * 100, 3)}%)\n`);

  const root = fileURLToPath(new URL("..", import.meta.url));
  const texts = /\.(?:ts|js|mjs|cjs|md|json|yaml)$/;
  const runs = new Set<string>();
  let total = 0;
  let files = 0;
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !texts.test(entry.name)) continue;
    const path = join(entry.parentPath, entry.name);
    if (path.includes("/.git/")) continue;
    const text = await readFile(path, "utf8").catch(() => "");
    if (text.length > 2_000_000) continue;
    files++;
    for (const m of text.matchAll(/(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g)) {
      total++;
      if (looksRandom(m[0])) runs.add(m[0]);
    }
  }
  process.stdout.write(`text files: ${files}, runs of 40 base64 characters: ${total}, distinct runs taken for keys: ${runs.size}\n`);
  for (const run of runs) process.stdout.write(`  taken: ${run}\n`);

  const turns = corpus(Number(values.turns), { agents: 10, sessions: 50 }).map((t) => ({ ...t, source: "import" }));
  const bytes = turns.reduce((n, t) => n + Buffer.byteLength(JSON.stringify(t)), 0);
  const measure = (fn: () => void) => {
    fn();
    const start = process.hrtime.bigint();
    fn();
    return Number(process.hrtime.bigint() - start) / 1e6;
  };
  const boundary = measure(() => redactStrings({ memories: turns }));
  const fields = measure(() => turns.forEach((t) => [t.prompt, t.thought, t.response].forEach(redact)));
  process.stdout.write(
    `turns: ${turns.length} (${round(bytes / turns.length)} bytes each); redactStrings over the requests: ${round(boundary)} ms ` +
      `(${round((boundary * 1000) / turns.length)} µs a turn); redact of prompt, thought, response: ${round(fields)} ms\n`,
  );
}
