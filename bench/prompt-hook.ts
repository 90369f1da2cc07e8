import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import yaml from "js-yaml";
import { loadConfig, silentLogger, startStack } from "@cairn/memory-core";
import { newToken } from "../services/memory-core/src/auth/tokens.js";
import { round, summarize, runHook } from "./stats.js";

/** bench/fixtures/prompts/prompts.json: a team's memories (as add_memory takes them, `id` the label) and prompts. */
interface Fixture {
  /** `group`: the memory is stored only for that group's prompts (none: for every group's). */
  memories: Array<{ id: string; group?: string; [field: string]: unknown }>;
  /** A prompt with `memories` is related (the labels of the memories it bears on); one without is unrelated. */
  prompts: Array<{ group: string; prompt: string; memories?: string[] }>;
}

interface Tally {
  runs: number;
  /** Printed something. */
  spoke: number;
  /** Printed a pointer to a labelled memory (related prompts). */
  points: number;
  /** Printed pointers, none of them to a labelled memory (related prompts). */
  elsewhere: number;
  /** Fell silent on its own timeout: a silence that says nothing about the rule. */
  timeouts: number;
  ms: number[];
  bytes: number[];
}

/** bench/fixtures/paraphrase/paraphrase.json: questions in other words than their memory, and unrelated ones. */
interface ParaphraseFixture {
  memories: Array<{ id: string; group: string; prompt: string; thought: string; response: string }>;
  questions: Array<{ group: string; question: string; memory: string | null }>;
}

/** The paraphrase set read as prompts: each question a prompt, its groups prefixed `paraphrase`. */
function asPrompts(fixture: Fixture | ParaphraseFixture): Fixture {
  if (!("questions" in fixture)) return fixture;
  return {
    memories: fixture.memories.map(({ group: _group, ...memory }) => memory),
    prompts: fixture.questions.map((q) => ({
      group: `paraphrase ${q.group}`,
      prompt: q.question,
      ...(q.memory ? { memories: [q.memory] } : {}),
    })),
  };
}

/**
 * `npm run bench -- prompt-hook [--file FILE] [--rounds N] [--json] [--verbose]`: the prompt hook as a harness runs
 * it (a child process per prompt, the hook's JSON on stdin) against a fresh stack holding the fixture's memories,
 * each written through the API in a session of its own; a group's prompts are asked over the memories without a
 * `group` and its own (a group written by another author brings its own team's store, labelled against it alone). Per group of the fixture (`tuning`, `held-out`, any
 * group appended later) and per half: for related prompts, the share where the hook pointed at a memory the prompt
 * bears on ("points") and the share where it spoke with pointers to other memories only; for unrelated prompts,
 * the share where it spoke; p50 and p95 of a whole process; the largest output. `--verbose` prints each prompt's
 * pointers (by label) and what the query itself answers at `min_confidence: low`, hybrid and lexical, each hit with its
 * evidence (similarity / share of the prompt's information). `--file` also
 * reads the paraphrase set (bench/fixtures/paraphrase/paraphrase.json), its questions as prompts.
 */
