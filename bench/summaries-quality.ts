import { parseArgs } from "node:util";
import { extractiveSummary } from "../services/summarizer/src/extractive.js";
import {
  containsAll,
  containsAny,
  fixtureTurns,
  loadSessionFixtures,
  matches,
  type SessionFixture,
} from "../services/summarizer/test/fixtures/sessions.js";
import { round } from "./stats.js";
import { timedEmbedder } from "./timed-embedder.js";

/**
 * How good an extractive summary is, against what a person would name in it: the labelled sessions of
 * services/summarizer/test/fixtures/sessions/ go through `extractiveSummary` with the real embedder, and
 * the result is scored (rule in fixtures/sessions.ts: stemmed key terms, two thirds of a set present):
 *
 * - decision precision: extracted decisions that match a gold decision;
 * - decision recall: gold decisions matched by an extracted decision;
 * - title accuracy: titles containing every gold title term and none of the terms it must not name;
 * - dropped recall (and precision): gold dropped approaches matched by an entry of the summary's `dropped`;
 * - findings listed as decisions: gold findings (observations) that an extracted decision matches.
 *
 * Figures per half (A: rules developed on it; B: written afterwards; C: written before the revert and uncued-choice
 * rules, which were designed with it in view; D: written after them, held out; E: written blind to the rules, held
 * out; F: the same, scored once at the rules shared with capture; G: the same, kept from the learned scorer's fit)
 * and over all, then one JSON line.
 *
 *   npm run bench -- summaries-quality [--embedder local|hash] [--verbose]
 */
export async function benchSummariesQuality(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { embedder: { type: "string", default: "local" }, verbose: { type: "boolean", default: false } },
  });
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const timing = await timedEmbedder(values.embedder);
  const scored: Scored[] = [];
  try {
    for (const fixture of loadSessionFixtures()) {
      const summary = await extractiveSummary(fixture.id, fixtureTurns(fixture), timing.embedder);
      const s = score(fixture, summary);
      scored.push(s);
      if (values.verbose) {
        out(`\n${fixture.id} (${fixture.half})  title ${s.titleOk ? "ok" : "MISS"}: ${summary.title}`);
        for (const d of summary.decisions) out(`  - ${d.decision}${d.evidence ? `  [evidence: ${d.evidence}]` : ""}`);
        for (const d of summary.dropped) out(`  - dropped: ${d.approach}${d.reason ? `  [reason: ${d.reason}]` : ""}`);
        for (const g of s.missedDecisions) out(`  missed decision: ${g.join(" ")}`);
        for (const g of s.missedDropped) out(`  missed dropped: ${g.join(" ")}`);
        for (const f of s.leakedFindings) out(`  finding listed as decision: ${f.join(" ")}`);
      }
    }
  } finally {
    await timing.close();
  }

  const half = (name: string) => totals(scored.filter((s) => s.half === name));
  const halves = { A: half("A"), B: half("B"), C: half("C"), D: half("D"), E: half("E"), F: half("F"), G: half("G"), all: totals(scored) };
  out(`\nextractive summary quality, embedder ${values.embedder} (${timing.inner.model}), ${scored.length} labelled sessions`);
  out("half  sessions  decision P  decision R  title acc  dropped R  dropped P  findings as decisions");
  for (const [name, t] of Object.entries(halves)) {
    out(
      `${name.padEnd(4)}  ${String(t.sessions).padStart(8)}  ${fmt(t.decision_precision).padStart(10)}  ${fmt(t.decision_recall).padStart(10)}  ` +
        `${fmt(t.title_accuracy).padStart(9)}  ${fmt(t.dropped_recall).padStart(9)}  ${fmt(t.dropped_precision).padStart(9)}  ` +
        `${t.findings_as_decisions}/${t.findings}`,
    );
  }
  out(JSON.stringify({ bench: "summaries-quality", embedder: values.embedder, model: timing.inner.model, ...halves }));
}

interface Scored {
  half: string;
  titleOk: boolean;
  extracted: number;
  extractedMatched: number;
  gold: number;
  goldFound: number;
  droppedEntries: number;
  droppedEntriesMatched: number;
  goldDropped: number;
  goldDroppedFound: number;
  findings: number;
  missedDecisions: string[][];
  missedDropped: string[][];
  leakedFindings: string[][];
}

function score(
  fixture: SessionFixture,
  summary: { title: string; decisions: Array<{ decision: string }>; dropped: Array<{ approach: string }> },
): Scored {
  const { gold } = fixture;
  const decisions = summary.decisions.map((d) => d.decision);
  const dropped = summary.dropped.map((d) => d.approach);
  const missedDecisions = gold.decisions.filter((g) => !decisions.some((d) => matches(d, g)));
  const missedDropped = gold.dropped.filter((g) => !dropped.some((d) => matches(d, g)));
  return {
    half: fixture.half,
    titleOk: containsAll(summary.title, gold.title) && !containsAny(summary.title, gold.title_not ?? []),
    extracted: decisions.length,
    extractedMatched: decisions.filter((d) => gold.decisions.some((g) => matches(d, g))).length,
    gold: gold.decisions.length,
    goldFound: gold.decisions.length - missedDecisions.length,
    droppedEntries: dropped.length,
    droppedEntriesMatched: dropped.filter((d) => gold.dropped.some((g) => matches(d, g))).length,
    goldDropped: gold.dropped.length,
    goldDroppedFound: gold.dropped.length - missedDropped.length,
    findings: (gold.findings ?? []).length,
    missedDecisions,
    missedDropped,
    leakedFindings: (gold.findings ?? []).filter((f) => decisions.some((d) => matches(d, f))),
  };
}

function totals(items: Scored[]) {
  const add = (f: (s: Scored) => number) => items.reduce((a, s) => a + f(s), 0);
  const ratio = (a: number, b: number) => (b === 0 ? null : round(a / b));
  return {
    sessions: items.length,
    decision_precision: ratio(
      add((s) => s.extractedMatched),
      add((s) => s.extracted),
    ),
    decision_recall: ratio(
      add((s) => s.goldFound),
      add((s) => s.gold),
    ),
    title_accuracy: ratio(
      add((s) => Number(s.titleOk)),
      items.length,
    ),
    dropped_recall: ratio(
      add((s) => s.goldDroppedFound),
      add((s) => s.goldDropped),
    ),
    dropped_precision: ratio(
      add((s) => s.droppedEntriesMatched),
      add((s) => s.droppedEntries),
    ),
    findings: add((s) => s.findings),
    findings_as_decisions: add((s) => s.leakedFindings.length),
    extracted_decisions: add((s) => s.extracted),
    gold_decisions: add((s) => s.gold),
  };
}

const fmt = (v: number | null) => (v === null ? "—" : v.toFixed(2));
