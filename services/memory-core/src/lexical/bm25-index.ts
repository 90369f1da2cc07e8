import { BoundedHeap } from "./bounded-heap.js";
import { tokenize, toTerm } from "./text-analysis.js";

export interface Bm25Params {
  /** Term-frequency saturation. */
  k: number;
  /** Length normalisation. */
  b: number;
  /** BM25+ lower bound: a match counts for at least this much of its term's idf. */
  d: number;
  /**
   * Coordination: a record's sum is multiplied by the number of distinct query terms it holds (MiniSearch's
   * scoring, the default), raised to `coordination` (1 when absent); with `idfCoordination`, by
   * 1 + (distinct query terms − 1) × `informative` instead, so that holding a rare term counts for more.
   */
  coordination?: number;
  idfCoordination?: boolean;
}

export interface Bm25Hit<T> {
  id: string;
  /** What the record was put with. */
  item: T;
  score: number;
  /** Distinct query terms the record holds. */
  matchedTerms: number;
  /**
   * The share of the query's information the record holds: the idf of the distinct query terms it holds over
   * the idf of all of them, a term the index does not hold counting as the rarest it could hold (df 1). A query whose most
   * specific words are nowhere in the index is mostly not covered, whatever common words it shares.
   */
  informative: number;
}

/**
 * One term in one field: the records holding it, with their term frequencies, in insertion order. Entries live
 * in typed arrays (the first `length` of each), not in arrays of numbers or objects: a posting entry is what
 * the index holds most of, and in a typed array it costs its bytes and nothing more.
 */
interface Posting {
  /** The term it is a posting of (pseudo-relevance feedback reads a record's terms from its postings). */
  term: string;
  /** Its place in `Bm25Index.postingList`, which a record's memberships name it by. */
  ordinal: number;
  docs: Uint32Array;
  /** Term frequencies, saturated at 65535 (BM25 saturates long before). */
  freqs: Uint16Array;
  /** Entries in use. */
  length: number;
  /** Entries whose record is still in the index; the rest are dropped lazily, when the posting is next read. */
  live: number;
  /** Bounds over every entry ever added (a superset of the live ones), for the score bound of the term. */
  maxFreq: number;
  minLength: number;
  /**
   * Term frequency by document number, kept once the posting is dense (see DENSE_SHARE): a byte each, so a
   * frequency of 255 or more reads as TALLY_ESCAPE, and the posting itself says how many.
   */
  dense?: Uint8Array;
}

/** A query term in one field, ready to score. */
interface FieldPlan {
  field: number;
  posting: Posting;
  /** weight × boost × idf */
  factor: number;
}

interface TermPlan {
  /** From 1, in query order. */
  index: number;
  fields: FieldPlan[];
  /** No record gains more than this from the term. */
  bound: number;
  /** Every field posting can be looked up by document number. */
  dense: boolean;
  /** The term's idf over records (its df the largest of its fields'), for `informative`; 0 for an added term. */
  info: number;
  /** Counts among the distinct query terms a record holds (a term added by feedback does not). */
  counts: boolean;
}

/**
 * A query as weighted terms: `asked`, the terms the question itself holds (they count for a record's
 * `matchedTerms` and `informative`), and terms added by pseudo-relevance feedback with their weights.
 */
export interface WeightedQuery {
  asked: ReadonlyMap<string, number>;
  added: ReadonlyMap<string, number>;
}

/** The distinct terms of a text, each weighted by how often it occurs. */
export function weightedTerms(text: string): Map<string, number> {
  const weights = new Map<string, number>();
  for (const token of tokenize(text)) {
    const term = toTerm(token);
    if (term !== null) weights.set(term, (weights.get(term) ?? 0) + 1);
  }
  return weights;
}

/**
 * A field as the index holds it: its length (distinct raw tokens) and its terms with their frequencies, as
 * `[term, freq, term, freq, ...]`.
 */
export interface AnalyzedField {
  length: number;
  terms: Array<string | number>;
}

/**
 * The most distinct terms one field gives the index: its MAX_FIELD_TERMS most frequent, the earlier first among
 * equals. Each distinct term costs the index a posting of its own, so a field of unique junk words would otherwise
 * grow it by as many postings as it has words; real text of the longest field the contract takes holds fewer
 * (docs/benchmarks.md, "Reliability: what one caller can do to everyone else").
 */
export const MAX_FIELD_TERMS = 2048;

export function analyzeField(text: string): AnalyzedField {
  const tokens = tokenize(text);
  const freqs = new Map<string, number>();
  for (const token of tokens) {
    const term = toTerm(token);
    if (term !== null) freqs.set(term, (freqs.get(term) ?? 0) + 1);
  }
  let kept: Iterable<[string, number]> = freqs;
  // A stable sort: among equal frequencies, the order the terms first came in.
  if (freqs.size > MAX_FIELD_TERMS) kept = [...freqs].sort((a, b) => b[1] - a[1]).slice(0, MAX_FIELD_TERMS);
  const terms: Array<string | number> = [];
  for (const [term, freq] of kept) terms.push(term, freq);
  return { length: new Set(tokens).size, terms };
}

