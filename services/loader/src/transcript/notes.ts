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
 * does). Sentences that weigh options, hedge, ask, suppose, try or announce the next step commit to nothing (a
 * hedged sentence can still reject an option), and a check's result is neither. A sentence that points back ("not pursuing that", "Reverted.") is kept with the one
 * before it, which names what it is about. A list is read item by item: in the answer of an exchange that changed
 * files, an item that says what was changed and why (a reason, a purpose, what it replaces) is a decision, unless
 * the list was introduced as options, sits under a heading of checks or results, or reports figures. An exchange
 * that changed files and says no decision in so many words decided what its answer says first.
 * docs/benchmarks.md has the precision and recall on sessions the rules were fixed on and on sessions never seen.
 */
export interface Notes {
  decided: string[];
  dropped: string[];
}

/** Declining an option: "We didn't raise the limit", "I wouldn't switch to distroless now". It decides nothing else. */
const DECLINED =
  /^(?:i |we )?(?:didn't|did not|won't|will not|wouldn't|would not) (?:raise|add|use|switch|adopt|go|take|pursue|bump|increase|upgrade|introduce|keep|touch|move|recommend)\b/i;

/** Giving something up: the thing named in the sentence, or in the one before when the sentence points back. */
const GIVE_UP = new RegExp(
  [
    String.raw`\babandon(?:s|ed|ing)?\b`,
    String.raw`\b(?:i|we)(?:'ve| have)? dropped\b|^dropping\b|\bdrop(?:ped|ping)? (?:it|that|this|them|the (?:idea|approach|plan|change|patch|attempt|version|shim|hack|workaround))\b`,
    String.raw`\b(?:scrap|discard|shelve|ditch)(?:s|ped|ed|d|ping|ing)?\b`,
    String.raw`\b(?:gave|give|giving) up\b`,
    String.raw`\bback(?:ed|ing)? (?:it |that |this |them |the \w+ )?out\b`,
    String.raw`\brevert(?:s|ed|ing)?\b`,
    String.raw`\b(?:undo|undoing|undid|undone)\b`,
    String.raw`\broll(?:s|ed|ing)? (?:it |that |this |them )?back\b`,
    String.raw`\bmov(?:e|ed|ing) [^.;]{0,30}\bback\b`,
    String.raw`\b(?:rip|ripped|ripping|threw|throw|throwing) (?:it |that |this |them )?(?:out|away)\b`,
    String.raw`\bremov(?:e|ed|ing) (?:it|that|this|them|the (?:shim|hack|workaround|guard|change|patch))\b`,
    String.raw`\b(?:i|we|was|were|got|been) rejected\b`,
    String.raw`\b(?:took|take|taking|taken) (?:it|that|this|them|\S+) out\b|\b(?:leav(?:e|ing)|left) (?:it|that|this|them|\S+)(?: \S+)? out\b`,
    String.raw`\bso (?:i'm|i am|we're|we are|i'll|we'll|i|we) (?:removing|remove|taking|dropping|reverting|backing|undoing|leaving)\b`,
    String.raw`\bnot (?:pursu(?:e|ing)|going (?:that way|down that|with|to (?:use|pursue|go))|worth\b)`,
    String.raw`^(?:so |and |but )?not \w+ing\b`,
    DECLINED.source,
    // "We could X, but …", "X would also fix it, but …": an option weighed and turned down.
    String.raw`^(?:i |we )?(?:could|can|might)\b[^.]*,? but\b|\bwould (?:also |too )?(?:work|fix|help|solve|do)\b[^.]*\bbut\b`,
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
    String.raw`\b(?:didn't|did not|doesn't|does not|won't|will not|wouldn't|would not|can't|cannot|couldn't|could not) (?:really |actually |fully |even )?(?:work|help|fix|solve|scale|hold|cut it|survive|cover|express|match|stop|prevent|do it|make a difference|change anything|pay off|start|run|fit)\b`,
    String.raw`\b(?:isn't|is not|wasn't|was not|aren't|are not|not) (?:enough|sufficient|reliable|viable|feasible|practical|an option|the answer|the fix|a fix|the solution|the way|worth it|safe|acceptable|going to work|good enough|fast enough|an improvement)\b`,
    String.raw`\b(?:isn't|is not|wasn't|was not|not) the (?:right|real) (?:fix|answer|cause|approach|tool|store|place|layer|choice)\b`,
    String.raw`\bno (?:difference|improvement|better|effect|gain|real gain|help)\b|\bwithin (?:the )?noise\b`,
    String.raw`\bmade (?:it |things |no )?(?:worse|difference)\b`,
    String.raw`\btoo (?:slow|costly|expensive|complex|complicated|risky|fragile|flaky|heavy|much|big|brittle|invasive|noisy|many|coarse|fine-grained|leaky|slow to)\b`,
    String.raw`\bwrong (?:approach|store|tool|fix|idea|place|layer|choice|direction|abstraction|level|way|call|trade-?off|default)\b`,
    String.raw`\b(?:overkill|backfired|a bust|counterproductive)\b|\b(?:heavy|expensive|costly|risky) for (?:this|us|our|what)\b`,
    String.raw`\b(?:can't|cannot) be (?:combined|used|run|mixed|shared)\b`,
    String.raw`\b(?:turned out|turns out) (?:to be )?(?:worse|slower|wrong|useless|pointless|unreliable|unnecessary|a dead end|not)\b`,
    String.raw`\bhelps? (?:a little|only a little|marginally|slightly)\b|\bonly helps\b`,
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
    String.raw`\binstead[.!]?$|\binstead of\b|\brather than\b|\bin favou?r of\b|\bover\b[^.,;]{1,40}\bbecause\b`,
    String.raw`\bswitch(?:ed|es|ing)?\b[^.;]{0,60}\bto\b`,
    String.raw`\breplac(?:e|ed|es|ing)\b[^.;]{0,80}\b(?:with|by)\b`,
    String.raw`\bmov(?:e|ed|es|ing)\b[^.;]{0,60}\b(?:into|out of|off|to (?:a|an|the|our|its))\b`,
    String.raw`\bkeep(?:s|ing)?\b[^.;]{0,60}\b(?:rather|as it is|as is)\b|\bkept\b`,
    String.raw`\b(?:from now on|going forward)\b`,
    String.raw`\bstays? (?:on|off|in|as|at|behind|a|an)\b|\bwill stay\b`,
  ].join("|"),
  "i",
);

/** What the change made true, said as the new state of the code: "the limiter now keeps…", "misses are now coalesced". */
const NEW_STATE = /\bnow (?!(?:i|we|you|let|pass(?:es)?|fails?|that|the)\b)[a-z]+(?:s|ed)\b/i;
/** A reason or a purpose given for a change: what makes it a choice rather than a routine edit. */
const REASON =
  /\b(?:because|since|so that|so|to avoid|to keep|in order to|otherwise|which (?:avoids|keeps|means|lets|makes|stops|prevents)|instead of|rather than|only when|only after|never)\b/i;
/** A try is an attempt on the way, whatever it did: not what was decided. */
const TRIED = /\b(?:tried|try|trying|attempt(?:ed|ing)?|experiment(?:ed|ing)?)\b/i;
/** A check's result (the tests pass, the lint is clean): not a decision nor a dropped approach. */
const CHECK =
  /^(?:(?:all|the|both|every|our|unit|full|\d+)\s+)*(?:[\w:-]+ )?(?:tests?|suite|specs?|build|ci|checks?|lint|linter|typecheck|type check|compil\w+|checked|verified|measured|benchmarks?|numbers|results?)\b[^\n]{0,80}?(?:\b(?:pass(?:es|ed|ing)?|fail(?:s|ed|ing)?|green|red|clean|succeed(?:s|ed)?|broke|broken|ok)\b|\d)|\b\d+ (?:passed|passing|failed|failures|tests)\b|^(?:all )?green\b/i;
/** Asking, supposing or announcing the next step: nothing is committed to or given up. */
const NOT_COMMITTED =
  /^(?:let me|let's|i'll (?:read|check|look|run|start|try|see|test|measure|verify)|first,? (?:i|let)|now i|next,? i|if|when|whether|once|options?:|maybe|perhaps|possibly|either)\b|\?$/i;
/**
 * Weighing: a hedge or the options themselves. It commits to nothing, but it can give an option up — a rejection
 * is often said hypothetically ("X would be read twice", "under X they'd be the only keys Redis could evict").
 */
const WEIGHING =
  /^(?:i |we )?can\b|\b(?:could|might|may|would be|probably|perhaps|maybe|alternatively|options? (?:are|is|:)|two options|two ways|trade-?offs?:|(?:choice|decision) is between)\b/i;
/** A sentence that names nothing itself and points back at the one before: "Not pursuing that.", "It didn't help." */
const POINTS_BACK =
  /^(?:(?:so|but|and|then|that said|still|ok|okay|sadly|unfortunately|as expected),?\s+)?(?:that|this|it|these|those|they|not|no|the (?:idea|approach|change|patch|attempt|guard|experiment|option))\b|\b(?:that|this|the) (?:way|approach|idea|route|path|option)\b|\b(?:revert\w*|drop\w*|undo\w*|undid|remov\w*|abandon\w*|scrap\w*) (?:it|that|this|them)\b/i;

/** Two figures set side by side ("12 ms instead of 2.4 s") are a measurement, whatever word joins them. */
const COMPARED_FIGURES = /\d[^.;]{0,30}\b(?:instead of|rather than|against|vs\.?|versus|from|over)\b[^.;]{0,12}\d/i;
/** A figure with its unit: a measurement. */
const FIGURE = /\d[\d.,]*\s?(?:ms|s|sec|seconds?|min|minutes?|h|hours?|%|x|×|[kmgt]i?b|rps|req\/s)\b|\d+m\d+s\b|\bp\d\d\b/i;
/** An answer's opening that names no change: "Done.", "I've fixed the issue.", "Here is what changed". */
const GENERIC =
  /^(?:done|fixed|all set|green|here(?:'s| is| are)|summary|changes?:|i(?:'ve| have)? (?:fixed|made|implemented|updated|finished|completed|addressed|resolved)\b[^.]{0,40}\b(?:changes?|issue|bug|problem|following|request|task)\b)/i;
/** What was wrong, said in the past: the finding, not what was decided. */
const CAUSE = /^(?!.*\bnow\b).*\b(?:was|were|had|did)\b/i;
/** The clause a sentence opens with, before a colon or semicolon adds the figures that bear it out. */
const mainClause = (text: string) => text.split(/[:;]\s|\s[—–]\s/)[0]!;

/**
 * A text mostly of figures reports them ("staging: 0 add / 0 change / 0 destroy"): at least three numbers, one
 * for every four words or fewer. A version ("1.35.36") counts once.
 */
function reportsFigures(text: string): boolean {
  const numbers = text.match(/\d+(?:[.,]\d+)*/g)?.length ?? 0;
  return numbers >= 3 && numbers * 4 >= text.split(/\s+/).length;
}
/** The line introducing a list of options to weigh, not of things done. */
const OPTIONS_LEAD = /\b(?:options?|alternatives?|choices|ways|approaches|candidates)\b[^.]*:$/i;
/** A heading over what was checked or measured: the items under it are checks. */
const CHECKS_HEADING = /\b(?:tests?|checks?|checked|verif\w*|measured|measurements?|results?|numbers|benchmarks?)\b/i;
/** A heading: markdown's, or a line in bold alone ("**Checks**", "**Measured (1 h, staging)**"). */
const HEADING = /^\s*(?:#{1,6}\s+(.*)|\*\*([^*]+)\*\*\s*(?:\([^)]*\))?\s*:?\s*)$/;

/** A note says what it is about: "I reverted it." alone names nothing. */
const MIN_WORDS = 5;
/** At most this many characters of a note are kept (a note that points back keeps the sentence before it too). */
const NOTE_CHARS = 320;

/** A sentence of the assistant's prose, or one item of a list it wrote (an item says one thing, in one or more sentences). */
interface Unit {
  text: string;
  /** It is part of the answer, not reasoning or narration on the way. */
  answer: boolean;
  item: boolean;
  /** What the list an item belongs to holds, when its lead line or heading says: options to weigh, or checks made. */
  list?: "options" | "checks";
}

export function notesOf(exchange: Exchange): Notes {
  const units: Unit[] = [
    ...exchange.thought.filter((t) => !/^\s*(?:- |failed: )/.test(t)).flatMap((t) => unitsOf(t, false)),
    ...exchange.pending.flatMap((t) => unitsOf(t, true)),
  ];
  const wrote = exchange.edited.length > 0;
  const decided: string[] = [];
  const dropped: string[] = [];
  const add = (list: string[], i: number) => {
    const { text, item } = units[i]!;
    const short = text.split(/\s+/).length < MIN_WORDS;
    const before = i > 0 && (short || (!item && POINTS_BACK.test(text))) ? units[i - 1]!.text : "";
    const whole = before ? `${before} ${text}` : text;
    if (whole.split(/\s+/).length < MIN_WORDS) return;
    const note = whole.length <= NOTE_CHARS ? whole : `${whole.slice(0, NOTE_CHARS - 1)}…`;
    if (!list.includes(note)) list.push(note);
  };
  units.forEach(({ text, answer, item }, i) => {
    // An item is weighed by its opening sentence; its later sentences say why.
    const opening = item ? (sentencesOf(text)[0] ?? text) : text;
    if (units[i]!.list || NOT_COMMITTED.test(opening) || CHECK.test(opening)) return;
    // In its reasoning, "No: …" turns down what the sentence before proposed.
    const givesUp = GIVE_UP.test(text) || WANTING.test(text) || (!answer && /^no\b[:,]/i.test(text));
    if (givesUp) add(dropped, i);
    if (
      WEIGHING.test(opening) ||
      TRIED.test(opening) ||
      DECLINED.test(opening) ||
      /\b(?:decided against|chose not to|decided not to)\b/i.test(text)
    )
      return;
    // "Replacing them with flags.yaml", "kept npm's own cache": giving one thing up can commit to another.
    const measured = COMPARED_FIGURES.test(mainClause(opening)) || (item && reportsFigures(opening));
    const changed = wrote && (NEW_STATE.test(text) || (answer && item && !givesUp && REASON.test(text)));
    if ((COMMIT.test(text) || changed) && !measured) add(decided, i);
  });
  // An exchange that changed files decided what it changed: its answer's first sentence, when nothing said so.
  if (decided.length === 0 && wrote) {
    const headline = units.findIndex(
      (u) =>
        u.answer &&
        !NOT_COMMITTED.test(u.text) &&
        !WEIGHING.test(u.text) &&
        !CHECK.test(u.text) &&
        !GENERIC.test(u.text) &&
        !CAUSE.test(u.text) &&
        !FIGURE.test(mainClause(u.text)) &&
        !COMPARED_FIGURES.test(mainClause(u.text)) &&
        !reportsFigures(u.text),
    );
    if (headline >= 0 && !dropped.some((d) => d.includes(units[headline]!.text))) add(decided, headline);
  }
  return { decided, dropped };
}

/**
 * A text as the assistant wrote it, in units: each list item whole (its continuation lines joined), each other
 * line's sentences one by one. Headings, tables and code blocks say nothing to note.
 */
function unitsOf(text: string, answer: boolean): Unit[] {
  const units: Unit[] = [];
  let item: string[] | undefined;
  let fenced = false;
  /** What the list being read holds, as the line or heading before it says. */
  let list: Unit["list"];
  const close = () => {
    if (item) units.push({ text: clean(item.join(" ")), answer, item: true, ...(list ? { list } : {}) });
    item = undefined;
  };
  for (const line of text.split("\n")) {
    if (/^\s*(?:```|~~~)/.test(line)) {
      close();
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    const marker = /^\s*(?:[-*•]|\d+[.)])\s+(.*)$/.exec(line);
    const heading = HEADING.exec(line);
    if (marker) {
      close();
      item = [marker[1]!];
    } else if (heading) {
      close();
      list = CHECKS_HEADING.test(heading[1] ?? heading[2]!) ? "checks" : undefined;
    } else if (!/\S/.test(line) || /^\s*\|/.test(line)) close();
    else if (item && /^\s+\S/.test(line)) item.push(line.trim());
    else {
      close();
      list = OPTIONS_LEAD.test(line.trim()) ? "options" : undefined;
      for (const sentence of sentencesOf(line)) units.push({ text: sentence, answer, item: false });
    }
  }
  close();
  return units.filter((u) => u.text.length > 0);
}

const clean = (text: string) => text.replace(/\*\*/g, "").trim();

function sentencesOf(text: string): string[] {
  return (
    clean(text)
      // A sentence may open with an identifier in lower case ("charlock_holmes uses ICU"); abbreviations end none.
      .split(/(?<![.\s](?:e\.g|i\.e|vs|etc|cf|approx))(?<=[.!?])\s+(?=[A-Za-z0-9`"(])/)
      .map((s) => s.trim())
      .filter((s) => s.length > 0)
  );
}

/** The notes as lines heading a memory's thought, and the kind they make it. */
export function notesBlock(notes: Notes): { head: string; kind: "decision" | "attempt" | undefined } {
  const lines = [...notes.decided.map((d) => `Decided: ${d}`), ...notes.dropped.map((d) => `Tried and dropped: ${d}`)];
  return {
    head: lines.join("\n"),
    kind: notes.decided.length > 0 ? "decision" : notes.dropped.length > 0 ? "attempt" : undefined,
  };
}
