import {
  CAUSE,
  CHECK,
  COMMIT,
  COMPARED_FIGURES,
  DECLINED,
  FIGURE,
  GENERIC,
  GIVE_UP,
  MIN_WORDS,
  NEW_STATE,
  NOT_COMMITTED,
  NOTE_CHARS,
  POINTS_BACK,
  REASON,
  ARRANGEMENT,
  CHANGE,
  CONCLUSION,
  FINDING,
  HEDGE,
  NEXT_STEP,
  OBSERVED,
  PAST_REPORT,
  PURPOSE,
  choiceCue,
  choiceOfPronoun,
  REASON_GIVEN,
  COMMAND_RESULT,
  OLDER_CHANGE,
  PLANNED,
  REPLACES,
  givesUpOutright,
  revertedObject,
  TRIED,
  WANTING,
  WEIGHING,
  mainClause,
  reportsFigures,
} from "./rules.js";
import { sentencesOf, type Unit } from "./units.js";

/**
 * What made a unit a decision, from the most decision-like: a cue word that commits ("decided", "going with",
 * "X rather than Y"), the new state of the code said in the present ("the limiter now keeps…"), a listed change
 * that says why, or the answer's first sentence of a text that changed files and named no decision.
 */
export type Strength = "cue" | "state" | "listed" | "headline";

export interface Reading {
  kind: "decided" | "dropped";
  /** Index of the unit read. */
  unit: number;
  /** The unit, with the one before it when it points back ("Reverted.", "Not pursuing that."). */
  text: string;
  /** The unit's own words, without the one before. */
  own: string;
  /** For a decision: what made it one. */
  strength?: Strength;
}

export interface ReadContext {
  /** The text comes with changed files (an exchange that edited, a turn that says it changed something). */
  wrote: boolean;
  /**
   * A text that changed files and names no decision decided what its answer says first ("any"), or only when
   * that sentence tells a change as done ("change": "Added a dbt test …", "Resent only the order-status pushes …").
   */
  headline: "any" | "change" | false;
  /**
   * The reasoning is a report written after the work (a stored turn's thought, runbooks/end-of-turn.md), not
   * thinking on the way: a change it tells with its reason, or a design with its purpose, is what was decided.
   */
  reasoningReports?: boolean;
  /** The writer said what the text is: a decision (its reasons are the decision's), an attempt, or a turn. */
  declared?: "decision" | "attempt" | "turn";
}

/** How a text's units are read: `readUnits` (the rules) or a fitted model's (learned.ts `readUnitsBy`). */
export type ReadFunction = (units: readonly Unit[], context: ReadContext) => Reading[];

/**
 * What a reading of unit i says: the unit, with the one before it when it is short or points back; undefined when
 * even that names too little to be a note.
 */
export function noteOf(units: readonly Unit[], i: number): string | undefined {
  const { text, item } = units[i]!;
  const short = text.split(/\s+/).length < MIN_WORDS;
  const before = i > 0 && (short || (!item && POINTS_BACK.test(text))) ? units[i - 1]!.text : "";
  const whole = before ? `${before} ${text}` : text;
  if (whole.split(/\s+/).length < MIN_WORDS) return undefined;
  return whole.length <= NOTE_CHARS ? whole : `${whole.slice(0, NOTE_CHARS - 1)}…`;
}

/** Adds unit i's reading of a kind, unless it names too little or the same note is already read. */
export function addReading(readings: Reading[], units: readonly Unit[], kind: Reading["kind"], i: number, strength?: Strength): void {
  const note = noteOf(units, i);
  if (note !== undefined && !readings.some((r) => r.kind === kind && r.text === note))
    readings.push({ kind, unit: i, text: note, own: units[i]!.text, ...(strength ? { strength } : {}) });
}

/**
 * The units' decisions and dropped approaches, in reading order. A unit is read for what it does, not for a fixed
 * phrase (rules.ts): it gives up on something, judges something wanting, or commits to something. Sentences that
 * weigh options, hedge, ask, suppose, try or announce the next step commit to nothing (a hedged sentence can
 * still reject an option), and a check's result is neither. A sentence that points back is kept with the one
 * before it. A list is read item by item: in the answer of a text that changed files, an item that says what was
 * changed and why is a decision, unless the list was introduced as options, sits under a heading of checks or
 * results, or reports figures.
 */