/** Record n's frequency in a posting that holds it (entries are in ascending record order). */
function frequencyOf(posting: Posting, n: number): number {
  const tally = posting.dense && n < posting.dense.length ? posting.dense[n]! : 0;
  if (tally > 0 && tally < TALLY_ESCAPE) return tally;
  let lo = 0;
  let hi = posting.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const at = posting.docs[mid]!;
    if (at === n) return posting.freqs[mid]!;
    if (at < n) lo = mid + 1;
    else hi = mid - 1;
  }
  throw new Error(`record ${n} is not in the posting of ${posting.term}`);
}

/** Records scored between two reads of the page's floor (each read judges the page's records by the filter). */
const FLOOR_EVERY = 4096;

/** A posting held by at least this share of the records gets a by-document lookup table. */
const DENSE_SHARE = 1 / 16;

/** A lookup table's entry for a frequency too large for a byte: the posting holds the frequency. */
const TALLY_ESCAPE = 255;

/**
 * BM25+ over fielded text (each field scored on its own length statistics, weighted by its boost, summed),
 * with MiniSearch's scoring — a record's sum is multiplied by the number of distinct query terms it holds —
 * so that the ranking measured on LoCoMo carries over exactly. What it adds is cost control:
 * - scores go into preallocated accumulators and the best are kept in a bounded heap, so a term held by most
 *   of a 100k-record workspace costs a pass over plain arrays, not 100k result objects;
 * - the query's commonest terms (held by most records, so worth least) are not scanned at all when they
 *   need not be: candidates come from the rarer terms, the common ones are looked up for those candidates
 *   only, and a common term is scanned only while a bound cannot prove that no record holding none of the
 *   terms scanned could make the list (MaxScore); a record whose bound falls below the list's floor as its
 *   terms are looked up is given up there. The result is exact.
 */
export class Bm25Index<T> {
  private readonly fieldCount: number;
  private readonly boosts: number[];
  private readonly postings = new Map<string, Array<Posting | undefined>>();
  /** Every posting, by its ordinal. */
  private readonly postingList: Posting[] = [];
  /** By document number; undefined once removed. */
  private readonly ids: Array<string | undefined> = [];
  /** What each record was put with, by document number: filters judge it without a lookup by id. */
  private readonly items: Array<T | undefined> = [];
  private readonly numbers = new Map<string, number>();
  /** Per field, distinct raw tokens by document number (a field's pass reads its own array in order). */
  private lengths: Uint32Array[];
  private readonly totalLength: number[];
  /**
   * The postings each record appears in (their ordinals), to keep document frequencies exact when it leaves and
   * to read its terms for feedback: record n's are in `members[memberStart[n]..memberStart[n + 1])` (records are
   * numbered in the order they came, so their runs lie in that order too). A removed record's run stays until
   * removed runs are most of the array, then the array is compacted.
   */
  private members = new Uint8Array(4096);
  private membersLength = 0;
  private removedMembers = 0;
  private memberStart = new Uint32Array(1024);
  private scratch = new Scratch(0);

  constructor(
    private readonly fields: readonly string[],
    boosts: Record<string, number>,
    private readonly params: Bm25Params,
  ) {
    this.fieldCount = fields.length;
    this.boosts = fields.map((f) => boosts[f] ?? 1);
    this.totalLength = fields.map(() => 0);
    this.lengths = fields.map(() => new Uint32Array(1024));
  }

  get size(): number {
    return this.numbers.size;
  }

  /** Sizes for /metrics, read without a pass over anything: records and distinct terms. */
  stats(): { documents: number; terms: number } {
    return { documents: this.numbers.size, terms: this.postings.size };
  }

  /** Allocates the accumulators a query over the records held needs, which the first query would otherwise. */
  prepare(): void {
    this.scratchFor();
  }

  /**
   * Adds a record, or replaces the one with its id; `item` comes back with its hits and is what filters judge.
   */
  put(id: string, fields: Record<string, string>, item: T): void {
    this.putAnalyzed(
      id,
      this.fields.map((field) => analyzeField(fields[field] ?? "")),
      item,
    );
  }

