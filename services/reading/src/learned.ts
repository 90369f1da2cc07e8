import { addReading, readUnits, type ReadContext, type ReadFunction, type Reading, type Strength } from "./read.js";
import {
  ARRANGEMENT,
  CAUSE,
  CHANGE,
  CHECK,
  CHOICE,
  COMMAND_RESULT,
  COMMIT,
  COMPARED_FIGURES,
  CONCLUSION,
  DECLINED,
  DROP_START,
  FIGURE,
  FINDING,
  GENERIC,
  GIVE_UP,
  HEDGE,
  MIN_WORDS,
  NEW_STATE,
  NEXT_STEP,
  NOT_COMMITTED,
  OBSERVED,
  OLDER_CHANGE,
  PAST_REPORT,
  PLANNED,
  POINTS_BACK,
  PURPOSE,
  REASON,
  REASON_GIVEN,
  REPLACES,
  TRIED,
  WANTING,
  WEIGHING,
  choiceCue,
  choiceOfPronoun,
  givesUpOutright,
  mainClause,
  reportsFigures,
  revertedObject,
} from "./rules.js";
import { sentencesOf, type Unit } from "./units.js";

/**
 * A linear scorer over what the rules say of a unit: each rule predicate, the rules' own reading, the unit's shape
 * and place, the text's context and a small fixed vocabulary are binary features; a logistic model per kind weighs
 * them, and a unit is read as that kind when its score reaches the kind's threshold (one for texts read as written,
 * one for reports written after the work). The weights are fitted by
 * `npm run bench -- reading-fit` on the labelled sessions of both benches.
 */
export interface LinearModel {
  /** The feature names, in the order of the weights. */
  features: string[];
  decided: KindModel;
  dropped: KindModel;
}
export interface KindModel {
  bias: number;
  weights: number[];
  /** The score a unit needs: in a text read as it is written (notes) or as a report written after the work (reports). */
  threshold: { notes: number; reports: number };
}

/** Words whose presence says something about what a sentence does, whoever writes it; fixed, not read from the data. */
export const VOCABULARY = (
  "we i now will use uses using keep keeps kept instead rather because so since that which only always never " +
  "decided decision chose choose going go went stay stays settled switch switched switching move moved replace replaced " +
  "add added make made set removed remove dropped drop reverted revert tried try trying attempt but however not no " +
  "didn't doesn't don't isn't wasn't won't can't couldn't would could might should may maybe probably if whether " +
  "was were is are had has did does fix fixed fixes works worked help helped slower faster worse better enough " +
  "option options alternative approach plan idea first then next later test tests passes passing fails failed " +
  "found root cause shows showed measured config default per every each all"
).split(" ");

