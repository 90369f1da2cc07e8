import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";
import { loadConfig, silentLogger, startStack } from "@cairn/memory-core";
import { similarChanges } from "../services/memory-core/src/domain/change-assessment.js";
import { HybridRetrieval } from "../services/memory-core/src/retrieval/hybrid-retrieval.js";
import { DEFAULT_TUNING } from "../services/memory-core/src/retrieval/retrieval-tuning.js";
import { keptStore } from "./kept-store.js";
import { round, summarize } from "./stats.js";

const execFileAsync = promisify(execFile);
const CAIRN = fileURLToPath(new URL("../services/ops-cli/bin/cairn.mjs", import.meta.url));
const CHECKOUT = fileURLToPath(new URL("..", import.meta.url));
const INTENTS = fileURLToPath(new URL("./fixtures/assess-change/intents.json", import.meta.url));
const WORKSPACE = "history";
/** What a kept data dir holds beside the store and its tokens: the commit imported. */
const MARKER = "assess-change-import.json";

type Group = "tuning" | "held-out";

interface Intent {
  id: string;
  group: Group;
  intent: string;
  similar: string[];
  not_similar: string[];
  note?: string;
}

interface Labels {
  pinned: string;
  intents: Intent[];
}

interface Imported {
  pinned: string;
  commits: number;
}

interface Assessment {
  confidence: string;
  similar: number;
  outcomes: Array<{ outcome: string; count: number; changes: Array<{ memory_id: string; commit?: string }> }>;
}

/**
 * What `assess_change` groups, judged against labelled intents (issue 39): over this repository's history, pinned at
 * the labels' commit, how many of the changes the operation weighs a person would call similar to the intent.
 *
 *   npm run bench -- assess-change [--intents FILE] [--repo DIR] [--data-dir DIR] [--group tuning|held-out] [--json]
 *
 * Clones `--repo` (this checkout by default), checks out the labels' `pinned` commit and imports its history with
 * `cairn import git` (a child process, an importer token) into a fresh memory-core in this process (local embedder).
 * `--data-dir` keeps that store: a later run over the same pinned commit skips the clone and the import. Each intent
 * is asked over REST; the response cites only the newest three of each outcome, so every change it weighed comes
 * from `similarChanges` (the function the operation calls, over the same store), checked against the response's
 * `similar` count. Per intent and per group: the changes grouped, those labelled similar (precision), the labelled
 * similar ones found (recall), `not_similar` ones grouped, and whether an intent with no similar history answered
 * `none`. A grouped change that is in neither list (the labeller left it unjudged) counts against precision; the
 * precision over judged changes alone is printed beside it. `assess_ms`: each REST call's time, the store warm.
 */