  /**
   * `put` of a record already analysed (`analyzeField` of each field, in the index's field order): what a
   * snapshot (snapshot.ts) holds, so that loading one tokenizes nothing.
   */
  putAnalyzed(id: string, analyzed: readonly AnalyzedField[], item: T): void {
    this.remove(id);
    const n = this.ids.length;
    this.ids.push(id);
    this.items.push(item);
    this.numbers.set(id, n);
    this.memberStart = grown(this.memberStart, n + 1, (size) => new Uint32Array(size));
    this.memberStart[n] = this.membersLength;
    const ordinals: number[] = [];
    for (let f = 0; f < this.fieldCount; f++) {
      const { length, terms } = analyzed[f] ?? { length: 0, terms: [] };
      const lengths = grown(this.lengths[f]!, n, (size) => new Uint32Array(size));
      lengths[n] = length;
      this.lengths[f] = lengths;
      this.totalLength[f]! += length;
      for (let i = 0; i + 1 < terms.length; i += 2) {
        const term = terms[i] as string;
        const freq = terms[i + 1] as number;
        const posting = this.posting(term, f);
        append(posting, n, freq);
        posting.live += 1;
        posting.maxFreq = Math.max(posting.maxFreq, freq);
        posting.minLength = Math.min(posting.minLength, length);
        if (posting.dense) posting.dense = setDense(posting.dense, n, freq);
        ordinals.push(posting.ordinal);
      }
    }
    this.encodeMembers(ordinals);
    this.memberStart[n + 1] = this.membersLength;
  }

  /** The live records numbered `from` up to (not including) `to`, in order, as `putAnalyzed` takes them back. */
  *analyzed(from: number, to: number): Generator<{ id: string; item: T; fields: AnalyzedField[] }> {
    for (let n = from; n < Math.min(to, this.ids.length); n++) {
      const id = this.ids[n];
      if (id === undefined) continue;
      const fields: AnalyzedField[] = this.fields.map((_, f) => ({ length: this.lengths[f]![n]!, terms: [] }));
      for (const posting of this.membershipsOf(n)) {
        const byField = this.postings.get(posting.term)!;
        const f = byField.indexOf(posting);
        fields[f]!.terms.push(posting.term, frequencyOf(posting, n));
      }
      yield { id, item: this.items[n] as T, fields };
    }
  }

  /** One past the highest record number used (removed ones included). */
  get numbered(): number {
    return this.ids.length;
  }

  /** What a record in the index was put with. */
  item(id: string): T | undefined {
    const n = this.numbers.get(id);
    return n === undefined ? undefined : this.items[n];
  }

  /** The postings record `n` appears in. */
  private *membershipsOf(n: number): Generator<Posting> {
    const end = this.memberStart[n + 1]!;
    const members = this.members;
    let ordinal = 0;
    for (let i = this.memberStart[n]!; i < end;) {
      let delta = 0;
      let shift = 0;
      let byte: number;
      do {
        byte = members[i++]!;
        delta += (byte & 0x7f) * 2 ** shift;
        shift += 7;
      } while (byte & 0x80);
      ordinal += delta;
      yield this.postingList[ordinal]!;
    }
  }

  /**
   * Appends a record's posting ordinals to `members`, ascending, each as its difference from the one before in
   * 7-bit groups (LEB128): most differences fit one or two bytes where an ordinal took four.
   */
  private encodeMembers(ordinals: number[]): void {
    ordinals.sort((a, b) => a - b);
    this.members = grown(this.members, this.membersLength + ordinals.length * 5, (size) => new Uint8Array(size));
    const members = this.members;
    let at = this.membersLength;
    let previous = 0;
    for (const ordinal of ordinals) {
      let delta = ordinal - previous;
      previous = ordinal;
      while (delta >= 0x80) {
        members[at++] = (delta & 0x7f) | 0x80;
        delta = Math.floor(delta / 0x80);
      }
      members[at++] = delta;
    }
    this.membersLength = at;
  }

  remove(id: string): void {
    const n = this.numbers.get(id);
    if (n === undefined) return;
    this.numbers.delete(id);
    this.ids[n] = undefined;
    this.items[n] = undefined;
    for (const posting of this.membershipsOf(n)) {
      posting.live -= 1;
      if (posting.dense && n < posting.dense.length) posting.dense[n] = 0;
    }
    this.removedMembers += this.memberStart[n + 1]! - this.memberStart[n]!;
    for (let f = 0; f < this.fieldCount; f++) this.totalLength[f]! -= this.lengths[f]![n]!;
    if (this.removedMembers > 1024 && this.removedMembers * 2 > this.membersLength) this.compactMembers();
  }

  /** Drops removed records' runs from `members`, so that replaced records cost nothing lasting. */
  private compactMembers(): void {
    let kept = 0;
    const records = this.ids.length;
    for (let n = 0; n < records; n++) {
      const start = this.memberStart[n]!;
      const end = this.memberStart[n + 1]!;
      this.memberStart[n] = kept;
      if (this.ids[n] === undefined) continue;
      this.members.copyWithin(kept, start, end);
      kept += end - start;
    }
    this.memberStart[records] = kept;
    this.membersLength = kept;
    this.removedMembers = 0;
    if (this.members.length > 2 * kept + 1024) this.members = this.members.slice(0, kept * 2 + 1024);
  }