const WORD = /[a-z][a-z']*/g;

/** The rule predicates a unit is described by: its whole text, and its opening sentence (an item's first). */
const PREDICATES: ReadonlyArray<[string, (u: { text: string; opening: string }) => boolean]> = [
  ["COMMIT", (u) => COMMIT.test(u.text)],
  ["choiceCue", (u) => choiceCue(u.opening)],
  ["CHOICE", (u) => CHOICE.test(u.text)],
  ["choiceOfPronoun", (u) => choiceOfPronoun(u.opening)],
  ["NEW_STATE", (u) => NEW_STATE.test(u.text)],
  ["ARRANGEMENT", (u) => ARRANGEMENT.test(u.opening)],
  ["REASON", (u) => REASON.test(u.text)],
  ["REASON_GIVEN", (u) => REASON_GIVEN.test(u.text)],
  ["PURPOSE", (u) => PURPOSE.test(u.text)],
  ["GIVE_UP", (u) => GIVE_UP.test(u.text)],
  ["WANTING", (u) => WANTING.test(u.text)],
  ["givesUpOutright", (u) => givesUpOutright(u.opening)],
  ["reverted", (u) => revertedObject(u.opening) !== undefined],
  ["DROP_START", (u) => DROP_START.test(u.opening)],
  ["REPLACES", (u) => REPLACES.test(u.text)],
  ["DECLINED", (u) => DECLINED.test(u.opening)],
  ["NOT_COMMITTED", (u) => NOT_COMMITTED.test(u.opening)],
  ["NEXT_STEP", (u) => NEXT_STEP.test(u.opening)],
  ["PLANNED", (u) => PLANNED.test(u.opening)],
  ["CHECK", (u) => CHECK.test(u.opening)],
  ["COMMAND_RESULT", (u) => COMMAND_RESULT.test(u.opening)],
  ["WEIGHING", (u) => WEIGHING.test(u.opening)],
  ["HEDGE", (u) => HEDGE.test(u.text)],
  ["TRIED", (u) => TRIED.test(u.opening)],
  ["OLDER_CHANGE", (u) => OLDER_CHANGE.test(u.opening)],
  ["COMPARED_FIGURES", (u) => COMPARED_FIGURES.test(mainClause(u.opening))],
  ["FIGURE", (u) => FIGURE.test(mainClause(u.text))],
  ["reportsFigures", (u) => reportsFigures(u.text)],
  ["GENERIC", (u) => GENERIC.test(u.text)],
  ["CAUSE", (u) => CAUSE.test(u.text)],
  ["CHANGE", (u) => CHANGE.test(u.opening)],
  ["OBSERVED", (u) => OBSERVED.test(u.text)],
  ["FINDING", (u) => FINDING.test(u.text)],
  ["PAST_REPORT", (u) => PAST_REPORT.test(u.text)],
  ["CONCLUSION", (u) => CONCLUSION.test(u.text)],
  ["POINTS_BACK", (u) => POINTS_BACK.test(u.text)],
  ["question", (u) => /\?\s*$/.test(u.text)],
  ["no-colon", (u) => /^no\b[:,]/i.test(u.text)],
];

/** The names of a unit's active features. `rules` is the rules' reading of the same units and context. */
export function unitFeatures(units: readonly Unit[], i: number, context: ReadContext, rules: readonly Reading[]): string[] {
  const unit = units[i]!;
  const { text, answer, item } = unit;
  const opening = item ? (sentencesOf(text)[0] ?? text) : text;
  const out: string[] = [];
  const on = (name: string, value: boolean) => value && out.push(name);
  const rule = rules.filter((r) => r.unit === i);
  const decided = rule.find((r) => r.kind === "decided");
  on("rule:decided", decided !== undefined);
  if (decided?.strength) out.push(`rule:decided:${decided.strength}`);
  on(
    "rule:dropped",
    rule.some((r) => r.kind === "dropped"),
  );
  on(
    "rule:prev-decided",
    rules.some((r) => r.unit === i - 1 && r.kind === "decided"),
  );
  on(
    "rule:prev-dropped",
    rules.some((r) => r.unit === i - 1 && r.kind === "dropped"),
  );
  on(
    "rule:next-dropped",
    rules.some((r) => r.unit === i + 1 && r.kind === "dropped"),
  );
  const predicates = PREDICATES.map(([name, test]) => [name, test({ text, opening })] as const);
  for (const [name, value] of predicates) {
    on(name, value);
    // Where a sentence stands changes what it does: the answer reports, the reasoning thinks on the way.
    on(`${name}&${answer ? "answer" : "reasoning"}`, value);
    on(`${name}&reports`, value && context.reasoningReports === true);
  }
  on("answer", answer);
  on("item", item);
  on("list:options", unit.list === "options");
  on("list:checks", unit.list === "checks");
  on("first", i === 0 || units[i - 1]!.answer !== answer);
  on("last", i === units.length - 1 || units[i + 1]!.answer !== answer);
  const words = text.split(/\s+/).length;
  out.push(words < MIN_WORDS ? "len:short" : words < 10 ? "len:10" : words < 20 ? "len:20" : words < 35 ? "len:35" : "len:long");
  on("wrote", context.wrote);
  on(`headline:${String(context.headline)}`, true);
  on("reasoningReports", context.reasoningReports === true);
  if (context.declared) out.push(`declared:${context.declared}`);
  const present = new Set(text.toLowerCase().match(WORD) ?? []);
  for (const w of VOCABULARY) if (present.has(w)) out.push(`w:${w}`);
  const first = (opening.toLowerCase().match(WORD) ?? [])[0];
  if (first && VOCABULARY.includes(first)) out.push(`first:${first}`);
  return out;
}

/** Every feature name `unitFeatures` can give, so a model's weights can be checked against the features read now. */
export function featureNames(): string[] {
  const strengths: Strength[] = ["cue", "state", "listed", "headline"];
  return [
    "rule:decided",
    ...strengths.map((s) => `rule:decided:${s}`),
    "rule:dropped",
    "rule:prev-decided",
    "rule:prev-dropped",
    "rule:next-dropped",
    ...PREDICATES.flatMap(([name]) => [name, `${name}&answer`, `${name}&reasoning`, `${name}&reports`]),
    ...["answer", "item", "list:options", "list:checks", "first", "last"],
    ...["len:short", "len:10", "len:20", "len:35", "len:long"],
    "wrote",
    ...["headline:any", "headline:change", "headline:false"],
    "reasoningReports",
    ...["decision", "attempt", "turn"].map((d) => `declared:${d}`),
    ...VOCABULARY.flatMap((w) => [`w:${w}`, `first:${w}`]),
  ];
}

/**
 * A read function (the shape of `readUnits`) that reads by a fitted model, the rules' readings among its features.
 * With `keepRules`, what the rules read stands and the model adds what they did not (a unit already inside a note of
 * its kind adds nothing). An item of a list introduced as options or headed as checks is never read as either kind:
 * what the list is, is said once for all its items, which no feature of an item weighs as strongly.
 */
export function readUnitsBy(model: LinearModel, options: { keepRules?: boolean } = {}): ReadFunction {
  const index = new Map(model.features.map((f, k) => [f, k]));
  return (units, context) => {
    const rules = readUnits(units, context);
    const readings: Reading[] = options.keepRules ? [...rules] : [];
    units.forEach((unit, i) => {
      if (unit.list) return;
      const active = unitFeatures(units, i, context, rules).flatMap((f) => {
        const k = index.get(f);
        return k === undefined ? [] : [k];
      });
      for (const kind of ["dropped", "decided"] as const) {
        const m = model[kind];
        const held = options.keepRules && readings.some((r) => r.kind === kind && r.text.includes(units[i]!.text));
        if (!held && score(m, active) >= (context.reasoningReports ? m.threshold.reports : m.threshold.notes)) {
          const strength = kind === "decided" ? rules.find((r) => r.unit === i && r.kind === "decided")?.strength : undefined;
          addReading(readings, units, kind, i, strength);
        }
      }
    });
    return readings.sort((a, b) => a.unit - b.unit);
  };
}

/** The model's probability that a unit with these active features is of its kind. */
export function score(model: Pick<KindModel, "bias" | "weights">, active: readonly number[]): number {
  let z = model.bias;
  for (const k of active) z += model.weights[k]!;
  return 1 / (1 + Math.exp(-z));
}
