import type { Exchange } from "./exchanges.js";

/**
 * What a person would name in an exchange when asked what it left behind: what was decided (and why, when the
 * sentence says so) and what was tried and dropped. Read from the assistant's own words — its reasoning, what
 * it said between tool calls and its answer — sentence by sentence; tool lines and tool output are not read (a
 * failing test on the way to a fix is a check, not a dropped approach).
 *
 * A sentence is read for what it does, not for a fixed phrase: it gives up on something (abandons, reverts,
 * rules out), judges something wanting (does not work, is not enough, is the wrong store, too costly), or
 * commits to something (decides, goes with, keeps X rather than Y, replaces X with Y, says what the code now
 * does). Sentences that only weigh options, ask, suppose or announce the next step commit to nothing. A sentence
 * that points back ("not pursuing that") is kept with the sentence before it, which names what it is about. An
 * exchange that changed files and says no decision in so many words decided what its answer says first.
 * docs/benchmarks.md has the precision and recall on sessions the rules were fixed on and on sessions never seen.
 */
export interface Notes {
  decided: string[];
  dropped: string[];
}

/** Giving something up: the thing named in the sentence, or in the one before when the sentence points back. */
const GIVE_UP = new RegExp(
  [
    String.raw`\babandon(?:s|ed|ing)?\b`,
    String.raw`\bdrop(?:s|ped|ping)? (?:it|that|this|them|the (?:idea|approach|plan|change|patch)|the\b)`,
    String.raw`\b(?:scrap|discard|shelve|ditch)(?:s|ped|ed|d|ping|ing)?\b`,
    String.raw`\b(?:gave|give|giving) up\b`,
    String.raw`\bback(?:ed|ing)? (?:it |that |this |them |the \w+ )?out\b`,
    String.raw`\brevert(?:s|ed|ing)?\b`,
    String.raw`\b(?:undo|undoing|undid|undone)\b`,
    String.raw`\broll(?:s|ed|ing)? (?:it |that |this |them )?back\b`,
    String.raw`\b(?:rip|ripped|ripping|threw|throw|throwing) (?:it |that |this |them )?(?:out|away)\b`,
    String.raw`\bnot (?:pursu(?:e|ing)|going (?:that way|down that|with|to (?:use|pursue|go))|worth\b)`,
    String.raw`\bwon't (?:pursue|go (?:that way|with))\b`,
    String.raw`\brul(?:e|ed|ing) (?:it |that |this |them )?out\b`,
    String.raw`\bdecided against\b|\bchose not to\b|\bdecided not to\b`,
    String.raw`\b(?:it's|that's|so it's|is|was) out\b(?! of)`,
    String.raw`\boff the table\b`,
    String.raw`\b(?:went|go|going|back) (?:back )?to the (?:original|old|previous|earlier)\b`,
    String.raw`\bmov(?:e|ed|ing) on from\b`,
    String.raw`\bdead end\b`,
  ].join("|"),
  "i",
);

/** Judging something tried or weighed as wanting. */
const WANTING = new RegExp(
  [
    String.raw`\b(?:didn't|did not|doesn't|does not|won't|will not|wouldn't|would not|can't|cannot|couldn't|could not) (?:really |actually |fully |even )?(?:work|help|fix|solve|scale|hold up|cut it|survive|cover|express|match|stop|prevent|do it|make a difference|change anything|pay off)\b`,
    String.raw`\b(?:isn't|is not|wasn't|was not|aren't|are not|not) (?:enough|sufficient|reliable|viable|feasible|practical|an option|the answer|the fix|a fix|the solution|the way|worth it|safe|acceptable|going to work|good enough|fast enough|an improvement)\b`,
    String.raw`\b(?:isn't|is not|wasn't|was not|not) the (?:right|real) (?:fix|answer|cause|approach|tool|store|place|layer|choice)\b`,
    String.raw`\bno (?:difference|improvement|better|effect|gain|real gain|help)\b`,
    String.raw`\bmade (?:it |things |no )?(?:worse|difference)\b`,
    String.raw`\btoo (?:slow|costly|expensive|complex|complicated|risky|fragile|flaky|heavy|much|big|brittle|invasive|noisy|many|coarse|fine-grained|leaky|slow to)\b`,
    String.raw`\bwrong (?:approach|store|tool|fix|idea|place|layer|choice|direction|abstraction|level|way|call|trade-?off|default)\b`,
    String.raw`\b(?:overkill|backfired|a bust|counterproductive)\b`,
    String.raw`\b(?:turned out|turns out) (?:to be )?(?:worse|slower|wrong|useless|pointless|unreliable|unnecessary|a dead end|not)\b`,
    String.raw`\bhelps? (?:a little|only a little|marginally|slightly)\b(?:[^.]{0,40}\bnot enough\b)?`,
  ].join("|"),
  "i",
);