  /**
   * The best `limit` records among those `accept` lets through, best first. `accept` judges a record's item,
   * and is asked only of records that would enter the current best `limit`, so a selective filter stays cheap.
   *
   * Terms without a lookup table (held by few records) are scanned, and each record they reach is completed with
   * the other terms by lookup. A term with a table is scanned only while a bound cannot prove that no record
   * holding none of the terms scanned so far could enter the best `limit` (MaxScore's essential terms, grown a
   * term at a time, cheapest proof first): the query's commonest terms, held by most records and worth least,
   * are then never scanned. Each record reached is scored once, or given up once it provably cannot enter
   * (`complete`), so the result is exact.
   */
  search(text: string | WeightedQuery, limit: number, accept: (item: T) => boolean): Array<Bm25Hit<T>> {
    const { plans, info } = this.plan(text);
    if (plans.length === 0 || limit <= 0) return [];
    const scratch = this.scratchFor();
    const saturation = this.saturation();
    this.scan(
      plans.filter((t) => !t.dense),
      saturation,
    );
    const items = this.items;
    const page = new Page(limit, scratch, (j) => accept(items[scratch.touched[j]!] as T));
    /** Terms with a table not scanned yet, the terms worth most first: the order they are looked up in. */
    let unscanned = plans.filter((t) => t.dense).sort((a, b) => b.bound - a.bound || a.index - b.index);
    /** What each record reached since the last completion lacks: the terms unscanned when it was reached. */
    let looked = unscanned;
    let completed = 0;
    for (;;) {
      this.complete(completed, looked, saturation, info, page);
      completed = scratch.reached;
      if (unscanned.length === 0) break;
      const floor = page.floor();
      if (floor > this.ceiling(unscanned, info)) break;
      const next = this.nextToScan(unscanned, floor, info);
      looked = unscanned;
      unscanned = unscanned.filter((t) => t !== next);
      this.reach(next);
    }
    return this.hitsOf(page, info);
  }

  /**
   * `search` over the given records only (a filter whose records are known: one session, one agent), best
   * first, with the same scores: each record is looked up in the terms with a lookup table, and the other
   * terms' postings are scanned for it. Its cost follows the records given, not the records that hold a term.
   */
  searchAmong(text: string | WeightedQuery, limit: number, ids: readonly string[]): Array<Bm25Hit<T>> {
    const { plans, info } = this.plan(text);
    if (plans.length === 0 || limit <= 0 || ids.length === 0) return [];
    const scratch = this.scratchFor();
    const { score, lastTerm, distinct, gained, touched, among } = scratch;
    const members: number[] = [];
    for (const id of ids) {
      const n = this.numbers.get(id);
      if (n !== undefined && among[n] === 0) {
        among[n] = 1;
        members.push(n);
      }
    }
    const saturation = this.saturation();
    const { d, k1, base, slopes } = saturation;
    const add = (term: TermPlan, n: number, field: number, factor: number, freq: number) => {
      if (lastTerm[n] !== term.index) {
        if (lastTerm[n] === 0) touched[scratch.reached++] = n;
        lastTerm[n] = term.index;
        if (term.counts) distinct[n]! += 1;
        gained[n]! += term.info;
      }
      score[n]! += factor * (d + (freq * k1) / (freq + base + slopes[field]! * this.lengths[field]![n]!));
    };
    // Term by term and field by field, in query order, as a full search adds them up.
    for (const term of plans) {
      for (const { field, posting, factor } of term.fields) {
        if (posting.dense) {
          const dense = posting.dense;
          for (const n of members) {
            const tally = n < dense.length ? dense[n]! : 0;
            if (tally > 0) add(term, n, field, factor, tally === TALLY_ESCAPE ? frequencyOf(posting, n) : tally);
          }
        } else {
          const { docs, freqs, length } = posting;
          for (let i = 0; i < length; i++) if (among[docs[i]!] === 1) add(term, docs[i]!, field, factor, freqs[i]!);
        }
      }
    }
    for (const n of members) among[n] = 0;
    const page = new Page(limit, scratch, () => true);
    this.complete(0, [], saturation, info, page);
    return this.hitsOf(page, info);
  }

