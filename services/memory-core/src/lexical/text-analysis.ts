import { createRequire } from "node:module";
import irregularPlurals from "irregular-plurals";
import { stemmer } from "stemmer";
import { isHighSurrogate } from "../text.js";

/**
 * How text becomes search terms, the same for what is stored and what is asked:
 * - words in any script; a run of a script written without spaces between words (Chinese, Japanese, Thai, Lao,
 *   Khmer, Burmese) is cut into words by ICU's dictionaries (`Intl.Segmenter`), so `把会话存到Redis里` gives
 *   把, 会话, 存, 到, Redis, 里;
 * - identifiers whole beside their parts, so an exact identifier outranks its pieces and its pieces still find
 *   it: those that hold `-`, `_`, `.`, `/`, `:` or `::` (AUTH-412, refresh_token, src/auth.ts, std::vector), and
 *   camelCase and PascalCase ones (refreshToken → refreshtoken, refresh, token; HTTPServerError →
 *   httpservererror, http, server, error);
 * - compatibility forms folded (NFKC: full-width Ｒｅｄｉｓ is Redis), Arabic and Hebrew vowel marks dropped;
 * - lower case; English stop words dropped; for Latin-script words only, irregular forms read as their base
 *   word (BASE_FORMS) and Porter stems — no other language is stemmed.
 */

const STOP_WORDS = new Set(
  `a about above after again against all am an and any are aren't as at be because been before being below between
  both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each few for from
  further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself him himself his
  how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most mustn't my myself no nor
  not of off on once only or other ought our ours ourselves out over own same shan't she she'd she'll she's should
  shouldn't so some such than that that's the their theirs them themselves then there there's these they they'd
  they'll they're they've this those through to too under until up very was wasn't we we'd we'll we're we've were
  weren't what what's when when's where where's which while who who's whom why why's with won't would wouldn't you
  you'd you'll you're you've your yours yourself yourselves also just did does like get got really yes yeah oh`
    .split(/\s+/)
    .filter(Boolean),
);

/**
 * Irregular English forms and their base word, which Porter's suffix rules cannot join: verbs' past forms
 * ("went" → go, "bought" → buy, "ran" → run, and "goes") and irregular plurals ("children" → child, "people" →
 * person). Data shipped in npm packages (english-verbs-irregular, irregular-plurals), read once. Left as they
 * are: a form that is itself a base word in the same list ("found", "bid"); a plural ending in "s", which Porter
 * already joins with a word of its own ("lives", "leaves", "bases" would become life, leaf, basis); and past forms
 * that are as often nouns or adjectives (AMBIGUOUS: "my thoughts" must still match "thought").
 */
const AMBIGUOUS = new Set(["thought", "ground", "wound", "rose", "left", "spoke", "bore", "bound", "lit"]);
const BASE_FORMS = ((): ReadonlyMap<string, string> => {
  const verbs = createRequire(import.meta.url)("english-verbs-irregular/dist/verbs.json") as Record<string, string[][]>;
  const out = new Map<string, string>();
  for (const [base, forms] of Object.entries(verbs)) {
    for (const form of forms.flat()) if (form !== base && !(form in verbs) && !AMBIGUOUS.has(form)) out.set(form, base);
    if (base.endsWith("o") && !(`${base}es` in verbs)) out.set(`${base}es`, base);
  }
  for (const [singular, plural] of irregularPlurals) {
    if (plural !== singular && !plural.endsWith("s") && !irregularPlurals.has(plural)) out.set(plural, singular);
  }
  return out;
})();