/** Committing to something. */
const COMMIT = new RegExp(
  [
    String.raw`\bdecid(?:e|ed|ing) (?:to|on)\b|\bdecision(?: is|:)`,
    String.raw`\b(?:chose|choose|choosing|chosen|picked|opted|opting)\b`,
    String.raw`\b(?:go|going|went|goes) with\b`,
    String.raw`\bsettl(?:e|ed|ing) on\b`,
    String.raw`\b(?:stick|sticking|stuck|stay|stays|staying) with\b`,
    String.raw`\b(?:prefer|preferred|preferring|adopt|adopted|adopting|standardi[sz](?:e|ed|ing) on)\b`,
    String.raw`\b(?:the|my|our) (?:plan|fix|approach|solution|choice|way forward) (?:is|will be|here is|:)`,
    String.raw`\b(?:we|i)(?:'ll| will| should| are going to|'re going to) (?:use|keep|go|switch|move|store|put|run|make|rely|write|build|generate|deliver|handle|read)\b`,
    String.raw`\binstead of\b|\brather than\b|\bin favou?r of\b|\bover\b[^.,;]{1,40}\bbecause\b`,
    String.raw`\b(?:use|uses|using|used) [^.,;]{1,60} instead\b`,
    String.raw`\bswitch(?:ed|es|ing)?\b[^.;]{0,60}\bto\b`,
    String.raw`\breplac(?:e|ed|es|ing)\b[^.;]{0,80}\b(?:with|by)\b`,
    String.raw`\bmov(?:e|ed|es|ing)\b[^.;]{0,60}\b(?:into|out of|off|to (?:a|an|the|our|its))\b`,
    String.raw`\bkeep(?:s|ing)?\b[^.;]{0,60}\b(?:rather|instead|as it is|as is)\b|\bkept\b`,
    String.raw`\b(?:from now on|going forward)\b`,
    String.raw`\bstays? (?:on|off|in|as|at|behind)\b`,
  ].join("|"),
  "i",
);

/** What the change made true, said as the new state of the code: "the limiter now keeps…", "misses are now coalesced". */
const NEW_STATE = /\bnow (?!(?:i|we|you|let|pass(?:es)?|fails?|that|the)\b)[a-z]+(?:s|ed)\b/i;
/** The state of the tests, the build or a measurement is a check's result, not a decision or a dropped approach. */
const CHECK =
  /^(?:(?:all|the|both|every|our|\d+)\s+)*(?:(?:[\w-]+ )?tests?|suite|specs?|build|ci|checks?|lint|linter|typecheck|type check|compil\w+|p\d\d|latency|the (?:load test|benchmark))\b/i;
/** Weighing, asking, supposing or announcing the next step: nothing is committed to or given up. */
const NOT_COMMITTED =
  /^(?:let me|let's|i'll (?:read|check|look|run|start|try|see|test|measure|verify)|first,? (?:i|let)|now i|next,? i|if|when|whether|once|options?:|maybe|perhaps|possibly|either)\b|\b(?:could|might|may|would be|probably|perhaps|maybe|alternatively|options? (?:are|is|:)|two options|trade-?offs?:|(?:choice|decision) is between)\b|\?$/i;
/** A sentence that names nothing itself and points back at the one before: "Not pursuing that.", "It didn't help." */
const POINTS_BACK =
  /^(?:(?:so|but|and|then|that said|still|ok|okay|sadly|unfortunately),?\s+)?(?:that|this|it|these|those|they|not|no|the (?:idea|approach|change|patch|attempt|guard|experiment|option))\b|\b(?:that|this|the) (?:way|approach|idea|route|path|option)\b/i;