  /**
   * Pseudo-relevance feedback (RM3-like): the terms the given hits hold that the query does not, each weighted
   * by the hits' scores relative to the best (once per hit) times its idf over records; the best `count` of
   * those held by at least `minHits` hits, scaled so that the best weighs `weight`.
   */
  feedbackTerms(
    hits: ReadonlyArray<Bm25Hit<T>>,
    exclude: ReadonlyMap<string, number>,
    count: number,
    weight: number,
    minHits = 2,
  ): Map<string, number> {
    const top = hits[0]?.score ?? 0;
    if (top <= 0 || count <= 0) return new Map();
    const mass = new Map<string, { sum: number; hits: number; df: number }>();
    for (const hit of hits) {
      const n = this.numbers.get(hit.id);
      if (n === undefined) continue;
      const seen = new Set<string>();
      for (const posting of this.membershipsOf(n)) {
        const term = posting.term;
        if (exclude.has(term)) continue;
        const entry = mass.get(term) ?? { sum: 0, hits: 0, df: 0 };
        entry.df = Math.max(entry.df, posting.live);
        if (!seen.has(term)) {
          seen.add(term);
          entry.sum += hit.score / top;
          entry.hits += 1;
        }
        mass.set(term, entry);
      }
    }
    const documents = this.size;
    const scored = [...mass]
      .filter(([, e]) => e.hits >= minHits)
      .map(([term, e]) => [term, e.sum * Math.log(1 + (documents - e.df + 0.5) / (e.df + 0.5))] as const)
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, count);
    const best = scored[0]?.[1] ?? 0;
    return new Map(best > 0 ? scored.map(([term, w]) => [term, (weight * w) / best]) : []);
  }

  /** Adds the postings of `terms` to the accumulators of the records they hold, reaching them. */
  private scan(terms: TermPlan[], { d, k1, base, slopes }: Saturation): void {
    const { score, lastTerm, distinct, gained, touched } = this.scratch;
    const lengthsByField = this.lengths;
    const ids = this.ids;
    let reached = this.scratch.reached;
    // BM25+'s term-frequency part, inlined in the loop below: it runs once per posting entry reached, the
    // hottest code of a query.
    for (const term of terms) {
      const index = term.index;
      const termInfo = term.info;
      const counts = term.counts ? 1 : 0;
      for (const { field, posting, factor } of term.fields) {
        const { docs, freqs, length } = posting;
        const slope = slopes[field]!;
        const lengths = lengthsByField[field]!;
        for (let i = 0; i < length; i++) {
          const n = docs[i]!;
          if (ids[n] === undefined) continue;
          if (lastTerm[n] !== index) {
            if (lastTerm[n] === 0) touched[reached++] = n;
            lastTerm[n] = index;
            distinct[n]! += counts;
            gained[n]! += termInfo;
          }
          const freq = freqs[i]!;
          score[n]! += factor * (d + (freq * k1) / (freq + base + slope * lengths[n]!));
        }
      }
    }
    this.scratch.reached = reached;
  }

  /**
   * Reaches the records holding `term` not reached yet, without scoring them: they hold none of the terms
   * scanned before, so their scores are whole sums of lookups (`complete`).
   */
  private reach(term: TermPlan): void {
    const { lastTerm, touched } = this.scratch;
    const ids = this.ids;
    const index = term.index;
    let reached = this.scratch.reached;
    for (const { posting } of term.fields) {
      const { docs, length } = posting;
      for (let i = 0; i < length; i++) {
        const n = docs[i]!;
        if (lastTerm[n] !== 0 || ids[n] === undefined) continue;
        lastTerm[n] = index;
        touched[reached++] = n;
      }
    }
    this.scratch.reached = reached;
  }

  /**
   * Scores the records reached from position `from` of `touched` on, and offers them to the page: each one's
   * accumulators completed with the `looked` terms (not scanned; looked up by document number, the terms worth
   * most first). Once the page is full, a record is given up as soon as even the most the terms after the ones
   * looked up could add leaves it below the page's floor: of the many records a common term reaches, most are
   * given up after a few lookups.
   */
  private complete(from: number, looked: TermPlan[], saturation: Saturation, info: number, page: Page): void {
    const { score, distinct, gained, touched, finals, matched, covered } = this.scratch;
    const { d, k1, base, slopes } = saturation;
    // The looked-up fields as flat arrays, term after term; a term's fields end at `ends[t]`.
    const tables: Uint8Array[] = [];
    const postings: Posting[] = [];
    const lengths: Uint32Array[] = [];
    const slopeOf: number[] = [];
    const factorOf: number[] = [];
    const ends: number[] = [];
    /** The most the terms after each can add. */
    const after: number[] = [];
    const counts: number[] = [];
    const infos: number[] = [];
    let lookedCounted = 0;
    let lookedInfo = 0;
    for (const [t, term] of looked.entries()) {
      for (const { field, posting, factor } of term.fields) {
        tables.push(posting.dense!);
        postings.push(posting);
        lengths.push(this.lengths[field]!);
        slopeOf.push(slopes[field]!);
        factorOf.push(factor);
      }
      ends.push(tables.length);
      after.push(looked.slice(t + 1).reduce((sum, u) => sum + u.bound, 0));
      counts.push(term.counts ? 1 : 0);
      infos.push(term.info);
      lookedCounted += counts[t]!;
      lookedInfo += term.info;
    }
    const termCount = looked.length;
    const coordinate = this.coordinator(info);
    const reached = this.scratch.reached;
    let floor = Number.NEGATIVE_INFINITY;
    let floorAt = from;
    for (let j = from; j < reached; j++) {
      const n = touched[j]!;
      // The floor only rises, so one read a while ago is still safe to give up against.
      if (floor === Number.NEGATIVE_INFINITY ? page.full : j - floorAt >= FLOOR_EVERY) {
        page.scoredUpTo(j);
        floor = page.floor();
        floorAt = j;
      }
      let sum = score[n]!;
      let terms = distinct[n]!;
      let held = gained[n]!;
      // Raised by a hair, so that rounding in the sum cannot carry a record past it.
      const most = floor > Number.NEGATIVE_INFINITY ? coordinate(terms + lookedCounted, held + lookedInfo) * (1 + 1e-9) : 0;
      let givenUp = false;
      let l = 0;
      for (let t = 0; t < termCount; t++) {
        let holds = false;
        for (const end = ends[t]!; l < end; l++) {
          // Inlined rather than shared with searchAmong: this runs once per record and field looked up, the hottest
          // loop of a query, and a call here measured slower.
          const table = tables[l]!;
          const tally = n < table.length ? table[n]! : 0;
          if (tally === 0) continue;
          const freq = tally === TALLY_ESCAPE ? frequencyOf(postings[l]!, n) : tally;
          sum += factorOf[l]! * (d + (freq * k1) / (freq + base + slopeOf[l]! * lengths[l]![n]!));
          holds = true;
        }
        if (holds) {
          terms += counts[t]!;
          held += infos[t]!;
        }
        if (most * (sum + after[t]!) < floor) {
          givenUp = true;
          break;
        }
      }
      if (givenUp) {
        finals[j] = Number.NEGATIVE_INFINITY;
        continue;
      }
      // A record reached by added terms alone counts as holding one.
      const final = sum * coordinate(terms, held);
      finals[j] = final;
      matched[j] = terms;
      covered[j] = held;
      if (final >= floor) page.offer(j);
    }
    page.scoredUpTo(reached);
  }

  /** The page's records as hits, best first; the accumulators are reset. */
  private hitsOf(page: Page, info: number): Array<Bm25Hit<T>> {
    const { touched, finals, matched, covered } = this.scratch;
    const hits = page.positions().map((j) => {
      const n = touched[j]!;
      return {
        id: this.ids[n]!,
        item: this.items[n] as T,
        score: finals[j]!,
        matchedTerms: matched[j]!,
        informative: info > 0 ? Math.min(1, covered[j]! / info) : 0,
      };
    });
    this.scratch.end();
    return hits;
  }

  /**
   * The most a record holding only (some of) `terms` can score: the coordination they could earn it times the
   * sum of their bounds, raised by a hair so that rounding in a record's own sum cannot pass it.
   */
  private ceiling(terms: TermPlan[], info: number): number {
    let bound = 0;
    let held = 0;
    let counted = 0;
    for (const term of terms) {
      bound += term.bound;
      held += term.info;
      if (term.counts) counted += 1;
    }
    return this.coordination(counted, held, info) * bound * (1 + 1e-9);
  }

  /**
   * The term to scan next: of those whose scan would prove the rest cannot reach the page (the ceiling of the
   * others below its floor), the one with the fewest posting entries; when none would, the one that lowers the
   * ceiling most per entry scanned.
   */
  private nextToScan(unscanned: TermPlan[], floor: number, info: number): TermPlan {
    const ceiling = this.ceiling(unscanned, info);
    let proving: TermPlan | undefined;
    let steepest = unscanned[0]!;
    let steepestRate = Number.NEGATIVE_INFINITY;
    for (const term of unscanned) {
      const after = this.ceiling(
        unscanned.filter((t) => t !== term),
        info,
      );
      const cost = Math.max(1, entries(term));
      if (floor > after && (!proving || cost < entries(proving))) proving = term;
      const rate = (ceiling - after) / cost;
      if (rate > steepestRate) {
        steepestRate = rate;
        steepest = term;
      }
    }
    return proving ?? steepest;
  }

  /**
   * What a record's sum is multiplied by, for holding `terms` of the query's distinct terms worth `held` of
   * its information `info` (Bm25Params.coordination). A record reached by added terms alone counts as holding one.
   */
  private coordination(terms: number, held: number, info: number): number {
    return this.coordinator(info)(terms, held);
  }

  /** `coordination` for a query whose distinct terms hold `info`, as a function of a record's terms and their idf. */
  private coordinator(info: number): (terms: number, held: number) => number {
    const { coordination: power = 1, idfCoordination } = this.params;
    const spread = this.scratch.asked - 1;
    if (idfCoordination) {
      return power === 1
        ? (_, held) => 1 + spread * (info > 0 ? Math.min(1, held / info) : 0)
        : (_, held) => (1 + spread * (info > 0 ? Math.min(1, held / info) : 0)) ** power;
    }
    return power === 1 ? (terms) => Math.max(1, terms) : (terms) => Math.max(1, terms) ** power;
  }

  /** Accumulators for one query, as large as the index. */
  private scratchFor(): Scratch {
    if (this.scratch.capacity < this.ids.length) {
      const asked = this.scratch.asked;
      // A quarter to spare: the accumulators cost more bytes per record than its postings do.
      this.scratch = new Scratch(this.ids.length + (this.ids.length >> 2) + 1024);
      this.scratch.asked = asked;
    }
    return this.scratch.begin();
  }

  /**
   * The constants of BM25+'s term-frequency part on the current length statistics:
   * d + tf·k1 / (tf + base + slope[field]·length).
   */
  private saturation(): Saturation {
    const { k, b, d } = this.params;
    return { d, k1: k + 1, base: k * (1 - b), slopes: this.totalLength.map((total) => (k * b) / (total / this.size || 1)) };
  }

  /**
   * The query's distinct terms that the index holds, with their idf, bounds and lookup tables; and the
   * information of all its distinct terms (see Bm25Hit.informative).
   */
  private plan(query: string | WeightedQuery): { plans: TermPlan[]; info: number } {
    const asked = typeof query === "string" ? weightedTerms(query) : query.asked;
    this.scratch.asked = asked.size;
    const added = typeof query === "string" ? undefined : query.added;
    const weights = added ? [...asked, ...[...added].filter(([t]) => !asked.has(t))] : asked;
    const documents = this.size;
    const { k, b, d } = this.params;
    const plans: TermPlan[] = [];
    const termIdf = (df: number) => Math.log(1 + (documents - df + 0.5) / (df + 0.5));
    let info = 0;
    let index = 0;
    for (const [term, weight] of weights) {
      index += 1;
      const counts = asked.has(term);
      const byField = this.postings.get(term);
      if (!byField) {
        if (counts) info += termIdf(1);
        continue;
      }
      const fields: FieldPlan[] = [];
      let bound = 0;
      let dense = true;
      let df = 0;
      for (let f = 0; f < this.fieldCount; f++) {
        const posting = byField[f];
        if (!posting || posting.live === 0) continue;
        this.compactIfDirty(posting);
        if (!posting.dense && posting.live >= documents * DENSE_SHARE) posting.dense = denseOf(posting, this.ids.length);
        dense &&= posting.dense !== undefined;
        df = Math.max(df, posting.live);
        const idf = Math.log(1 + (documents - posting.live + 0.5) / (posting.live + 0.5));
        const factor = weight * this.boosts[f]! * idf;
        const average = this.totalLength[f]! / documents || 1;
        const saturation = (posting.maxFreq * (k + 1)) / (posting.maxFreq + k * (1 - b + (b * posting.minLength) / average));
        bound += factor * (d + saturation);
        fields.push({ field: f, posting, factor });
      }
      const termInfo = counts ? termIdf(Math.max(1, df)) : 0;
      info += termInfo;
      if (fields.length > 0) plans.push({ index, fields, bound, dense, info: termInfo, counts });
    }
    return { plans, info };
  }

  private posting(term: string, field: number): Posting {
    let byField = this.postings.get(term);
    if (!byField) {
      byField = new Array<Posting | undefined>(this.fieldCount);
      this.postings.set(term, byField);
    }
    let posting = byField[field];
    if (!posting) {
      posting = {
        term,
        ordinal: this.postingList.length,
        docs: new Uint32Array(2),
        freqs: new Uint16Array(2),
        length: 0,
        live: 0,
        maxFreq: 0,
        minLength: Number.POSITIVE_INFINITY,
      };
      byField[field] = posting;
      this.postingList.push(posting);
    }
    return posting;
  }

  /** Drops removed records' entries once they are most of a posting, so replaced records cost nothing lasting. */
  private compactIfDirty(posting: Posting): void {
    if (posting.length < 2 * posting.live + 16) return;
    let kept = 0;
    for (let i = 0; i < posting.length; i++) {
      const n = posting.docs[i]!;
      if (this.ids[n] === undefined) continue;
      posting.docs[kept] = n;
      posting.freqs[kept] = posting.freqs[i]!;
      kept += 1;
    }
    posting.length = kept;
    if (posting.docs.length > 2 * kept + 16) {
      posting.docs = posting.docs.slice(0, kept + (kept >> 1) + 2);
      posting.freqs = posting.freqs.slice(0, posting.docs.length);
    }
  }
}

