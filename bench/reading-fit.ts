import { parseArgs } from "node:util";
import {
  noteOf,
  readUnits,
  readUnitsBy,
  score,
  unitFeatures,
  type KindModel,
  type LinearModel,
  type ReadContext,
  type ReadFunction,
  type Unit,
} from "../services/reading/src/index.js";
import type { Exchange } from "../services/loader/src/transcript/exchanges.js";
import { notesOf } from "../services/loader/src/transcript/notes.js";
import { choicesOf } from "../services/summarizer/src/choices.js";
import { extractiveSummary } from "../services/summarizer/src/extractive.js";
import {
  containsAll,
  containsAny,
  fixtureTurns,
  loadSessionFixtures,
  matches,
  type SessionFixture,
} from "../services/summarizer/test/fixtures/sessions.js";
import { captureFixtures, type Category, type FixtureSession } from "./capture-quality.js";
import { timedEmbedder } from "./timed-embedder.js";

/**
 * `npm run bench -- reading-fit [--loao] [--write] [--embedder hash|local]`: a logistic model over what the rules of
 * @cairn/reading say of each unit (services/reading/src/learned.ts), beside the rules, judged by leaving one author out.
 *
 * Every unit the capture hook and the extractive summaries read (bench/fixtures/capture, the summarizer's labelled
 * sessions) is a row, recorded through the consumers' own read call so its units and context are exactly theirs. A
 * row is positive for a kind when the note it would make is right by its bench's matching rule (capture: it holds
 * every term of a label; summaries: `matches` of fixtures/sessions.ts). One model per kind, L2-regularised, fitted by
 * deterministic full-batch gradient descent.
 *
 * `--loao`: for each author, a model fitted on all the others (its regularisation and threshold chosen by leaving
 * each of those others out in turn, on the notes' precision and the labels' recall), run through the real capture
 * and summary paths on the held-out author, beside the rules on the same sessions. `--no-words` leaves the vocabulary
 * out; `--only A,G` holds out only those authors; `--verbose` lists what the model reads differently from the rules.
 * `--write`: fits on every author (choices made the same way) and prints the model as JSON (for a weights module).
 */

const AUTHORS_T0 = [
  "payment-retries",
  "rate-limiter",
  "flaky-e2e",
  "export-memory",
  "orm-migration",
  "cache-stampede",
  "auth-tokens",
  "build-speed",
];
const AUTHORS_U1 = ["search-index", "webhook-retries", "image-thumbnails", "feature-flags"];
const AUTHORS_U6 = [
  "swift-package-upgrade",
  "vuex-to-pinia",
  "pdf-render-timeouts",
  "oauth-redirect-loop",
  "lambda-cold-start",
  "logging-cost",
];

/**
 * Who wrote a capture fixture of `tuning/` (the groups the fixtures were written in, one author each): a file named
 * with a letter and a number (`g3-…`) is of that letter's author; the numbered ones are placed by name and number.
 */
export function captureAuthor(file: string): string {
  const lettered = /^([a-z])\d+-/.exec(file)?.[1];
  if (lettered) return lettered.toUpperCase();
  const [, number, name] = /^(\d+)-(.*)\.json$/.exec(file)!;
  const n = Number(number);
  if (AUTHORS_T0.includes(name!)) return "T0";
  if (AUTHORS_U1.includes(name!)) return "U1";
  if (AUTHORS_U6.includes(name!)) return "U6";
  if (n <= 12) return "U7";
  return n <= 20 ? "U2" : n <= 28 ? "U3" : n <= 36 ? "U4" : "U5";
}

const UNFITTED_HALVES = ["G"];
const LAMBDAS = [0.001, 0.003, 0.01, 0.03];
const THRESHOLDS = Array.from({ length: 17 }, (_, k) => 0.1 + 0.05 * k);
const KINDS = ["decided", "dropped"] as const;
type Kind = (typeof KINDS)[number];

interface Row {
  author: string;
  /** Read as a report written after the work (the summaries), or as written (the capture hook). */
  reports: boolean;
  active: number[];
  /** The labels (session-qualified) its note would be right for, per kind. */
  hits: Record<Kind, string[]>;
}
interface CaptureSession {
  author: string;
  name: string;
  exchanges: Exchange[];
  labels: FixtureSession["labels"];
}