/** An answer's opening clause with a figure in it reports a measurement ("p99 is 1.2 s"), not the change. */
const MEASURED = /\d/;
/** Two figures set side by side ("12 ms instead of 2.4 s") are a measurement, whatever word joins them. */
const COMPARED_FIGURES = /\d[^.;]{0,30}\b(?:instead of|rather than|against|vs\.?|versus|from|over)\b[^.;]{0,12}\d/i;
/** An answer's opening that names no change: "Done.", "I've fixed the issue.", "Here is what changed". */
const GENERIC =
  /^(?:done|fixed|all set|here(?:'s| is| are)|summary|changes?:|i(?:'ve| have)? (?:fixed|made|implemented|updated|finished|completed|addressed|resolved)\b[^.]{0,40}\b(?:changes?|issue|bug|problem|following|request|task)\b)/i;
/** What was wrong, said in the past: the finding, not what was decided. */
const CAUSE = /^(?!.*\bnow\b).*\b(?:was|were|had|did)\b/i;
/** The clause a sentence opens with, before a colon or semicolon adds the figures that bear it out. */
const mainClause = (text: string) => text.split(/[:;]\s/)[0]!;

/** A note says what it is about: "I reverted it." alone names nothing. */
const MIN_WORDS = 5;
/** At most this many characters of a note are kept (a note that points back keeps the sentence before it too). */
const NOTE_CHARS = 320;

interface Sentence {
  text: string;
  /** It is part of the answer, not reasoning or narration on the way. */
  answer: boolean;
}

export function notesOf(exchange: Exchange): Notes {
  const sentences: Sentence[] = [
    ...exchange.thought
      .filter((t) => !/^\s*(?:- |failed: )/.test(t))
      .flatMap((t) => sentencesOf(t).map((text) => ({ text, answer: false }))),
    ...exchange.pending.flatMap((t) => sentencesOf(t).map((text) => ({ text, answer: true }))),
  ];
  const decided: string[] = [];
  const dropped: string[] = [];
  const add = (list: string[], i: number) => {
    const { text } = sentences[i]!;
    const before = i > 0 && POINTS_BACK.test(text) ? sentences[i - 1]!.text : "";
    const whole = before ? `${before} ${text}` : text;
    if (whole.split(/\s+/).length < MIN_WORDS) return;
    const note = whole.length <= NOTE_CHARS ? whole : `${whole.slice(0, NOTE_CHARS - 1)}…`;
    if (!list.includes(note)) list.push(note);
  };
  sentences.forEach(({ text }, i) => {
    if (NOT_COMMITTED.test(text) || CHECK.test(text)) return;
    const givesUp = GIVE_UP.test(text) || WANTING.test(text);
    if (givesUp) add(dropped, i);
    // "Decided against X" and "X is not the answer" give X up; a sentence that also commits to something else
    // ("Replacing them with flags.yaml", "kept npm's own cache") is a decision as well.
    const commits = (COMMIT.test(text) || NEW_STATE.test(text)) && !COMPARED_FIGURES.test(mainClause(text));
    if (commits && !/\b(?:decided against|chose not to|decided not to)\b/i.test(text)) add(decided, i);
  });
  // An exchange that changed files decided what it changed: its answer's first sentence, when nothing said so.
  if (decided.length === 0 && exchange.edited.length > 0) {
    const headline = sentences.findIndex(
      (s) =>
        s.answer &&
        !NOT_COMMITTED.test(s.text) &&
        !CHECK.test(s.text) &&
        !GENERIC.test(s.text) &&
        !CAUSE.test(s.text) &&
        !MEASURED.test(mainClause(s.text)),
    );
    if (headline >= 0 && !dropped.some((d) => d.includes(sentences[headline]!.text))) add(decided, headline);
  }
  return { decided, dropped };
}

function sentencesOf(text: string): string[] {
  return text
    .replace(/\*\*/g, "")
    .split(/\n+|(?<=[.!?])\s+(?=[A-Z`"(])/)
    .map((s) => s.replace(/^\s*(?:[-*•]|\d+\.)\s+/, "").trim())
    .filter((s) => s.length >= 12);
}

/** The notes as lines heading a memory's thought, and the kind they make it. */
export function notesBlock(notes: Notes): { head: string; kind: "decision" | "attempt" | undefined } {
  const lines = [...notes.decided.map((d) => `Decided: ${d}`), ...notes.dropped.map((d) => `Tried and dropped: ${d}`)];
  return {
    head: lines.join("\n"),
    kind: notes.decided.length > 0 ? "decision" : notes.dropped.length > 0 ? "attempt" : undefined,
  };
}