/** BM25+'s term-frequency part as constants: d + tf·k1 / (tf + base + slopes[field]·length). */
interface Saturation {
  d: number;
  k1: number;
  base: number;
  slopes: number[];
}

/**
 * The best `limit` of the records a query reached, kept as they are scored (positions in the scratch's `touched`).
 * Nearly every record passes the usual filter (validity), so records are ranked by score alone and only the page
 * is judged; once the filter turns one of its records down, the page is made again of the records it lets
 * through, and from then on a record is judged when it would enter.
 */
class Page {
  private heap: BoundedHeap;
  private filtered = false;

  constructor(
    private readonly limit: number,
    private readonly scratch: Scratch,
    private readonly passes: (position: number) => boolean,
  ) {
    this.heap = new BoundedHeap(limit, scratch.finals, scratch.touched);
  }

  /** Positions scored so far: 0 up to (not including) this. */
  private scored = 0;

  /** Offers the record at position `j`, scored. */
  offer(j: number): void {
    if (this.heap.wouldTake(j) && (!this.filtered || this.passes(j))) this.heap.push(j);
  }

  /**
   * Marks the records before position `to` scored: each either offered or left out because it provably stays
   * out (given up, or below a floor), and it is then −∞ or below the floor for good.
   */
  scoredUpTo(to: number): void {
    this.scored = to;
  }