export async function benchReadingFit(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      loao: { type: "boolean", default: false },
      write: { type: "boolean", default: false },
      embedder: { type: "string", default: "hash" },
      only: { type: "string" },
      words: { type: "boolean", default: true },
      verbose: { type: "boolean", default: false },
      union: { type: "boolean", default: false },
    },
    allowNegative: true,
  });
  const out = (line: string) => process.stdout.write(`${line}\n`);
  const captures = await loadCaptureSessions();
  // Halves written to judge the summaries' rules blind are not fitted on.
  const summaries = loadSessionFixtures().filter((f) => !UNFITTED_HALVES.includes(f.half));
  const { rows, features, labelCount } = dataset(captures, summaries, values.words);
  const authors = [...new Set(rows.map((r) => r.author))];
  out(
    `${rows.length} units from ${captures.length} capture sessions and ${summaries.length} summary sessions, ${features.length} features`,
  );
  out(
    `positives: decided ${rows.filter((r) => r.hits.decided.length > 0).length}, dropped ${rows.filter((r) => r.hits.dropped.length > 0).length}`,
  );

  if (values.write) {
    const model = fitChosen(rows, features, labelCount, authors);
    out(JSON.stringify(model));
  }
  if (!values.loao) return;

  const timing = await timedEmbedder(values.embedder);
  try {
    const table: Array<{ author: string; rules: Figures; learned: Figures; choice: string }> = [];
    for (const held of values.only ? values.only.split(",") : authors) {
      const rest = authors.filter((a) => a !== held);
      const model = fitChosen(
        rows.filter((r) => r.author !== held),
        features,
        labelCount,
        rest,
      );
      const read = readUnitsBy(model, { keepRules: values.union });
      if (values.verbose)
        await differences(
          captures.filter((s) => s.author === held),
          summaries.filter((f) => f.half === held),
          read,
          timing.inner,
          out,
        );
      const figures = async (r: ReadFunction) => ({
        ...captureFigures(
          captures.filter((s) => s.author === held),
          r,
        ),
        ...(await summaryFigures(
          summaries.filter((f) => f.half === held),
          r,
          timing.inner,
        )),
      });
      const row = {
        author: held,
        rules: await figures(readUnits),
        learned: await figures(read),
        choice: KINDS.map((k) => `${k} λ ${model.lambda[k]} t ${model[k].threshold.notes}/${model[k].threshold.reports}`).join(", "),
      };
      table.push(row);
      out(`${held}: ${row.choice}`);
    }
    printTables(table, out);
  } finally {
    await timing.close();
  }
}

async function loadCaptureSessions(): Promise<CaptureSession[]> {
  // `untuned/` is never fitted on: capture-quality judges the committed model there.
  return (await captureFixtures("tuning")).map(({ file, session, exchanges }) => ({
    author: captureAuthor(file),
    name: `tuning/${file}`,
    exchanges,
    labels: session.labels,
  }));
}

/** The rows, read through the consumers' own calls (a recording read function), and the labels per author and kind. */
function dataset(captures: CaptureSession[], summaries: SessionFixture[], words: boolean) {
  const names = new Map<string, number>();
  const rows: Row[] = [];
  const labelCount = new Map<string, number>();
  const count = (author: string, kind: Kind, n: number) =>
    labelCount.set(`${author}:${kind}`, (labelCount.get(`${author}:${kind}`) ?? 0) + n);
  const record = (author: string, label: (units: readonly Unit[], i: number, kind: Kind) => string[]): ReadFunction => {
    return (units: readonly Unit[], context: ReadContext) => {
      const rules = readUnits(units, context);
      units.forEach((_, i) => {
        const active = unitFeatures(units, i, context, rules)
          .filter((f) => words || !/^(?:w|first):/.test(f))
          .map((f) => {
            if (!names.has(f)) names.set(f, names.size);
            return names.get(f)!;
          });
        rows.push({
          author,
          reports: context.reasoningReports === true,
          active,
          hits: { decided: label(units, i, "decided"), dropped: label(units, i, "dropped") },
        });
      });
      return rules;
    };
  };
  for (const s of captures) {
    for (const kind of KINDS) count(s.author, kind, s.labels[kind].length);
    const read = record(s.author, (units, i, kind) => {
      const note = noteOf(units, i)?.toLowerCase();
      if (note === undefined) return [];
      return s.labels[kind].flatMap((l, k) => (l.terms.every((t) => note.includes(t.toLowerCase())) ? [`${s.name}#${kind}${k}`] : []));
    });
    for (const e of s.exchanges) notesOf(e, read);
  }
  for (const f of summaries) {
    count(f.half, "decided", f.gold.decisions.length);
    count(f.half, "dropped", f.gold.dropped.length);
    const read = record(f.half, (units, i, kind) => {
      const note = noteOf(units, i);
      if (note === undefined) return [];
      // A decision is listed by its own words when they are enough (choices.ts); a dropped approach by its note.
      const text = kind === "decided" && units[i]!.text.split(/\s+/).length >= 5 ? units[i]!.text : note;
      const gold = kind === "decided" ? f.gold.decisions : f.gold.dropped;
      return gold.flatMap((g, k) => (matches(text, g) ? [`${f.id}#${kind}${k}`] : []));
    });
    // The summary path reads each turn once through choicesOf; the embedder plays no part in what is read.
    choicesOf(fixtureTurns(f), read);
  }
  return { rows, features: [...names.keys()], labelCount };
}