export async function benchAssessChange(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      intents: { type: "string", default: INTENTS },
      repo: { type: "string", default: CHECKOUT },
      "data-dir": { type: "string" },
      group: { type: "string" },
      json: { type: "boolean", default: false },
    },
  });
  const labels = JSON.parse(await readFile(resolve(values.intents), "utf8")) as Labels;
  if (values.group !== undefined && values.group !== "tuning" && values.group !== "held-out")
    throw new Error("--group is tuning or held-out");
  const intents = labels.intents.filter((i) => values.group === undefined || i.group === values.group);
  const log = (line: string) => process.stderr.write(`${line}\n`);

  // A kept store holds the history at the labels' commit (its marker says so), or nothing yet.
  const keptDir = values["data-dir"] === undefined ? undefined : resolve(values["data-dir"]);
  let imported =
    keptDir && existsSync(join(keptDir, MARKER)) ? (JSON.parse(await readFile(join(keptDir, MARKER), "utf8")) as Imported) : undefined;
  if (imported && !imported.pinned.startsWith(labels.pinned))
    throw new Error(`--data-dir holds the history at ${imported.pinned}, not at ${labels.pinned}: name another`);
  if (keptDir && !imported && existsSync(keptDir) && (await readdir(keptDir)).length > 0)
    throw new Error(`--data-dir ${keptDir} holds something else: name an empty one`);
  const store = await keptStore(keptDir, {
    prefix: "cairn-bench-assess-",
    workspace: WORKSPACE,
    agents: [
      { agent: "importer", role: "importer" },
      { agent: "dev", role: "agent" },
    ],
  });
  const importerToken = store.tokenOf.get("importer")!;
  const agentToken = store.tokenOf.get("dev")!;
  const stack = await startStack({
    config: loadConfig({ CAIRN_DATA_DIR: store.dataDir, CAIRN_PORT: "0", CAIRN_TOKENS_FILE: store.tokensFile }),
    log: silentLogger,
  });

  try {
    if (!imported) {
      const work = await mkdtemp(join(tmpdir(), "cairn-bench-assess-repo-"));
      try {
        const clone = join(work, "repo");
        await execFileAsync("git", ["clone", "-q", "--no-hardlinks", resolve(values.repo), clone]);
        await execFileAsync("git", ["-C", clone, "checkout", "-q", "--detach", labels.pinned]);
        const started = performance.now();
        const { stdout } = await execFileAsync(
          process.execPath,
          [CAIRN, "import", "git", "--repo", clone, "--url", stack.url.origin, "--token", importerToken],
          { env: { PATH: process.env.PATH ?? "" }, cwd: work, maxBuffer: 16 * 1024 * 1024 },
        );
        log(`${stdout.trim()} (${round((performance.now() - started) / 1000, 1)} s)`);
        const commits = Number((await execFileAsync("git", ["-C", clone, "rev-list", "--count", "HEAD"])).stdout.trim());
        const pinned = (await execFileAsync("git", ["-C", clone, "rev-parse", "HEAD"])).stdout.trim();
        imported = { pinned, commits };
        await writeFile(join(store.dataDir, MARKER), JSON.stringify(imported, null, 2));
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    }

    // The operation's own selection, over the same store and indexes as the server's.
    const { runtime } = stack;
    const retrieval = new HybridRetrieval(runtime.storage.indexed, runtime.embedder, runtime.services.lexical, DEFAULT_TUNING);
    const rows: Row[] = [];
    const times: number[] = [];
    for (const intent of intents) {
      const started = performance.now();
      const response = await fetch(new URL("/v1/changes/assessment", stack.url), {
        method: "POST",
        headers: { authorization: `Bearer ${agentToken}`, "content-type": "application/json" },
        body: JSON.stringify({ intent: intent.intent }),
      });
      if (response.status !== 200) throw new Error(`assess_change answered ${response.status}: ${await response.text()}`);
      const answer = (await response.json()) as Assessment;
      times.push(performance.now() - started);
      const weighed = await similarChanges(retrieval, WORKSPACE, intent.intent);
      const commits = weighed.changes.map((c) => c.refs.find((r) => /^[0-9a-f]{40}$/.test(r)) ?? `memory:${c.id}`);
      const cited = answer.outcomes.flatMap((o) => o.changes.map((c) => c.commit ?? `memory:${c.memory_id}`));
      const consistent = answer.similar === commits.length && cited.every((c) => commits.includes(c));
      rows.push(judge(intent, answer.confidence, commits, consistent));
    }

    const groups = (["tuning", "held-out"] as const).filter((g) => rows.some((r) => r.group === g));
    const report = {
      pinned: labels.pinned,
      commits: imported.commits,
      ...Object.fromEntries(groups.map((g) => [g, totals(rows.filter((r) => r.group === g))])),
      inconsistent: rows.filter((r) => !r.consistent).map((r) => r.id),
      assess_ms: summarize(times),
    };
    if (!values.json) {
      const line = (cells: Array<string | number>) => cells.map((c, i) => String(c).padEnd(i === 0 ? 22 : 9)).join(" ");
      process.stdout.write(`${line(["intent", "group", "conf", "grouped", "similar", "precision", "recall", "not_sim", "unlabelled"])}\n`);
      for (const r of rows)
        process.stdout.write(
          `${line([r.id.slice(0, 22), r.group, r.confidence, r.grouped.length, r.hits.length, fmt(r.precision), fmt(r.recall), r.notSimilar.length, r.unlabelled.length])}${r.consistent ? "" : "  (response and selection differ)"}\n`,
        );
      for (const g of groups) {
        const t = totals(rows.filter((r) => r.group === g));
        process.stdout.write(
          `${g}: precision ${fmt(t.precision)} (${t.similar_grouped}/${t.grouped}), recall ${fmt(t.recall)} (${t.similar_grouped}/${t.labelled_similar}), ` +
            `not_similar grouped ${t.not_similar_grouped}, unlabelled grouped ${t.unlabelled_grouped} ` +
            `(precision over judged ones ${fmt(t.judged_precision)}), ` +
            `no-history intents answered none ${t.none_answered}/${t.no_history}\n`,
        );
      }
    }
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } finally {
    await stack.stop();
    await store.dispose();
  }
}

interface Row {
  id: string;
  group: Group;
  confidence: string;
  consistent: boolean;
  labelled: number;
  grouped: string[];
  hits: string[];
  notSimilar: string[];
  unlabelled: string[];
  precision: number | null;
  recall: number | null;
}

function judge(intent: Intent, confidence: string, grouped: string[], consistent: boolean): Row {
  const similar = new Set(intent.similar);
  const notSimilar = new Set(intent.not_similar);
  const hits = grouped.filter((c) => similar.has(c));
  return {
    id: intent.id,
    group: intent.group,
    confidence,
    consistent,
    labelled: similar.size,
    grouped,
    hits,
    notSimilar: grouped.filter((c) => notSimilar.has(c)),
    unlabelled: grouped.filter((c) => !similar.has(c) && !notSimilar.has(c)),
    precision: grouped.length === 0 ? null : hits.length / grouped.length,
    recall: similar.size === 0 ? null : hits.length / similar.size,
  };
}

/** A group's figures over all its grouped changes (micro): each change counts once, whichever intent grouped it. */
function totals(rows: Row[]) {
  const grouped = rows.reduce((n, r) => n + r.grouped.length, 0);
  const similarGrouped = rows.reduce((n, r) => n + r.hits.length, 0);
  const labelled = rows.reduce((n, r) => n + r.labelled, 0);
  const notSimilar = rows.reduce((n, r) => n + r.notSimilar.length, 0);
  const noHistory = rows.filter((r) => r.labelled === 0);
  return {
    intents: rows.length,
    grouped,
    similar_grouped: similarGrouped,
    labelled_similar: labelled,
    precision: grouped === 0 ? null : round(similarGrouped / grouped, 3),
    recall: labelled === 0 ? null : round(similarGrouped / labelled, 3),
    judged_precision: similarGrouped + notSimilar === 0 ? null : round(similarGrouped / (similarGrouped + notSimilar), 3),
    not_similar_grouped: notSimilar,
    unlabelled_grouped: rows.reduce((n, r) => n + r.unlabelled.length, 0),
    no_history: noHistory.length,
    none_answered: noHistory.filter((r) => r.confidence === "none").length,
    intents_answered_none: rows.filter((r) => r.confidence === "none").length,
  };
}

const fmt = (n: number | null) => (n === null ? "-" : n.toFixed(2));