  /** Whether the page holds `limit` records (judged or not). */
  get full(): boolean {
    return this.heap.full;
  }

  /** The score a record must beat to enter the page (−∞ while it is not full). */
  floor(): number {
    this.judge();
    return this.heap.floor();
  }

  /** The page, best first. */
  positions(): number[] {
    this.judge();
    return this.heap.drain();
  }

  private judge(): void {
    if (this.filtered || this.heap.held().every(this.passes)) return;
    this.filtered = true;
    this.heap = new BoundedHeap(this.limit, this.scratch.finals, this.scratch.touched);
    const { finals } = this.scratch;
    for (let j = 0; j < this.scored; j++) if (finals[j]! > Number.NEGATIVE_INFINITY) this.offer(j);
  }
}

/** Posting entries a scan of the term would read. */
const entries = (term: TermPlan) => term.fields.reduce((sum, f) => sum + f.posting.length, 0);

/** A posting's lookup table, sized for the records numbered so far and an eighth more. */
function denseOf(posting: Posting, numbered: number): Uint8Array {
  const dense = new Uint8Array(Math.max(1024, numbered + (numbered >> 3)));
  for (let i = 0; i < posting.length; i++) dense[posting.docs[i]!] = Math.min(posting.freqs[i]!, TALLY_ESCAPE);
  return dense;
}