/** L2-regularised logistic regression by full-batch gradient descent (Adam steps), from zero weights: deterministic. */
export function fit(
  rows: readonly Row[],
  kind: Kind,
  lambda: number,
  featureCount: number,
  iterations = 300,
): Pick<KindModel, "bias" | "weights"> {
  const w = new Float64Array(featureCount);
  const m = new Float64Array(featureCount + 1);
  const v = new Float64Array(featureCount + 1);
  let bias = 0;
  const g = new Float64Array(featureCount + 1);
  const y = rows.map((r) => (r.hits[kind].length > 0 ? 1 : 0));
  const rate = 0.05;
  for (let t = 1; t <= iterations; t++) {
    g.fill(0);
    rows.forEach((r, n) => {
      let z = bias;
      for (const k of r.active) z += w[k]!;
      const d = 1 / (1 + Math.exp(-z)) - y[n]!;
      for (const k of r.active) g[k]! += d;
      g[featureCount]! += d;
    });
    for (let k = 0; k <= featureCount; k++) {
      const grad = g[k]! / rows.length + (k < featureCount ? lambda * w[k]! : 0);
      m[k] = 0.9 * m[k]! + 0.1 * grad;
      v[k] = 0.999 * v[k]! + 0.001 * grad * grad;
      const step = (rate * (m[k]! / (1 - 0.9 ** t))) / (Math.sqrt(v[k]! / (1 - 0.999 ** t)) + 1e-8);
      if (k < featureCount) w[k]! -= step;
      else bias -= step;
    }
  }
  return { bias, weights: [...w].map((x) => Math.round(x * 1e4) / 1e4) };
}

/**
 * What a choice of regularisation and threshold is judged by: F1 of note precision and label recall (docs/benchmarks.md,
 * "Reading: a learned scorer beside the rules", has the other objective measured).
 */
const objective = (precision: number, recall: number) => (precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall));

type Chosen = LinearModel & { lambda: Record<Kind, number> };

/**
 * The model fitted on these rows, its regularisation and threshold per kind chosen by leaving each of the authors out
 * in turn: the regularisation and the threshold for each reader with the best `objective` over the left-out
 * predictions pooled (the regularisation by the mean of the two readers' best).
 */
function fitChosen(rows: readonly Row[], features: string[], labelCount: Map<string, number>, authors: readonly string[]): Chosen {
  const model = { features } as Chosen;
  model.lambda = { decided: 0, dropped: 0 };
  const readers = ["notes", "reports"] as const;
  const reportAuthors = new Set(rows.filter((r) => r.reports).map((r) => r.author));
  for (const kind of KINDS) {
    let best = { f1: -1, lambda: LAMBDAS[0]!, threshold: { notes: 0.5, reports: 0.5 } };
    for (const lambda of LAMBDAS) {
      const predicted: Array<{ p: number; hits: string[]; reports: boolean }> = [];
      for (const left of authors) {
        const w = fit(
          rows.filter((r) => r.author !== left),
          kind,
          lambda,
          features.length,
        );
        for (const r of rows) if (r.author === left) predicted.push({ p: score(w, r.active), hits: r.hits[kind], reports: r.reports });
      }
      // Each reader its own threshold; the regularisation that serves both best on average.
      const chosen = readers.map((reader) => {
        const of = predicted.filter((x) => x.reports === (reader === "reports"));
        const labels = authors
          .filter((a) => reportAuthors.has(a) === (reader === "reports"))
          .reduce((a, x) => a + (labelCount.get(`${x}:${kind}`) ?? 0), 0);
        let top = { f1: 0, threshold: 0.5 };
        for (const threshold of THRESHOLDS) {
          const picked = of.filter((x) => x.p >= threshold);
          const precision = picked.length === 0 ? 0 : picked.filter((x) => x.hits.length > 0).length / picked.length;
          const recall = new Set(picked.flatMap((x) => x.hits)).size / Math.max(1, labels);
          const f1 = objective(precision, recall);
          if (f1 > top.f1) top = { f1, threshold: Math.round(threshold * 100) / 100 };
        }
        return top;
      });
      const f1 = (chosen[0]!.f1 + chosen[1]!.f1) / 2;
      if (f1 > best.f1) best = { f1, lambda, threshold: { notes: chosen[0]!.threshold, reports: chosen[1]!.threshold } };
    }
    model[kind] = { ...fit(rows, kind, best.lambda, features.length), threshold: best.threshold };
    model.lambda[kind] = best.lambda;
  }
  return model;
}

