import {
  CHANGE,
  CHOICE,
  DROP_START,
  INSTEAD,
  NOT_AN_APPROACH,
  OVER,
  PRONOUN_OBJECT,
  contentWords,
  opensWithChoice,
  readUnits,
  revertedObject,
  shared,
  unitsOf,
  type ReadFunction,
  type Unit,
} from "@cairn/reading";
import type { SessionTurn } from "./session.js";
import { EVIDENCE_CUE, NEXT_CUE, splitSentences } from "./sentences.js";

export { contentWords } from "@cairn/reading";

/**
 * What a session chose and what it dropped, read from the words agents write at the end of a turn
 * (runbooks/end-of-turn.md: the thought holds decisions and what was tried and dropped; `kind` says when a
 * turn is a decision or an attempt). Rules, not a model: each turn's sentences are read by @cairn/reading, the
 * rules the capture hook drafts its notes with (what a sentence does: gives up, judges wanting, commits, states
 * the new arrangement; weighs, plans, asks or reports a check and so commits to nothing; a sentence that points
 * back is read with the one before). A turn's thought is read as a report written after the work (a change it
 * tells with its reason, or a design with its purpose, is a decision; in a `decision` turn, a statement with its
 * reason is part of the decision), its response as the answer (a turn with no other decision decided the change
 * its response opens with). On top of the reading, this module keeps what only the session shows:
 *
 * - A **revert** ("reverted", "rolled back", "switched X back", "PR #2231 reverted", ...) of the session's own
 *   change is dropped; of a change older than the session (yesterday's release) it is the remedy, a decision.
 * - An `attempt` turn states what was tried and dropped: its choices are not decisions, and without any dropped
 *   clause its attempt (the sentence saying what was tried, else the prompt) is listed as dropped. A `decision`
 *   turn with no decision read leads its thought with the decision (its first sentence).
 * - The Y of "chose X over Y" and of a decision's "instead of Y" / "rather than Y" is dropped.
 * - A decision that a later turn drops (they share at least two content words) is dropped, not settled.
 *
 * A dropped approach is written as a decision whose text starts with "Dropped" (or the word that says how:
 * "Abandoned", "Reverted", ...), with its reason as evidence: the contract's Summary has no field for them.
 */
export interface Choice {
  kind: "decision" | "dropped";
  /** The clause, as written; a dropped approach starts with the word that says it was dropped. */
  text: string;
  turn: number;
  /** Position of the sentence within its turn (thought first, then response). */
  position: number;
  /** The sentence the clause came from (for evidence, which must be another one). */
  sentence: string;
  fromDecisionTurn: boolean;
  /** A revert kept as a decision (the remedy): it puts back what was, so it titles a session only when nothing else does. */
  undoes?: boolean;
}

/** Words that name no particular change: a revert of "the change" or "the hotfix" says nothing about whose it was. */
const GENERIC = new Set(["chang", "fix", "hotfix", "commit", "patch", "pr", "releas", "deploy", "version", "updat", "previou", "last"]);
/** A sentence saying the agent did something: the session's own change, which a later revert can undo. */
const OWN_ACTION = /^(we |i )?(tried|upgraded|downgraded|switched|deployed|applied|patched|rolled out)\b/i;
const ATTEMPT = /\b(tried|trying|attempted|experimented|prototyped|tested whether)\b/i;

/** A turn's units, as the reading reads them: its thought (a report written after the work), then its response (the answer). */
export function unitsOfTurn(turn: SessionTurn): Unit[] {
  return [...unitsOf(turn.thought, false), ...unitsOf(turn.response, true)].flatMap(clausesOf);
}