/** A word: letters and digits with their combining marks (Devanagari vowel signs, Thai tone marks), and a clitic. */
const WORD = /[\p{L}\p{N}][\p{L}\p{Mn}\p{Mc}\p{N}]*(?:['’]\p{L}+)?/gu;
/**
 * An identifier with separators. It starts only where a word starts (the look-ahead and look-behind): tried inside a
 * word as well, it would read the rest of the word again at every letter, and a long run of letters with no
 * separator (a page of Chinese, a base64 blob) would cost the square of its length. A word's own letters cannot
 * start a compound the word's start did not, so what it finds is the same.
 */
const COMPOUND =
  /(?=[\p{L}\p{N}])(?<![\p{L}\p{N}][\p{Mn}\p{Mc}]*)[\p{L}\p{N}][\p{L}\p{Mn}\p{Mc}\p{N}]*(?:(?:::|[-_./:])[\p{L}\p{N}][\p{L}\p{Mn}\p{Mc}\p{N}]*)+/gu;

/** A letter of a script written without spaces between words: such a run goes to the segmenter. */
const UNSPACED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
/** One segmenter for every call: its dictionaries load once, and segmenting keeps no state between calls. */
let segmenter: Intl.Segmenter | undefined;
/**
 * The most the segmenter is given at once. ICU's dictionary segmentation costs more than its length on a long run
 * (docs/benchmarks.md, "Reliability: what one caller can do to everyone else"); real text breaks its runs with punctuation long before this.
 */
export const SEGMENT_CHARS = 1024;

/** How far back from a stretch's end its segments are taken again with the next stretch (a few words' length). */
const SEGMENT_OVERLAP = 64;

/**
 * The words of a run of unspaced script, segmented SEGMENT_CHARS at a time. A dictionary segmentation decides a
 * word by the words after it, so a stretch's segments in its last SEGMENT_OVERLAP characters are taken again from
 * the start of the next stretch, which begins where the first of them does: where a word ends is not decided at
 * a cut (unless a segment spans more than half a stretch).
 */
function wordsOf(run: string): string[] {
  segmenter ??= new Intl.Segmenter("und", { granularity: "word" });
  const out: string[] = [];
  for (let start = 0; start < run.length;) {
    let end = Math.min(run.length, start + SEGMENT_CHARS);
    if (end < run.length && isHighSurrogate(run.charCodeAt(end - 1))) end -= 1;
    const last = end === run.length;
    const segments = [...segmenter.segment(run.slice(start, end))];
    // The stretch's segments up to the first that starts in its overlap, or up to its last one.
    let upTo = segments.length;
    if (!last) {
      const overlap = segments.findIndex((s) => s.index >= end - start - SEGMENT_OVERLAP);
      upTo = overlap > 0 ? overlap : segments.length - 1;
      // Each stretch moves on by at least half its length, so the run is segmented at most twice over.
      if (upTo < 1 || segments[upTo]!.index < SEGMENT_CHARS / 2) upTo = segments.length;
    }
    for (let i = 0; i < upTo; i++) if (segments[i]!.isWordLike) out.push(segments[i]!.segment);
    start = upTo < segments.length ? start + segments[upTo]!.index : end;
  }
  return out;
}

/**
 * Where an identifier's words meet: lower to upper (refresh|Token), the last capital of an acronym before a
 * capitalised word (HTTP|Server; not APIs or IDs), a digit to upper (base64|Encode). Letters to digits stay
 * together (utf8, ipv4, v2).
 */
const CASE_CHANGE = /\p{Ll}\p{Lu}|\p{Lu}\p{Lu}\p{Ll}\p{Ll}|\p{N}\p{Lu}/u;
const CASE_BOUNDARY = /(?<=\p{Ll})(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll}\p{Ll})|(?<=\p{N})(?=\p{Lu})/u;

/** Its parts when a word is a camelCase or PascalCase identifier (parts of one letter say nothing). */
function pushParts(out: string[], word: string): void {
  if (!CASE_CHANGE.test(word)) return;
  for (const part of word.split(CASE_BOUNDARY)) if (part.length > 1) out.push(part);
}

/** Marks a reader may write or leave out: Arabic short vowels and tatweel, Hebrew points and cantillation; variation selectors. */
const OPTIONAL_MARKS = /\u0640|[\u064B-\u065F]|\u0670|[\u0591-\u05BD]|\u05BF|[\u05C1-\u05C2]|[\u05C4-\u05C5]|\u05C7|[\uFE00-\uFE0F]/g;
const NON_ASCII = /[\u0080-\uffff]/;

/** The text in one form: compatibility forms folded and optional marks dropped (only text beyond ASCII needs it). */
function normalized(text: string): string {
  return NON_ASCII.test(text) ? text.normalize("NFKC").replace(OPTIONAL_MARKS, "") : text;
}

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const MONTH =
  "(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)";
const ISO_DATE = /\b(\d{4})-(\d{2})-(\d{2})\b/g;
const DAY_MONTH_YEAR = new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH}\\.?,?\\s+(\\d{4})\\b`, "gi");
const MONTH_DAY_YEAR = new RegExp(`\\b${MONTH}\\.?\\s+(\\d{1,2})(?:st|nd|rd|th)?,?\\s+(\\d{4})\\b`, "gi");
const MONTH_YEAR = new RegExp(`\\b${MONTH}\\.?,?\\s+(\\d{4})\\b`, "gi");

/**
 * Dates in a text as ISO terms, however written: "9 November, 2022", "November 9th 2022" and "2022-11-09" each
 * give the day 2022-11-09 and the month 2022-11; "November 2022" gives the month. A question that names a date
 * then matches a memory that holds it in another spelling.
 */
export function dateTokens(text: string): string[] {
  // Every form has a year: a text without four digits in a row (most words, most texts) has no date, and the four
  // scans below are most of what analysing a text costs.
  if (!YEAR.test(text)) return [];
  const out: string[] = [];
  for (const [, y, m] of text.matchAll(ISO_DATE)) out.push(`${y}-${m}`);
  for (const [, d, m, y] of text.matchAll(DAY_MONTH_YEAR)) pushDay(out, y!, monthOf(m!), d!);
  for (const [, m, d, y] of text.matchAll(MONTH_DAY_YEAR)) pushDay(out, y!, monthOf(m!), d!);
  for (const [, m, y] of text.matchAll(MONTH_YEAR)) out.push(`${y}-${monthOf(m!)}`);
  return [...new Set(out)];
}

const YEAR = /\d{4}/;
const pad = (n: string | number) => String(n).padStart(2, "0");
const monthOf = (name: string) => pad(MONTHS.indexOf(name.slice(0, 3).toLowerCase()) + 1);
function pushDay(out: string[], y: string, m: string, d: string): void {
  if (Number(d) < 1 || Number(d) > 31) return;
  out.push(`${y}-${m}-${pad(d)}`, `${y}-${m}`);
}

/**
 * Raw tokens: compounds whole, then every word (an unspaced script's run as its words; an identifier beside its
 * parts), then dates as ISO terms (dateTokens).
 */
/**
 * The version of what `tokenize` and `toTerm` make of a text: raise it with any change to either, so that lexical
 * index snapshots (lexical/snapshot.ts) analysed under another version are rebuilt rather than trusted.
 */
export const ANALYSIS_VERSION = 2;

/**
 * The longest term: a longer token (a blob, a minified line, a run of unspaced script the segmenter leaves whole)
 * is indexed and asked as its first MAX_TERM_CHARS characters, so that one token costs the index a bounded number of
 * bytes and still finds itself. Nearly every real identifier, path and word is shorter (docs/benchmarks.md, "Reliability: what one caller can do to everyone else").
 */
export const MAX_TERM_CHARS = 64;

export function tokenize(raw: string): string[] {
  const text = normalized(raw);
  const words = text.match(WORD) ?? [];
  // Most texts hold neither an unspaced script nor a camelCase identifier: one look at the whole text for each
  // spares a look at every word.
  const unspaced = UNSPACED.test(text);
  const cased = CASE_CHANGE.test(text);
  return [...(text.match(COMPOUND) ?? []), ...(unspaced || cased ? split(words, unspaced, cased) : words), ...dateTokens(text)];
}

/** Words with an unspaced script's runs cut into their words, and identifiers followed by their parts. */
function split(words: string[], unspaced: boolean, cased: boolean): string[] {
  const out: string[] = [];
  for (const word of words) {
    for (const piece of unspaced && UNSPACED.test(word) ? wordsOf(word) : [word]) {
      out.push(piece);
      if (cased) pushParts(out, piece);
    }
  }
  return out;
}

/** What keeps a token as it is: a separator or digit (an identifier, a number, a date) or a letter not Latin. */
const NOT_LATIN = /[^\p{Script=Latin}']/u;

/** A token as an index term, or null for a stop word. */
export function toTerm(token: string): string | null {
  const lower = token.toLowerCase().replace(/’/g, "'");
  if (STOP_WORDS.has(lower)) return null;
  const bare = lower.replace(/'s$/, "");
  if (bare.length === 0 || STOP_WORDS.has(bare)) return null;
  return bounded(NOT_LATIN.test(bare) ? bare : stemmer(BASE_FORMS.get(bare) ?? bare));
}

/** A term cut to MAX_TERM_CHARS, never between the two halves of a character outside the basic plane. */
function bounded(term: string): string {
  if (term.length <= MAX_TERM_CHARS) return term;
  return term.slice(0, isHighSurrogate(term.charCodeAt(MAX_TERM_CHARS - 1)) ? MAX_TERM_CHARS - 1 : MAX_TERM_CHARS);
}

/** The distinct terms of a text. */
export function terms(text: string): string[] {
  return [
    ...new Set(
      tokenize(text)
        .map(toTerm)
        .filter((t): t is string => t !== null),
    ),
  ];
}