interface Figures {
  capture?: Record<Category, { notes: number; right: number; labels: number; found: number }>;
  summary?: {
    extracted: number;
    matched: number;
    gold: number;
    found: number;
    goldDropped: number;
    droppedFound: number;
    titles: number;
    titleOk: number;
  };
}

function captureFigures(sessions: CaptureSession[], read: ReadFunction): Figures {
  if (sessions.length === 0) return {};
  const totals = { decided: { notes: 0, right: 0, labels: 0, found: 0 }, dropped: { notes: 0, right: 0, labels: 0, found: 0 } };
  for (const s of sessions) {
    const notes = { decided: [] as string[], dropped: [] as string[] };
    for (const e of s.exchanges) {
      const n = notesOf(e, read);
      notes.decided.push(...n.decided);
      notes.dropped.push(...n.dropped);
    }
    for (const c of KINDS) {
      const holds = (note: string, terms: string[]) => terms.every((t) => note.toLowerCase().includes(t.toLowerCase()));
      const t = totals[c];
      t.notes += notes[c].length;
      t.right += notes[c].filter((n) => s.labels[c].some((l) => holds(n, l.terms))).length;
      t.labels += s.labels[c].length;
      t.found += s.labels[c].filter((l) => notes[c].some((n) => holds(n, l.terms))).length;
    }
  }
  return { capture: totals };
}

async function summaryFigures(
  fixtures: SessionFixture[],
  read: ReadFunction,
  embedder: Parameters<typeof extractiveSummary>[2],
): Promise<Figures> {
  if (fixtures.length === 0) return {};
  const t = { extracted: 0, matched: 0, gold: 0, found: 0, goldDropped: 0, droppedFound: 0, titles: 0, titleOk: 0 };
  for (const f of fixtures) {
    const summary = await extractiveSummary(f.id, fixtureTurns(f), embedder, read);
    const decisions = summary.decisions.map((d) => d.decision);
    const dropped = summary.dropped.map((d) => d.approach);
    t.extracted += decisions.length;
    t.matched += decisions.filter((d) => f.gold.decisions.some((g) => matches(d, g))).length;
    t.gold += f.gold.decisions.length;
    t.found += f.gold.decisions.filter((g) => decisions.some((d) => matches(d, g))).length;
    t.goldDropped += f.gold.dropped.length;
    t.droppedFound += f.gold.dropped.filter((g) => dropped.some((d) => matches(d, g))).length;
    t.titles += 1;
    t.titleOk += Number(containsAll(summary.title, f.gold.title) && !containsAny(summary.title, f.gold.title_not ?? []));
  }
  return { summary: t };
}