export function choicesOf(turns: readonly SessionTurn[], read: ReadFunction = readUnits): Choice[] {
  const found: Choice[] = [];
  // The content words of the agent's own changes so far, gathered once: every revert after them is checked against them.
  const ownChangesBefore: string[][] = [];
  turns.forEach((turn, index) => {
    const fromDecisionTurn = turn.kind === "decision";
    const attempt = turn.kind === "attempt";
    const units = unitsOfTurn(turn);
    const texts = units.map((u) => u.text);
    const ofTurn: Choice[] = [];
    const readings = read(units, {
      wrote: !attempt,
      headline: "change",
      reasoningReports: true,
      declared: fromDecisionTurn ? "decision" : attempt ? "attempt" : "turn",
    });
    for (const reading of readings) {
      const sentence = texts[reading.unit]!;
      const add = (kind: Choice["kind"], text: string, undoes = false) =>
        ofTurn.push({
          kind,
          text: tidy(text),
          turn: index,
          position: reading.unit,
          sentence,
          fromDecisionTurn,
          ...(undoes ? { undoes } : {}),
        });
      if (reading.kind === "dropped") {
        if (revertedObject(sentence) === undefined || undoesOwnChange(sentence, ownChangesBefore, texts.slice(0, reading.unit)))
          add("dropped", reading.text);
        else if (!attempt) add("decision", reading.own, true);
        continue;
      }
      if (attempt) continue;
      // A decision is titled and listed by its own words; the sentence before is context, not the choice.
      add("decision", reading.own.split(/\s+/).length >= 5 ? reading.own : reading.text);
      const over = OVER.exec(sentence);
      if (over) add("dropped", `Dropped ${over[2]!.replace(/\.$/, "")}`);
      const instead = INSTEAD.exec(sentence);
      if (instead && contentWords(instead[2]!).length >= 2 && !NOT_AN_APPROACH.test(instead[2]!)) add("dropped", `Dropped ${instead[2]!}`);
    }
    if (fromDecisionTurn && !ofTurn.some((c) => c.kind === "decision")) {
      // A decision turn leads its thought with the decision (the runbook's "lead with the gist").
      const first = splitSentences(turn.thought).find((s) => !isQuestion(s));
      if (first) ofTurn.push({ kind: "decision", text: tidy(first), turn: index, position: 0, sentence: first, fromDecisionTurn });
    }
    if (attempt && !ofTurn.some((c) => c.kind === "dropped")) {
      const tried = texts.find((s) => ATTEMPT.test(s)) ?? splitSentences(turn.prompt)[0];
      if (tried)
        ofTurn.push({
          kind: "dropped",
          text: `Dropped: ${tidy(tried)}`,
          turn: index,
          position: 0,
          sentence: tried,
          fromDecisionTurn: false,
        });
    }
    found.push(...ofTurn.map((c) => (c.kind === "dropped" ? { ...c, text: asDropped(c.text) } : c)));
    ownChangesBefore.push(...texts.filter(isOwnChange).map(contentWords));
  });

  // A decision a later turn abandons is not what the session settled on.
  const superseded = (d: Choice) =>
    found.some((x) => x.kind === "dropped" && x.turn > d.turn && shared(contentWords(x.text), contentWords(d.text)) >= 2);
  const kept = found.filter((c) => c.kind === "dropped" || !superseded(c));
  return distinct(kept).sort((a, b) => a.turn - b.turn || a.position - b.position);
}

/** The sentence of the choice's turn that best supports it: nearest with a figure, a check or a reason, not itself a choice. */
export function evidenceFor(choice: Choice, turn: SessionTurn, choices: readonly Choice[]): string | undefined {
  const own = new Set(choices.filter((c) => c.turn === choice.turn).map((c) => c.sentence));
  const sentences = unitsOfTurn(turn).map((u) => u.text);
  const candidates = sentences
    .map((text, position) => ({ text, position }))
    .filter(
      (s) => s.text !== choice.sentence && !own.has(s.text) && EVIDENCE_CUE.test(s.text) && !isQuestion(s.text) && !isNextStep(s.text),
    );
  // A dropped approach that gives its reason in its own words needs no other sentence (the turn's figures are the chosen one's).
  if (choice.kind === "dropped" && /\b(because|since|but|as it|too)\b|:\s/.test(choice.text)) return undefined;
  const distance = (p: number) => (p > choice.position ? p - choice.position : choice.position - p + 0.5);
  const measured = (s: string) => (/\d/.test(s) ? 0 : 2);
  return candidates.sort((a, b) => measured(a.text) + distance(a.position) - (measured(b.text) + distance(b.position)))[0]?.text;
}

/**
 * A title from a decision: the choice itself, without "Decided to", parentheses and the reasons after it.
 * Undefined when what is left names too little to title a session ("chose the simplest").
 */
