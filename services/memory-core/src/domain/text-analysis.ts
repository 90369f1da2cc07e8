import { stemmer } from "stemmer";

/**
 * How text becomes search terms, the same for what is stored and what is asked: lower case, English stop
 * words dropped, Porter stems. Identifiers that hold `-`, `_`, `.`, `/` or `:` (AUTH-412, refresh_token,
 * src/auth.ts) are kept whole beside their parts, so an exact identifier outranks its pieces.
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

const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu;
const COMPOUND = /[\p{L}\p{N}]+(?:[-_./:][\p{L}\p{N}]+)+/gu;

/** Raw tokens: compounds whole, then every word. */
export function tokenize(text: string): string[] {
  return [...(text.match(COMPOUND) ?? []), ...(text.match(WORD) ?? [])];
}

/** A token as an index term, or null for a stop word. */
export function toTerm(token: string): string | null {
  const lower = token.toLowerCase().replace(/’/g, "'");
  if (STOP_WORDS.has(lower)) return null;
  const bare = lower.replace(/'s$/, "");
  if (bare.length === 0 || STOP_WORDS.has(bare)) return null;
  return /[-_./:]/.test(bare) || /\d/.test(bare) ? bare : stemmer(bare);
}

/** The distinct terms of a text. */
export function terms(text: string): string[] {
  return [...new Set(tokenize(text).map(toTerm).filter((t): t is string => t !== null))];
}