function printTables(table: Array<{ author: string; rules: Figures; learned: Figures }>, out: (line: string) => void) {
  const r = (a: number, b: number) => (b === 0 ? "—" : `${(a / b).toFixed(2)} (${a}/${b})`);
  const pair = (a: string, b: string) => `${a} → ${b}`;
  const pool = (which: "rules" | "learned", authors: string[]) => {
    const sum = { dn: 0, dr: 0, dl: 0, df: 0, pn: 0, pr: 0, pl: 0, pf: 0 };
    for (const x of table.filter((x) => authors.includes(x.author))) {
      const c = x[which].capture;
      if (!c) continue;
      sum.dn += c.decided.notes;
      sum.dr += c.decided.right;
      sum.dl += c.decided.labels;
      sum.df += c.decided.found;
      sum.pn += c.dropped.notes;
      sum.pr += c.dropped.right;
      sum.pl += c.dropped.labels;
      sum.pf += c.dropped.found;
    }
    return sum;
  };
  out("\ncapture (rules → learned, LOAO)");
  out("author | decided P | decided R | dropped P | dropped R");
  const captureRow = (name: string, authors: string[]) => {
    const a = pool("rules", authors);
    const b = pool("learned", authors);
    out(
      `${name} | ${pair(r(a.dr, a.dn), r(b.dr, b.dn))} | ${pair(r(a.df, a.dl), r(b.df, b.dl))} | ${pair(r(a.pr, a.pn), r(b.pr, b.pn))} | ${pair(r(a.pf, a.pl), r(b.pf, b.pl))}`,
    );
  };
  const captureAuthors = table.filter((x) => x.rules.capture).map((x) => x.author);
  for (const a of captureAuthors) captureRow(a, [a]);
  captureRow("pooled", captureAuthors);
  captureRow("blind", ["G"]);
  out("\nsummaries (rules → learned, LOAO; title with the bench's embedder)");
  out("half | decision P | decision R | dropped R | title");
  const summaryRow = (name: string, authors: string[]) => {
    const s = (which: "rules" | "learned") => {
      const sum = { extracted: 0, matched: 0, gold: 0, found: 0, goldDropped: 0, droppedFound: 0, titles: 0, titleOk: 0 };
      for (const x of table.filter((x) => authors.includes(x.author))) {
        const f = x[which].summary;
        if (f) for (const k of Object.keys(sum) as Array<keyof typeof sum>) sum[k] += f[k];
      }
      return sum;
    };
    const a = s("rules");
    const b = s("learned");
    out(
      `${name} | ${pair(r(a.matched, a.extracted), r(b.matched, b.extracted))} | ${pair(r(a.found, a.gold), r(b.found, b.gold))} | ${pair(r(a.droppedFound, a.goldDropped), r(b.droppedFound, b.goldDropped))} | ${pair(r(a.titleOk, a.titles), r(b.titleOk, b.titles))}`,
    );
  };
  const summaryAuthors = table.filter((x) => x.rules.summary).map((x) => x.author);
  for (const a of summaryAuthors) summaryRow(a, [a]);
  summaryRow("pooled", summaryAuthors);
  summaryRow("blind", ["E", "F"]);
}

/** What the model reads differently from the rules on an author's sessions: labels one finds and the other misses, and notes only it makes. */
async function differences(
  captures: CaptureSession[],
  summaries: SessionFixture[],
  read: ReadFunction,
  embedder: Parameters<typeof extractiveSummary>[2],
  out: (line: string) => void,
) {
  const holds = (note: string, terms: string[]) => terms.every((t) => note.toLowerCase().includes(t.toLowerCase()));
  for (const s of captures) {
    for (const kind of KINDS) {
      const rules = s.exchanges.flatMap((e) => notesOf(e)[kind]);
      const learned = s.exchanges.flatMap((e) => notesOf(e, read)[kind]);
      for (const l of s.labels[kind]) {
        const [a, b] = [rules.some((n) => holds(n, l.terms)), learned.some((n) => holds(n, l.terms))];
        if (a !== b) out(`  ${s.name} ${kind} label ${b ? "found only by the model" : "lost by the model"}: ${l.text}`);
      }
      for (const n of learned.filter((n) => !rules.includes(n)))
        out(`  ${s.name} ${kind} model-only note ${s.labels[kind].some((l) => holds(n, l.terms)) ? "right" : "WRONG"}: ${n}`);
    }
  }
  for (const f of summaries) {
    const [a, b] = [
      await extractiveSummary(f.id, fixtureTurns(f), embedder),
      await extractiveSummary(f.id, fixtureTurns(f), embedder, read),
    ];
    for (const [kind, gold, of] of [
      ["decision", f.gold.decisions, (x: typeof a) => x.decisions.map((d) => d.decision)],
      ["dropped", f.gold.dropped, (x: typeof a) => x.dropped.map((d) => d.approach)],
    ] as const) {
      for (const g of gold) {
        const [ra, rb] = [of(a).some((d) => matches(d, g)), of(b).some((d) => matches(d, g))];
        if (ra !== rb) out(`  ${f.id} ${kind} ${rb ? "found only by the model" : "lost by the model"}: ${g.join(" | ")}`);
      }
      for (const d of of(b).filter((d) => !of(a).includes(d)))
        out(`  ${f.id} ${kind} model-only ${gold.some((g) => matches(d, g)) ? "right" : "WRONG"}: ${d}`);
    }
  }
}
