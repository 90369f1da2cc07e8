import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import yaml from "js-yaml";
import { loadConfig, silentLogger, startStack } from "@cairn/memory-core";
import { newToken } from "../services/memory-core/src/auth/tokens.js";
import { codingTurn, SUBJECT_COUNT } from "../services/memory-core/test/fixtures/coding-turns.js";
import { printHookRuns, type HookRuns } from "./stats.js";

const BIN = fileURLToPath(new URL("../services/loader/bin/cairn-load.mjs", import.meta.url));

/** Prompts a person would type about the stored work (each names its subject as people do), and prompts about other things. */
const RELATED = [
  "AUTH-412: add the dead-letter queue for token refreshes that fail three times",
  "why does token refresh go through a Redis stream with a consumer group?",
  "PAY-77 checkout sessions: can we drop the old cookie fallback now?",
  "are checkout sessions still kept in Postgres with a 30 minute TTL?",
  "CI-231 the flaky upload test is failing again, what did we do about it?",
  "apply the fake clock for the retry backoff to the download tests",
  "DB-58: run the orders migration index on production in the Tuesday window",
  "how did we avoid lock waits in the orders migration, CREATE INDEX CONCURRENTLY?",
  "PERF-19 search latency: profile the ranking step",
  "did caching the tokenizer per request fix the search p95?",
];
const UNRELATED = [
  "write a limerick about a giraffe who learns to play the cello",
  "set up a Kubernetes ingress for the marketing site with TLS",
  "translate the onboarding email into Portuguese",
  "what is the capital of Mongolia?",
  "add dark mode to the settings screen of the mobile app",
  "explain the difference between a monad and a functor",
  "rename the Slack channel for the design team",
  "generate a CSV of last quarter's invoices from the accounting export",
  "upgrade the Android build to Gradle 9",
  "plan the offsite agenda for the sales team in March",
];

/**
 * `npm run bench -- prompt-hook [--rounds N] [--turns N] [--json]`: the prompt hook as a harness runs it (a child
 * process per prompt, the hook's JSON on stdin) against a stack holding ordinary coding turns; how long it takes
 * (p50, p95, whole process) and how often it speaks on related and on unrelated prompts.
 */
export async function benchPromptHook(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      rounds: { type: "string", default: "3" },
      turns: { type: "string", default: "200" },
      json: { type: "boolean", default: false },
    },
  });
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const dir = await mkdtemp(join(tmpdir(), "cairn-bench-hook-"));
  const token = newToken();
  await writeFile(join(dir, "tokens.yaml"), yaml.dump({ tokens: [{ token, workspace: "hook", agent: "backend-dev", role: "agent" }] }));
  const stack = await startStack({
    config: loadConfig({ CAIRN_DATA_DIR: dir, CAIRN_PORT: "0", CAIRN_TOKENS_FILE: join(dir, "tokens.yaml") }),
    log: silentLogger,
  });
  try {
    const turns = Number(values.turns);
    log(`writing ${turns} coding turns (${SUBJECT_COUNT} subjects)`);
    for (let n = 0; n < turns; n++) {
      const res = await fetch(new URL("/v1/memories", stack.url), {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(codingTurn(n)),
      });
      if (res.status !== 201) throw new Error(`add_memory answered ${res.status}`);
    }
    const env = { PATH: process.env.PATH ?? "", CAIRN_URL: stack.url.origin, CAIRN_TOKEN: token };
    const run = (prompt: string) =>
      new Promise<{ ms: number; bytes: number }>((resolve) => {
        const started = performance.now();
        const child = execFile(process.execPath, [BIN, "--hook", "prompt"], { env }, (_error, stdout) =>
          resolve({ ms: performance.now() - started, bytes: Buffer.byteLength(stdout) }),
        );
        child.stdin!.end(JSON.stringify({ hook_event_name: "UserPromptSubmit", prompt }));
      });
    const results: Record<string, HookRuns> = {
      related: { ms: [], spoke: 0, runs: 0, bytes: [] },
      unrelated: { ms: [], spoke: 0, runs: 0, bytes: [] },
    };
    for (let r = 0; r < Number(values.rounds); r++) {
      for (const [set, prompts] of [
        ["related", RELATED],
        ["unrelated", UNRELATED],
      ] as const) {
        for (const prompt of prompts) {
          const { ms, bytes } = await run(prompt);
          const bucket = results[set]!;
          bucket.ms.push(ms);
          bucket.runs++;
          if (bytes > 0) {
            bucket.spoke++;
            bucket.bytes.push(bytes);
          }
        }
      }
    }
    printHookRuns(results, values.json);
  } finally {
    await stack.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
