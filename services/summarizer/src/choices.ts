import type { SessionTurn } from "./session.js";
import { EVIDENCE_CUE, NEXT_CUE, splitSentences } from "./sentences.js";

/**
 * What a session chose and what it dropped, read from the words agents write at the end of a turn
 * (runbooks/end-of-turn.md: the thought holds decisions and what was tried and dropped; `kind` says when a
 * turn is a decision or an attempt). Rules, not a model:
 *
 * - A **decision** is a clause that says a choice was made: "decided", "chose", "going/went with", "settled on",
 *   "opted", "switched ... to", "picked", "will use", "we will <verb>", "agreed", "Decision:". A change described as done ("moved",
 *   "replaced", "added", ...) is a decision only in the thought of a `decision` turn or when the sentence gives
 *   its reason ("because", "since", "so", "to avoid"). Without a cue, a thought's new arrangement stated in the
 *   present ("X now falls back to Y", "X moves to Y") or a design with its purpose ("..., so a drift is caught")
 *   is one too. Hedged clauses ("could", "might", "should we") and questions are not decisions; a finding ("X is
 *   slow", "the profile shows Y") or a conclusion ("so it is a leak") names no choice, so it is none.
 * - A **dropped approach** is a clause that says one was abandoned: "dropped", "abandoned",
 *   "rejected", "ruled out", "gave up", "decided against", "considered X ... but/rejected", "X was considered,
 *   but", "we could X, but", "X did not work/help", "X is not enough", and the Y of "chose X over Y" or of a
 *   decision's "instead of Y" / "rather than Y".
 * - A **revert** ("reverted", "rolled back", "switched X back", ...) of the session's own change is dropped; of a
 *   change older than the session (yesterday's release) it is the remedy, a decision. An `attempt` turn states what was tried and
 *   dropped: its choices are not decisions, and without any such clause its attempt (the sentence saying
 *   what was tried, else the prompt) is listed as dropped.
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

const CHOICE =
  /\b(decided|decide to|decision:|chose|choose to|chosen|going with|go with|went with|settled on|settle on|opted|opt for|picked|switch(ed|ing)?\b(?:\s+\S+){0,5}?\s+(to|over)\b|will use|adopted|(we|i) agreed|agreed (to|on|that)|(we|i)('ll| will| are going to| am going to) (?!(see|check|know|find out|need|look|try|ask|wait|have)\b)[a-z]+)\b/i;
const CHANGE =
  /^(we |i )?(moved|replaced|added|made|changed|kept|set|split|stripped|wrapped|introduced|removed|raised|lowered|limited|pinned|bumped|enabled|disabled|turned|converted|rewrote|extracted)\b/i;
const REASON =
  /\b(because|since|so that|so (both|the|it|we|that|each|every|no|a)|to avoid|to keep|in order to|which (avoids|keeps|removes|fixes))\b/i;
const DROP_START =
  /^(we |i )?(dropped|abandoned|reverted|rejected|ruled out|gave up( on)?|backed out|rolled back|scrapped|discarded|decided against|not going with|undid)\b/i;
const DROP_PASSIVE =
  /\b(was|were|is|got|has been|have been) (dropped|abandoned|reverted|rejected|ruled out|scrapped|discarded|rolled back|backed out)\b/i;
const CONSIDERED = /^(we |i )?(also )?(considered|tried|evaluated|looked at|weighed|prototyped|experimented with)\b/i;
const CONSIDERED_PASSIVE = /\b(was|were) (also )?(considered|tried|evaluated|weighed|prototyped)\b/i;
const REJECTION =
  /\b(rejected|ruled out|but|too (slow|risky|complex|expensive|costly|much)|not worth|no good|did not|didn't|does not|doesn't|cannot|can't|won't)\b/i;
const FAILED =
  /\b(did not|didn't|does not|doesn't|would not|wouldn't) (work|help|fix|solve)\b|\bmade no difference\b|\bno effect\b|\b(is|was|are|were) not enough\b|\binsufficient\b|\bmade (it|things) worse\b/i;
/** A revert, read apart from other drops: it undoes the session's own attempt (dropped) or an older change (the remedy). */
const REVERT = /^(we |i )?(reverted|rolled back|backed out|undid)\s+(.*)$/i;
/** "Switched X back on", "set X back to ...": the change X is undone. */
const PUT_BACK = /^(we |i )?(switched|turned|set|put|moved|changed)\s+((?:\S+\s+){0,4}?)back\b/i;
/** "Took the client-wide timeout out again", "removed the cache again": what was just added is taken away. */
const AGAIN = /^(we |i )?(took|removed|pulled)\s+(.+?)\s+(out )?again\b/i;
const REVERT_PASSIVE = /^(.+?)\s+(was|were|got|has been|have been) (reverted|rolled back|backed out|undone)\b/i;
/** Where a reverted thing's name ends: its reasons, its target version, when and where. */
const OBJECT_END = /[;,:(]|\s(to|at|in|on|after|because|since|as|so|and|which|from|for)\b/i;
/** Words that name no particular change: a revert of "the change" or "the hotfix" says nothing about whose it was. */
const GENERIC = new Set(["chang", "fix", "hotfix", "commit", "patch", "pr", "releas", "deploy", "version", "updat", "previou", "last"]);
/** A sentence saying the agent did something: the session's own change, which a later revert can undo. */
const OWN_ACTION = /^(we |i )?(tried|upgraded|downgraded|switched|deployed|applied|patched|rolled out)\b/i;
/**
 * A new arrangement stated in the present, without a cue word: "X now falls back to Y", "X is now imported from Y",
 * "X becomes Y", "X goes to / moves to Y", "X goes out as Y", "X is replaced by Y". Verbs that report an outcome
 * ("now takes", "now fails", "now passes") are findings, not arrangements.
 */
const ARRANGEMENT =
  /^(\S+\s+){0,6}?(now (?!(takes|costs|shows|fails|returns|has|passes|works|misses|matches|crashes|hangs|seems|looks|needs|is|was)\b)[a-z]+s|(is|are) now [a-z]+ed|becomes?|goes (to|out as)|moves? to|(is|are) replaced (by|with))\b/i;
/**
 * A purpose ("so the worker keeps headroom", "so that", "to avoid"): what a design is for. A conclusion ("So X is
 * out", "so it is a heap leak") reads the same way but follows from what was seen.
 */
const PURPOSE = /(?<!^)\bso (that|the|we|each|every|no|a|an)\b|\bto (avoid|keep|prevent)\b|\bin order to\b/i;
const PAST_REPORT = /\b(was|were|did|had|took)\b/i;
const CONCLUSION = /^so\b|\bso (it|this|that) (is|was|'s)\b/i;
/** What was seen, not chosen (the observation half of FINDING, which present-tense arrangements share a shape with). */
const OBSERVED = /\b(found|measured|profiled|observed|noticed|root cause)\b/i;
/** An alternative weighed and not taken: "we could X, but ...", "X would also work, but ...", "X would have needed ...". */
const MODAL = /\b(could|would|might)( also| still)?( have)?\b/i;
const WEIGHED_AGAINST = /\bbut\b|\bwould have (needed|required|meant|cost|broken|taken)\b/i;
/** The alternative a decision names as rejected: "use X instead of Y", "X rather than Y". */
const INSTEAD = /\b(instead of|rather than)\s+(.+?)(?=\s+(because|since|as|so|which)\b|[,;:.]|$)/i;
/** "Instead of in users' hands", "instead of being killed": a place or an outcome, not an alternative approach. */
const NOT_AN_APPROACH = /^(in|on|at|to|from|by|with|during|after|before|being|having)\b/i;
const VAGUE_SUBJECT = /^(\S+\s+){0,3}?(it|this|that|they|these|those)\s+(did|does|would|made|had)\b|^(on|in|with|at|but)\b/i;
const OVER =
  /\b(chose|choose|chosen|picked|preferred|prefer|went with|going with|settled on|opted for)\b.*?\bover\s+(.+?)(?=\s+(because|since|as|given)\b|[,;:]|$)/i;
const HEDGE =
  /\b(could|might|may|would|should we|maybe|perhaps|whether|if we|consider(ing)?|option(s)?|proposal|propose|suggest(ed|s)?|ask(ed)? (whether|if))\b/i;
const NEGATED_CHOICE =
  /\b(not|n't|never|yet to|need to|have to|has to|must|still to)\s+(\w+\s+)?(decided|decide|chose|choose|chosen|settle|switch)/i;
/** An observation: what was measured, seen or found, not chosen. */
const FINDING =
  /^(the |a |an |our |this |that )?\S+( \S+)? (is|are|was|were|shows?|showed|takes?|took|has|had|fails?|failed|costs?)\b|\b(found|measured|profiled|observed|noticed|root cause)\b/i;
const ATTEMPT = /\b(tried|trying|attempted|experimented|prototyped|tested whether)\b/i;
const PRONOUN_OBJECT = /^(this|that|it|them|these|those|the (same|simplest|first|second|other|former|latter|one))\b/i;
const STOP = new Set(
  "the a an and or of to in on for with by at from as is are was were be been would could should might may can must it its this that these those we i our us they their them not no so but if then than into onto out up over under after before about per via also only just now still more less very all each every any some one two three new old use used using make made do did done get got have has had which what when where who why how there here while until because since decided chose switched dropped abandoned reverted rejected going went with".split(
    " ",
  ),
);

export function choicesOf(turns: readonly SessionTurn[]): Choice[] {
  const found: Choice[] = [];
  // The content words of the agent's own changes so far, gathered once: every revert after them is checked against them.
  const ownChangesBefore: string[][] = [];
  turns.forEach((turn, index) => {
    const fromDecisionTurn = turn.kind === "decision";
    const attempt = turn.kind === "attempt";
    const sentences = [...splitSentences(turn.thought), ...splitSentences(turn.response)];
    const thoughtCount = splitSentences(turn.thought).length;
    const ofTurn: Choice[] = [];
    sentences.forEach((sentence, position) => {
      const add = (kind: Choice["kind"], text: string, undoes = false) =>
        ofTurn.push({ kind, text: tidy(text), turn: index, position, sentence, fromDecisionTurn, ...(undoes ? { undoes } : {}) });
      for (const clause of clausesOf(sentence)) {
        const verdict = classify(clause, { inThought: position < thoughtCount, fromDecisionTurn });
        if (verdict === "revert") {
          if (undoesOwnChange(clause, ownChangesBefore, sentences.slice(0, position))) add("dropped", clause);
          else if (!attempt) add("decision", clause, true);
        } else if (verdict === "dropped") add("dropped", clause);
        else if (verdict === "decision" && !attempt) add("decision", clause);
        const over = OVER.exec(clause);
        if (over && verdict !== "dropped") add("dropped", `Dropped ${over[2]!.replace(/\.$/, "")}`);
        const instead = verdict === "decision" ? INSTEAD.exec(clause) : null;
        if (instead && contentWords(instead[2]!).length >= 2 && !NOT_AN_APPROACH.test(instead[2]!))
          add("dropped", `Dropped ${instead[2]!}`);
      }
    });
    if (fromDecisionTurn && !ofTurn.some((c) => c.kind === "decision")) {
      // A decision turn leads its thought with the decision (the runbook's "lead with the gist").
      const first = splitSentences(turn.thought).find((s) => !isQuestion(s));
      if (first) ofTurn.push({ kind: "decision", text: tidy(first), turn: index, position: 0, sentence: first, fromDecisionTurn });
    }
    if (attempt && !ofTurn.some((c) => c.kind === "dropped")) {
      const tried = sentences.find((s) => ATTEMPT.test(s)) ?? splitSentences(turn.prompt)[0];
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
    ownChangesBefore.push(...sentences.filter(isOwnChange).map(contentWords));
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
  const sentences = [...splitSentences(turn.thought), ...splitSentences(turn.response)];
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
  let text = decision.text
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

function classify(clause: string, where: { inThought: boolean; fromDecisionTurn: boolean }): Choice["kind"] | "revert" | undefined {
  // A question is open, and a next step is a plan: neither is a choice made.
  if (isQuestion(clause) || isNextStep(clause)) return undefined;
  if (revertedObject(clause) !== undefined) return "revert";
  if (DROP_START.test(clause) || DROP_PASSIVE.test(clause)) return "dropped";
  if ((CONSIDERED.test(clause) || CONSIDERED_PASSIVE.test(clause)) && REJECTION.test(clause)) return "dropped";
  if (FAILED.test(clause) && !VAGUE_SUBJECT.test(clause)) return "dropped";
  if (weighedAlternative(clause)) return "dropped";
  const cue = CHOICE.exec(clause);
  if (cue) {
    const before = clause.slice(0, cue.index);
    if (HEDGE.test(before) || NEGATED_CHOICE.test(clause)) return undefined;
    if (OVER.test(clause) && PRONOUN_OBJECT.test(clause.slice(cue.index + cue[0].length).trim())) return undefined;
    return "decision";
  }
  if (where.inThought && !HEDGE.test(clause)) {
    if (CHANGE.test(clause) && (where.fromDecisionTurn || REASON.test(clause))) return "decision";
    // In a decision turn's thought, a statement with its reason is part of the decision ("batches of 10k, because ...").
    if (where.fromDecisionTurn && REASON.test(clause) && !FINDING.test(clause)) return "decision";
    // A thought that states how things now are, in the present, states what the session put in place.
    if (ARRANGEMENT.test(clause) && !OBSERVED.test(clause)) return "decision";
    // A statement of what something now does and what for, in the present, is a design the session chose.
    if (PURPOSE.test(clause) && !CONCLUSION.test(clause) && !OBSERVED.test(clause) && !PAST_REPORT.test(clause)) return "decision";
  }
  return undefined;
}

/** What a revert undoes ("the retry wrapper", "full mode"); undefined when the clause is no revert. */
function revertedObject(clause: string): string | undefined {
  const object = REVERT.exec(clause)?.[3] ?? PUT_BACK.exec(clause)?.[3] ?? AGAIN.exec(clause)?.[3] ?? REVERT_PASSIVE.exec(clause)?.[1];
  if (object === undefined) return undefined;
  const end = object.search(OBJECT_END);
  const named = end >= 0 ? object.slice(0, end) : object;
  // "Removed it again" names nothing: the turn's attempt says what it was.
  return AGAIN.test(clause) && PRONOUN_OBJECT.test(named.trim()) ? undefined : named;
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

/** "We could X, but ...", "X would also work, but ...": X was weighed and not taken. A pronoun or a condition names no X. */
function weighedAlternative(clause: string): boolean {
  const modal = MODAL.exec(clause);
  if (!modal) return false;
  const before = clause.slice(0, modal.index).trim();
  const after = clause.slice(modal.index);
  if (!before || before.split(/\s+/).length > 8 || /^(it|this|that|they|these|those|there|which|if|when|otherwise)\b/i.test(before))
    return false;
  return WEIGHED_AGAINST.test(after) && !CHOICE.test(before);
}

/** A sentence is read as one clause, unless it joins clauses that each open with a choice ("Decided X; dropped Y"). */
function clausesOf(sentence: string): string[] {
  const clauses = sentence
    .split(/;\s+/)
    .map((c) => c.trim())
    .filter(Boolean);
  if (clauses.length < 2) return [sentence];
  const opens = (c: string) => DROP_START.test(c) || CHOICE.test(c.split(/\s+/).slice(0, 3).join(" ")) || CHANGE.test(c);
  return clauses.slice(1).some(opens) ? clauses : [sentence];
}

/** Restatements of one choice (most of their content words in common) are one: the first is kept. */
function distinct(choices: Choice[]): Choice[] {
  const out: Choice[] = [];
  for (const c of choices) {
    const words = contentWords(c.text);
    const twin = out.find(
      (o) =>
        o.kind === c.kind && shared(contentWords(o.text), words) >= Math.max(2, 0.6 * Math.min(words.length, contentWords(o.text).length)),
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

export function contentWords(text: string): string[] {
  return [
    ...new Set(
      (text.toLowerCase().match(/[a-z0-9][a-z0-9_.-]*[a-z0-9]|[a-z0-9]/g) ?? [])
        .flatMap((w) => w.split(/[-.]/))
        .filter((w) => w.length > 1 && !STOP.has(w))
        .map((w) => w.replace(/(ing|ed|es|s)$/, "").replace(/e$/, "")),
    ),
  ];
}

const shared = (a: readonly string[], b: readonly string[]) => a.filter((w) => b.includes(w)).length;
