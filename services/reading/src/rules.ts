/**
 * The rules that say what a sentence an agent wrote does: gives something up, judges it wanting, declines an
 * option, commits to something, states the new arrangement, or only weighs, asks, plans or reports a check.
 * read.ts applies them to a text's units; the capture hook (loader) and the extractive summaries (summarizer)
 * read through it, each from its own source (an exchange of a transcript, a stored turn).
 */
/** Declining an option: "We didn't raise the limit", "I wouldn't switch to distroless now". It decides nothing else. */
export const DECLINED =
  /^(?:i |we )?(?:didn't|did not|won't|will not|wouldn't|would not) (?:raise|add|use|switch|adopt|go|take|pursue|bump|increase|upgrade|introduce|keep|touch|move|recommend)\b/i;

/** Giving something up: the thing named in the sentence, or in the one before when the sentence points back. */
export const GIVE_UP = new RegExp(
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
export const WANTING = new RegExp(
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

/** What takes the place of what is given up: "replacing X with Y", "Y instead", "kept Y". */
export const REPLACES =
  /\binstead\b|\brather than\b|\bin favou?r of\b|\breplac(?:e|ed|es|ing)\b[^.;]{0,80}\b(?:with|by)\b|\bswitch(?:ed|es|ing)?\b[^.;]{0,60}\bto\b|\bkept\b|\bmov(?:e|ed|es|ing)\b[^.;]{0,60}\b(?:into|to (?:a|an|the|our|its))\b|\b(?:went|go|going) with\b|\bsettl(?:e|ed|ing) on\b|\bstay(?:s|ing)? with\b|\bdecided\b/i;

/** Committing to something. */
export const COMMIT = new RegExp(
  [
    String.raw`\bdecid(?:e|ed|ing) (?:to|on)\b|\bdecision(?: is|:)`,
    // "…, so full jitter it is": a comparison closed on its winner.
    String.raw`\bso (?:\S+ ){1,4}it is[.!]?$`,
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
    String.raw`\bstays? (?:on|off|in|as|behind|a|an)\b|\bstays? at (?![~\d])|\bwill stay\b`,
  ].join("|"),
  "i",
);

/** What the change made true, said as the new state of the code: "the limiter now keeps…", "misses are now coalesced". */
export const NEW_STATE =
  /\bnow (?!(?:i|we|you|let|pass(?:es)?|fails?|that|the|takes|costs|shows|returns|works|misses|matches|crashes|hangs|seems|looks|needs)\b)[a-z]+(?:s|ed)\b/i;
/** A reason or a purpose given for a change: what makes it a choice rather than a routine edit. */
export const REASON =
  /\b(?:because|since|so that|so|to avoid|to keep|in order to|otherwise|which (?:avoids|keeps|means|lets|makes|stops|prevents)|instead of|rather than|only when|only after|never)\b/i;
/** A try is an attempt on the way, whatever it did: not what was decided. */
export const TRIED = /\b(?:tried|try|trying|attempt(?:ed|ing)?|experiment(?:ed|ing)?)\b/i;
/** A check's result (the tests pass, the lint is clean): not a decision nor a dropped approach. */
export const CHECK =
  /^(?:(?:all|the|both|every|our|unit|full|\d+)\s+)*(?:[\w:-]+ )?(?:tests?|suite|specs?|build|ci|checks?|lint|linter|typecheck|type check|compil\w+|checked|verified|measured|benchmarks?|numbers|results?)\b[^\n]{0,80}?(?:\b(?:pass(?:es|ed|ing)?|fail(?:s|ed|ing)?|green|red|clean|succeed(?:s|ed)?|broke|broken|ok)\b|\d)|\b\d+ (?:passed|passing|failed|failures|tests)\b|^(?:all )?green\b/i;
/**
 * What an older change did, told as the cause: "Last Friday's gateway change replaced the wildcard
 * list with an allow-list", "Release 4.2 added a synchronous call". A finding about the past, not a choice made now.
 */
export const OLDER_CHANGE =
  /^(?:[\w'’-]+\s+){0,4}(?:change|commit|release|pr|deploy|deployment|upgrade|migration|hotfix)\b[^.;]*?\b(?:replaced|moved|switched|removed|added|changed|introduced)\b/i;
/** A command and what it showed ("`npm run e2e -- x.e2e.ts`: failed at first …", "`helm template` ×2: identical"): a check. */
export const COMMAND_RESULT = /^`[^`]*\s[^`]*`[^:]{0,40}:/;
/** A plan announced after the fact ("Not fixed yet; next step is …"): what comes, not what was decided. */
export const PLANNED = /\bnext steps? (?:is|are|will be|:)/i;
/** Asking, supposing or announcing the next step: nothing is committed to or given up. */
export const NOT_COMMITTED =
  /^(?:let me|let's|i'll (?:read|check|look|run|start|try|see|test|measure|verify|write|inject|reproduce|find|search|compare|simulate|profile|trace|instrument|log)|first,? (?:i|let)|now i|next,? i|if|when|whether|once|options?:|maybe|perhaps|possibly|either|(?:comparing|checking|testing|looking|reading|running|measuring|verifying)\b.*\binstead)\b|^(?:one thing|note|caveat|heads[- ]up|watch out)\b[^:]{0,40}:|\?$/i;
/**
 * Weighing: a hedge or the options themselves. It commits to nothing, but it can give an option up — a rejection
 * is often said hypothetically ("X would be read twice", "under X they'd be the only keys Redis could evict").
 */
export const WEIGHING =
  /^[^,;]*?\bwould\b|\b(?:can't|cannot|won't|shouldn't) (?:stay|remain|be kept)\b|\bthe (?:smallest|simplest|easiest|quickest|cheapest|obvious) (?:change|fix|option|way)\b|^(?:i |we )?can\b|\b(?:could|might|may|would be|probably|perhaps|maybe|alternatively|options? (?:are|is|:)|two options|two ways|trade-?offs?:|(?:choice|decision) is between)\b/i;
/** A sentence that names nothing itself and points back at the one before: "Not pursuing that.", "It didn't help." */
export const POINTS_BACK =
  /^(?:(?:so|but|and|then|that said|still|ok|okay|sadly|unfortunately|as expected),?\s+)?(?:that|this|it|these|those|they|not|no|the (?:idea|approach|change|patch|attempt|guard|experiment|option))\b|\b(?:that|this|the) (?:way|approach|idea|route|path|option)\b|\b(?:revert\w*|drop\w*|undo\w*|undid|remov\w*|abandon\w*|scrap\w*) (?:it|that|this|them)\b/i;

/** Two figures set side by side ("12 ms instead of 2.4 s") are a measurement, whatever word joins them. */
export const COMPARED_FIGURES =
  /\d[^.;]{0,30}\b(?:instead of|rather than|against|vs\.?|versus|from|over)\b[^.;]{0,12}\d|\d[^.;]{0,12}\bbefore\b[^.;]{0,12}\d|\d[^.;]{0,20}\(was [^)]*\d/i;
/** A figure with its unit: a measurement. */
export const FIGURE = /\d[\d.,]*\s?(?:ms|s|sec|seconds?|min|minutes?|h|hours?|%|x|×|[kmgt]i?b|rps|req\/s)\b|\d+m\d+s\b|\bp\d\d\b/i;
/** An answer's opening that names no change: "Done.", "I've fixed the issue.", "Here is what changed". */
export const GENERIC =
  /^(?:done|fixed|all set|green|here(?:'s| is| are)|summary|changes?:|(?:root )?cause\b|i(?:'ve| have)? (?:fixed|made|implemented|updated|finished|completed|addressed|resolved)\b[^.]{0,40}\b(?:changes?|issue|bug|problem|following|request|task)\b)/i;
/** What was wrong, said in the past: the finding, not what was decided. */
export const CAUSE = /^(?!.*\bnow\b).*\b(?:was|were|had|did)\b/i;
/** The clause a sentence opens with, before a colon or semicolon adds the figures that bear it out. */
export const mainClause = (text: string) => text.split(/[:;]\s|\s[—–]\s/)[0]!;

/**
 * A text mostly of figures reports them ("staging: 0 add / 0 change / 0 destroy"): at least three numbers, one
 * for every four words or fewer. A version ("1.35.36") counts once.
 */
export function reportsFigures(text: string): boolean {
  const numbers = text.match(/\d+(?:[.,]\d+)*/g)?.length ?? 0;
  return numbers >= 3 && numbers * 4 >= text.split(/\s+/).length;
}
/** The line introducing a list of options to weigh, not of things done. */
export const OPTIONS_LEAD = /\b(?:options?|alternatives?|choices|ways|approaches|candidates)\b[^.]*:$/i;
/** A heading over what was checked or measured: the items under it are checks. */
export const CHECKS_HEADING = /\b(?:tests?|checks?|checked|verif\w*|measured|measurements?|results?|numbers|benchmarks?)\b/i;
/** A heading: markdown's, or a line in bold alone ("**Checks**", "**Measured (1 h, staging)**"). */
export const HEADING = /^\s*(?:#{1,6}\s+(.*)|\*\*([^*]+)\*\*\s*(?:\([^)]*\))?\s*:?\s*)$/;

/** A note says what it is about: "I reverted it." alone names nothing. */
export const MIN_WORDS = 5;
/** At most this many characters of a note are kept (a note that points back keeps the sentence before it too). */
export const NOTE_CHARS = 320;

/**
 * A cue that says a choice was made: "decided", "chose", "going/went with", "settled on", "opted", "switched ...
 * to", "picked", "will use", "we will <verb>", "agreed", "Decision:".
 */
export const CHOICE =
  /\b(decided|decide to|decision:|chose|choose to|chosen|going with|go with|went with|settled on|settle on|opted|opt for|picked|switch(ed|ing)?\b(?:\s+\S+){0,5}?\s+(to|over)\b|will use|adopted|(we|i) agreed|agreed (to|on|that)|we('ll| will| are going to) (?!(see|check|know|find out|need|look|try|ask|wait|have)\b)[a-z]+)\b/i;
/** A change told as done, opening the sentence: "Moved …", "Replaced …", "Added …". */
export const CHANGE =
  /^(we |i )?(moved|replaced|added|made|changed|kept|set|split|stripped|wrapped|introduced|removed|raised|lowered|limited|pinned|bumped|enabled|disabled|turned|converted|rewrote|extracted|resent|created|implemented)\b/i;
/** Giving up, said at the start: "Dropped …", "Rejected …", "Not going with …". */
export const DROP_START =
  /^(we |i )?(dropped|abandoned|reverted|rejected|ruled out|gave up( on)?|backed out|rolled back|scrapped|discarded|decided against|not going with|undid)\b/i;
const DROP_PASSIVE =
  /\b(was|were|is|got|has been|have been) (dropped|abandoned|reverted|rejected|ruled out|scrapped|discarded|rolled back|backed out)\b/i;
const CONSIDERED =
  /^(we |i )?(also )?(considered|tried|evaluated|looked at|weighed|prototyped|experimented with)\b|\b(was|were) (also )?(considered|evaluated|weighed|prototyped)\b/i;
const REJECTION =
  /\b(rejected|ruled out|but|too (slow|risky|complex|expensive|costly|much)|not worth|no good|did not|didn't|does not|doesn't|cannot|can't|won't)\b/i;
const FAILED =
  /\b(did not|didn't|does not|doesn't|would not|wouldn't) (work|help|fix|solve)\b|\bmade no difference\b|\bno effect\b|\b(is|was|are|were) not enough\b|\binsufficient\b|\bmade (it|things) worse\b/i;
const VAGUE_SUBJECT = /^(\S+\s+){0,3}?(it|this|that|they|these|those)\s+(did|does|would|made|had)\b|^(on|in|with|at|but)\b/i;
/** An alternative weighed and not taken: "we could X, but ...", "X would also work, but ...", "X would have needed ...". */
const MODAL = /\b(could|would|might)( also| still)?( have)?\b/i;
const WEIGHED_AGAINST = /\bbut\b|\bwould have (needed|required|meant|cost|broken|taken)\b/i;

/** A revert: "Reverted X", "rolled back X". */
const REVERT = /^(we |i )?(reverted|rolled back|backed out|undid)\s+(.*)$/i;
/** "Switched X back on", "set X back to ...": the change X is undone. */
const PUT_BACK = /^(we |i )?(switched|turned|set|put|moved|changed)\s+((?:\S+\s+){0,4}?)back\b/i;
/** "Took the client-wide timeout out again", "removed the cache again": what was just added is taken away. */
const AGAIN = /^(we |i )?(took|removed|pulled)\s+(.+?)\s+(out )?again\b/i;
const REVERT_PASSIVE = /^(.+?)\s+(was|were|got|has been|have been) (reverted|rolled back|backed out|undone)\b/i;
/** "PR #2231 reverted; …", "(the date part of the credit-note commit reverted in pdf.py)": a revert reported in few words. */
const REVERTED_REPORT = /(?:^|\()(?:the )?((?:[\w#.'/-]+\s+){0,5}?[\w#.'/-]+)\s+(?:reverted|rolled back)\b(?! (?:it|that|this|them|to)\b)/i;
/** Where a reverted thing's name ends: its reasons, its target version, when and where. */
const OBJECT_END = /[;,:(]|\s(to|at|in|on|after|because|since|as|so|and|which|from|for)\b/i;
export const PRONOUN_OBJECT = /^(this|that|it|them|these|those|the (same|simplest|first|second|other|former|latter|one))\b/i;

/**
 * A new arrangement stated in the present, without a cue word: "X now falls back to Y", "X is now imported from Y",
 * "X becomes Y", "X goes to / moves to Y", "X goes out as Y", "X is replaced by Y". Verbs that report an outcome
 * ("now takes", "now fails", "now passes") are findings, not arrangements.
 */
export const ARRANGEMENT =
  /^(\S+\s+){0,6}?(now (?!(takes|costs|shows|fails|returns|has|passes|works|misses|matches|crashes|hangs|seems|looks|needs|is|was)\b)[a-z]+s|(is|are) now [a-z]+ed|becomes?|goes (to|out as)|moves? to|(is|are) replaced (by|with))\b/i;
/**
 * A purpose ("so the worker keeps headroom", "so that", "to avoid"): what a design is for. A conclusion ("So X is
 * out", "so it is a heap leak") reads the same way but follows from what was seen.
 */
export const PURPOSE = /(?<!^)\bso (that|the|we|each|every|no|a|an)\b|\bto (avoid|keep|prevent)\b|\bin order to\b/i;
export const PAST_REPORT = /\b(was|were|did|had|took)\b/i;
export const CONCLUSION = /^so\b|\bso (it|this|that) (is|was|'s)\b/i;
/** What was seen, not chosen. */
export const OBSERVED = /\b(found|measured|profiled|observed|noticed|root cause|turned on|enabled logging)\b/i;
/** An observation: what was measured, seen or found, not chosen. */
export const FINDING =
  /^(the |a |an |our |this |that )?\S+( \S+)? (is|are|was|were|shows?|showed|takes?|took|has|had|fails?|failed|costs?)\b|\b(found|measured|profiled|observed|noticed|root cause)\b/i;
/** A hedge before a cue takes the choice back: "we could go with X", "should we switch". */
export const HEDGE =
  /\b(could|might|may|would|should we|maybe|perhaps|whether|if we|consider(ing)?|option(s)?|proposal|propose|suggest(ed|s)?|ask(ed)? (whether|if))\b/i;
const NEGATED_CHOICE =
  /\b(not|n't|never|yet to|need to|have to|has to|must|still to)\s+(\w+\s+)?(decided|decide|chose|choose|chosen|settle|switch)/i;
/** The alternative a choice names as turned down: "chose X over Y". */
export const OVER =
  /\b(chose|choose|chosen|picked|preferred|prefer|went with|going with|settled on|opted for)\b.*?\bover\s+(.+?)(?=\s+(because|since|as|given)\b|[,;:]|$)/i;
/** The alternative a decision names as rejected: "use X instead of Y", "X rather than Y". */
export const INSTEAD = /\b(instead of|rather than)\s+(.+?)(?=\s+(because|since|as|so|which)\b|[,;:.]|$)/i;
/** "Instead of in users' hands", "instead of being killed": a place or an outcome, not an alternative approach. */
export const NOT_AN_APPROACH = /^(in|on|at|to|from|by|with|during|after|before|being|having)\b/i;
/** A reason given in so many words, as a report of the work states one (narrower than REASON: no bare "so", "never"). */
export const REASON_GIVEN =
  /\b(because|since|so that|so (both|the|it|we|that|each|every|no|a)|to avoid|to keep|in order to|which (avoids|keeps|removes|fixes))\b/i;
/** A next step is a plan, not a choice made. */
export const NEXT_STEP = /^(next( step)?s?|todo|follow[- ]up)\b/i;

/** A choice cue that is not hedged or negated before it: "chose X", not "we could choose X" or "have not decided". */
export function choiceCue(clause: string): boolean {
  const cue = CHOICE.exec(clause);
  if (!cue) return false;
  if (HEDGE.test(clause.slice(0, cue.index)) || NEGATED_CHOICE.test(clause)) return false;
  return !choiceOfPronoun(clause);
}

/**
 * "Chose this over X", "weighed the options and chose the simplest": the choice names nothing itself (the sentence
 * before, if any, says what "this" is).
 */
export function choiceOfPronoun(clause: string): boolean {
  const over = OVER.exec(clause);
  if (over !== null && PRONOUN_OBJECT.test(clause.slice(over.index + over[1]!.length).trim())) return true;
  return CHOSE_NOTHING.test(clause);
}
const CHOSE_NOTHING =
  /\b(?:chose|picked|went with|settled on|opted for|decided on)\s+(?:this|that|it|them|the (?:same|simplest|first|second|other|former|latter|one))\s*[.!]?$/i;

/** Giving up said outright: "Dropped X", "X was rejected", "considered X, but …", "X did not help", "we could X, but …". */
export function givesUpOutright(clause: string): boolean {
  return (
    DROP_START.test(clause) ||
    DROP_PASSIVE.test(clause) ||
    (CONSIDERED.test(clause) && REJECTION.test(clause)) ||
    (FAILED.test(clause) && !VAGUE_SUBJECT.test(clause)) ||
    weighedAlternative(clause)
  );
}

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

/** What a revert undoes ("the retry wrapper", "full mode"); undefined when the clause is no revert. */
export function revertedObject(clause: string): string | undefined {
  const object =
    REVERT.exec(clause)?.[3] ??
    PUT_BACK.exec(clause)?.[3] ??
    AGAIN.exec(clause)?.[3] ??
    REVERT_PASSIVE.exec(clause)?.[1] ??
    REVERTED_REPORT.exec(clause)?.[1];
  if (object === undefined) return undefined;
  const end = object.search(OBJECT_END);
  const named = end >= 0 ? object.slice(0, end) : object;
  // "Removed it again" names nothing: the turn's attempt says what it was.
  return AGAIN.test(clause) && PRONOUN_OBJECT.test(named.trim()) ? undefined : named;
}

/** A clause opens with a choice made or given up: "…; dropped Y", "…; went with Z". */
export const opensWithChoice = (clause: string) =>
  DROP_START.test(clause) || CHOICE.test(clause.split(/\s+/).slice(0, 3).join(" ")) || CHANGE.test(clause);