export async function benchPromptHook(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      file: { type: "string", default: fileURLToPath(new URL("fixtures/prompts/prompts.json", import.meta.url)) },
      rounds: { type: "string", default: "1" },
      json: { type: "boolean", default: false },
      verbose: { type: "boolean", default: false },
    },
  });
  const fixture = asPrompts(JSON.parse(await readFile(values.file!, "utf8")) as Fixture | ParaphraseFixture);
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const dir = await mkdtemp(join(tmpdir(), "cairn-bench-hook-"));
  // A workspace per group: a group's prompts are asked over the memories without a group and its own, never over
  // another group's (each author labelled its prompts against its own team's memories).
  const groups = [...new Set(fixture.prompts.map((p) => p.group))];
  const tokenOf = new Map(groups.map((group) => [group, newToken()]));
  const tokens = groups.map((group, i) => ({ token: tokenOf.get(group)!, workspace: `hook-${i}`, agent: "backend-dev", role: "agent" }));
  await writeFile(join(dir, "tokens.yaml"), yaml.dump({ tokens }));
  const stack = await startStack({
    config: loadConfig({ CAIRN_DATA_DIR: dir, CAIRN_PORT: "0", CAIRN_TOKENS_FILE: join(dir, "tokens.yaml") }),
    log: silentLogger,
  });
  const post = async (token: string, path: string, body: unknown) => {
    const res = await fetch(new URL(path, stack.url), {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const json = (await res.json()) as Record<string, unknown>;
    if (!res.ok) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(json)}`);
    return json;
  };
  try {
    log(`writing ${fixture.memories.length} memories`);
    const labelOf = new Map<string, string>();
    for (const { id, group, ...memory } of fixture.memories) {
      for (const asking of typeof group === "string" ? [group] : groups) {
        const written = await post(tokenOf.get(asking)!, "/v1/memories", { session_id: `prompts-${id}`, ...memory });
        labelOf.set(written.id as string, id);
      }
    }
    const run = (token: string, prompt: string) =>
      runHook("prompt", JSON.stringify({ session_id: "bench", hook_event_name: "UserPromptSubmit", prompt }), {
        env: { PATH: process.env.PATH ?? "", CAIRN_URL: stack.url.origin, CAIRN_TOKEN: token },
      });
    const tallies = new Map<string, Tally>();
    for (let r = 0; r < Number(values.rounds); r++) {
      for (const { group, prompt, memories } of fixture.prompts) {
        const related = (memories?.length ?? 0) > 0;
        const set = `${group} ${related ? "related" : "unrelated"}`;
        const tally = tallies.get(set) ?? { runs: 0, spoke: 0, points: 0, elsewhere: 0, timeouts: 0, ms: [], bytes: [] };
        tallies.set(set, tally);
        const token = tokenOf.get(group)!;
        const { ms, stdout, stderr } = await run(token, prompt);
        tally.runs++;
        tally.ms.push(ms);
        if (stderr.includes("no answer within")) tally.timeouts++;
        const pointed = [...stdout.matchAll(/\bt_[0-9a-f]{32}\b/g)].map(([id]) => labelOf.get(id) ?? id);
        if (stdout.length > 0) {
          tally.spoke++;
          tally.bytes.push(Buffer.byteLength(stdout));
          if (pointed.some((label) => memories?.includes(label))) tally.points++;
          else if (related) tally.elsewhere++;
        }
        if (values.verbose && r === 0) {
          const answers = await Promise.all(
            (["hybrid", "lexical"] as const).map(async (mode) => {
              const answer = (await post(token, "/v1/memories/query", {
                query: prompt.slice(0, 1000),
                limit: 5,
                min_confidence: "low",
                mode,
                evidence: true,
              })) as {
                hits: Array<{
                  confidence: string;
                  matched_by: string[];
                  evidence?: { similarity?: number; share?: number };
                  memory: { id: string };
                }>;
              };
              const hits = answer.hits.map(
                (h) =>
                  `${labelOf.get(h.memory.id)}:${h.confidence}:${h.matched_by.join("+")}:${h.evidence?.similarity ?? "-"}/${h.evidence?.share ?? "-"}`,
              );
              return `${mode} ${hits.join(" ") || "-"}`;
            }),
          );
          log(`${set} | ${prompt.replace(/\s+/g, " ").slice(0, 90)}`);
          log(`   want ${(memories ?? []).join(",") || "-"} | pointed ${pointed.join(",") || "-"} | ${answers.join(" | ")}`);
        }
      }
    }
    const report = Object.fromEntries(
      [...tallies].map(([set, t]) => {
        const { p50, p95 } = summarize(t.ms);
        const related = set.endsWith(" related");
        return [
          set,
          {
            runs: t.runs,
            ...(related ? { points: round(t.points / t.runs, 3), elsewhere: round(t.elsewhere / t.runs, 3) } : {}),
            spoke: round(t.spoke / t.runs, 3),
            timeouts: t.timeouts,
            p50_ms: Math.round(p50),
            p95_ms: Math.round(p95),
            max_bytes: Math.max(0, ...t.bytes),
          },
        ];
      }),
    );
    if (values.json) process.stdout.write(`${JSON.stringify(report)}\n`);
    else for (const [set, r] of Object.entries(report)) process.stdout.write(`${set.padEnd(20)} ${JSON.stringify(r)}\n`);
  } finally {
    await stack.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