/**
 * Adds an entry to a posting, growing its arrays by half when full: a posting of a rare term stays a few
 * bytes, and a common term's pays for about a quarter of its length in spare room.
 */
function append(posting: Posting, n: number, freq: number): void {
  if (posting.length === posting.docs.length) {
    const size = posting.length + (posting.length >> 1) + 2;
    const docs = new Uint32Array(size);
    docs.set(posting.docs);
    const freqs = new Uint16Array(size);
    freqs.set(posting.freqs);
    posting.docs = docs;
    posting.freqs = freqs;
  }
  posting.docs[posting.length] = n;
  posting.freqs[posting.length] = Math.min(freq, 0xffff);
  posting.length += 1;
}

/** The table, or a copy half as long again, so that index `n` fits. */
function grown<T extends Uint8Array | Uint16Array | Uint32Array>(table: T, n: number, make: (length: number) => T): T {
  if (n < table.length) return table;
  const larger = make(Math.max(n + 1, table.length + (table.length >> 1)));
  larger.set(table);
  return larger;
}

/** Sets record n's entry in a lookup table, or in a copy half as long again when n is past its end. */
function setDense(dense: Uint8Array, n: number, freq: number): Uint8Array {
  const table = grown(dense, n, (length) => new Uint8Array(length));
  table[n] = Math.min(freq, TALLY_ESCAPE);
  return table;
}

/**
 * Per-query accumulators reused across queries (a query runs synchronously, so one set per index suffices);
 * only the entries a query touched are reset after it.
 */
class Scratch {
  readonly score: Float64Array;
  /** The index (from 1) of the last query term that reached each record; 0: untouched by this query. */
  readonly lastTerm: Uint32Array;
  /** Distinct query terms that reached each record. */
  readonly distinct: Uint16Array;
  /** The summed idf (TermPlan.info) of the distinct query terms that reached each record. */
  readonly gained: Float64Array;
  /** 1 for the records a `searchAmong` is limited to, while it runs. */
  readonly among: Uint8Array;
  /** Document numbers of the records the query reached, in the order reached: the first `reached`. */
  readonly touched: Int32Array;
  reached = 0;
  /** By position in `touched`: the record's final score, and the distinct query terms it holds. */
  readonly finals: Float64Array;
  readonly matched: Uint16Array;
  readonly covered: Float64Array;
  /** The current query's distinct asked terms. */
  asked = 0;

  constructor(readonly capacity: number) {
    this.among = new Uint8Array(capacity);
    this.finals = new Float64Array(capacity);
    this.matched = new Uint16Array(capacity);
    this.covered = new Float64Array(capacity);
    this.gained = new Float64Array(capacity);
    this.score = new Float64Array(capacity);
    this.lastTerm = new Uint32Array(capacity);
    this.distinct = new Uint16Array(capacity);
    this.touched = new Int32Array(capacity);
  }

  begin() {
    this.reached = 0;
    return this;
  }

  end(): void {
    const { touched, score, lastTerm, distinct, gained } = this;
    for (let j = 0; j < this.reached; j++) {
      const n = touched[j]!;
      score[n] = 0;
      lastTerm[n] = 0;
      distinct[n] = 0;
      gained[n] = 0;
    }
    this.reached = 0;
  }
}