export function titleOf(decision: Choice, max: number): string | undefined {
  // "…, so full jitter it is": the winner of the comparison is the choice.
  const winner = /\bso ((?:\S+ ){1,4})it is[.!]?$/i.exec(decision.text)?.[1];
  let text = (winner ?? decision.text)
    .replace(/^(we |i )?(decided|decision)\s*(to|on|that|:)?\s*/i, "")
    .replace(/\s*\([^)]*\)/g, "")
    .replace(/\s*\[[^\]]*\]/g, "");
  const cut = text.search(/;|\s[—–-]\s|,?\s+(because|since|so|so that|given that|as it|which|rather than|instead of)\b|:\s/);
  if (cut > 0) text = text.slice(0, cut);
  text = text.replace(/[\s,.:;]+$/, "").trim();
  const object = text.replace(CHOICE, "").replace(CHANGE, "");
  if (contentWords(object).length < 2 || PRONOUN_OBJECT.test(object.trim())) return undefined;
  text = text.charAt(0).toUpperCase() + text.slice(1);
  return text.length <= max
    ? text
    : `${text
        .slice(0, max - 1)
        .replace(/\s+\S*$/, "")
        .trimEnd()}…`;
}

/**
 * A revert undoes the session's own attempt when the agent says so ("my change"), when its own turn made a change
 * before it (the turn tried something and undid it), or when an earlier turn's sentence says the agent made the
 * change it names ("Raised the connection pool to 40" ... "Reverted the connection pool change"). Anything else it reverts
 * predates the session (yesterday's release, Monday's PR): undoing that is the session's remedy.
 */
function undoesOwnChange(clause: string, ownChangesBefore: readonly string[][], earlierInTurn: readonly string[]): boolean {
  const object = revertedObject(clause) ?? "";
  if (/^\s*my\b/i.test(object)) return true;
  if (earlierInTurn.some(isOwnChange)) return true;
  const named = contentWords(object).filter((w) => !GENERIC.has(w));
  // Most of what it names, not one word: "release 4.2 of the pricing service" is not "the pricing connection pool".
  return named.length > 0 && ownChangesBefore.some((words) => shared(words, named) > named.length / 2);
}

const isOwnChange = (s: string) => (CHANGE.test(s) || OWN_ACTION.test(s) || ATTEMPT.test(s)) && revertedObject(s) === undefined;

/** A unit is read as one clause, unless it joins clauses that each open with a choice ("Decided X; dropped Y"). */
function clausesOf(unit: Unit): Unit[] {
  const clauses = unit.text
    .split(/;\s+/)
    .map((c) => c.trim())
    .filter(Boolean);
  return clauses.length > 1 && clauses.slice(1).some(opensWithChoice) ? clauses.map((text) => ({ ...unit, text })) : [unit];
}

/**
 * Restatements of one choice (most of their content words in common) are one: the first is kept. Two reverts kept
 * as the remedy that name the same thing ("Reverted the retry-everything part of the earlier commit", "the earlier
 * commit's retry-everything reverted in retry.ts") are one too.
 */
function distinct(choices: Choice[]): Choice[] {
  const out: Choice[] = [];
  const reverted = (c: Choice) => contentWords(revertedObject(c.sentence) ?? "").filter((w) => !GENERIC.has(w));
  for (const c of choices) {
    const words = contentWords(c.text);
    const twin = out.find(
      (o) =>
        o.kind === c.kind &&
        (shared(contentWords(o.text), words) >= Math.max(2, 0.6 * Math.min(words.length, contentWords(o.text).length)) ||
          (Boolean(o.undoes) && Boolean(c.undoes) && shared(reverted(o), reverted(c)) >= 1)),
    );
    if (!twin) out.push(c);
  }
  return out;
}

function asDropped(text: string): string {
  if (DROP_START.test(text)) return text.replace(/^(we |i )/i, "").replace(/^./, (c) => c.toUpperCase());
  return `Dropped: ${text.replace(/^dropped:?\s*/i, "")}`;
}

const tidy = (text: string) =>
  text
    .trim()
    .replace(/^[:,\s]+/, "")
    .replace(/^./, (c) => c.toUpperCase());
const isQuestion = (text: string) => /\?\s*$/.test(text);
const isNextStep = (text: string) =>
  /^(next( step)?s?|then|todo|follow[- ]up)\b/i.test(text.trim()) || (NEXT_CUE.test(text) && /^(next|todo)/i.test(text.trim()));