export function readUnits(units: readonly Unit[], context: ReadContext): Reading[] {
  const readings: Reading[] = [];
  const add = (kind: Reading["kind"], i: number, strength?: Strength) => addReading(readings, units, kind, i, strength);
  units.forEach(({ text, answer, item }, i) => {
    // An item is weighed by its opening sentence; its later sentences say why.
    const opening = item ? (sentencesOf(text)[0] ?? text) : text;
    if (units[i]!.list || NOT_COMMITTED.test(opening) || NEXT_STEP.test(opening) || CHECK.test(opening)) return;
    // In its reasoning, "No: …" turns down what the sentence before proposed.
    const givesUp =
      GIVE_UP.test(text) ||
      WANTING.test(text) ||
      (!answer && /^no\b[:,]/i.test(text)) ||
      givesUpOutright(opening) ||
      revertedObject(opening) !== undefined;
    if (givesUp) add("dropped", i);
    if (
      WEIGHING.test(opening) ||
      COMMAND_RESULT.test(opening) ||
      OLDER_CHANGE.test(opening) ||
      PLANNED.test(opening) ||
      TRIED.test(opening) ||
      DECLINED.test(opening) ||
      /\b(?:decided against|chose not to|decided not to)\b/i.test(text)
    )
      return;
    // "Replacing them with flags.yaml", "kept npm's own cache": giving one thing up can commit to another.
    const measured = COMPARED_FIGURES.test(mainClause(opening)) || (item && reportsFigures(opening));
    if (measured) return;
    // Giving one thing up commits to another only when the sentence names what replaces it ("Replacing them with
    // flags.yaml", "kept npm's own cache"); "X would fix it, but …" and "it didn't help, so I reverted it" commit to nothing.
    if (givesUp && !REPLACES.test(text)) return;
    if ((COMMIT.test(text) || choiceCue(opening)) && !choiceOfPronoun(opening)) add("decided", i, "cue");
    else if (
      context.wrote &&
      (NEW_STATE.test(text) || (ARRANGEMENT.test(opening) && !OBSERVED.test(opening))) &&
      !COMPARED_FIGURES.test(mainClause(opening))
    )
      add("decided", i, "state");
    else if (context.wrote && answer && item && !givesUp && REASON.test(text)) add("decided", i, "listed");
    else if (context.reasoningReports && !answer && !givesUp && !HEDGE.test(text) && !COMPARED_FIGURES.test(opening)) {
      const declaredDecision = context.declared === "decision";
      // In a decision's reasoning, a statement with its reason is part of the decision ("batches of 10k, because …").
      if (
        (CHANGE.test(text) && !OBSERVED.test(text) && (declaredDecision || REASON_GIVEN.test(text))) ||
        (declaredDecision && REASON_GIVEN.test(text) && !FINDING.test(text))
      )
        add("decided", i, "listed");
      else if (PURPOSE.test(text) && !CONCLUSION.test(text) && !OBSERVED.test(text) && !PAST_REPORT.test(text)) add("decided", i, "state");
    }
  });
  // A text that changed files decided what it changed: its answer's first sentence, when nothing said so.
  if (context.headline && context.wrote && !readings.some((r) => r.kind === "decided")) {
    const headline = units.findIndex(
      (u) =>
        u.answer &&
        (context.headline === "any" || CHANGE.test(u.text)) &&
        !NOT_COMMITTED.test(u.text) &&
        !WEIGHING.test(u.text) &&
        !CHECK.test(u.text) &&
        !COMMAND_RESULT.test(u.text) &&
        !PLANNED.test(u.text) &&
        !GENERIC.test(u.text) &&
        !CAUSE.test(u.text) &&
        !FIGURE.test(mainClause(u.text)) &&
        !COMPARED_FIGURES.test(mainClause(u.text)) &&
        !reportsFigures(u.text),
    );
    if (headline >= 0 && !readings.some((r) => r.kind === "dropped" && r.text.includes(units[headline]!.text)))
      add("decided", headline, "headline");
  }
  return readings.sort((a, b) => a.unit - b.unit);
}
