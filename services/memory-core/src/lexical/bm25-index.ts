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
  /** Term frequency by document number, kept once the posting is dense (see DENSE_SHARE). */
  dense?: Uint16Array;
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

export function analyzeField(text: string): AnalyzedField {
  const tokens = tokenize(text);
  const freqs = new Map<string, number>();
  for (const token of tokens) {
    const term = toTerm(token);
    if (term !== null) freqs.set(term, (freqs.get(term) ?? 0) + 1);
  }
  const terms: Array<string | number> = [];
  for (const [term, freq] of freqs) terms.push(term, freq);
  return { length: new Set(tokens).size, terms };
}

/** Record n's frequency in a posting that holds it (entries are in ascending record order). */
function frequencyOf(posting: Posting, n: number): number {
  if (posting.dense && n < posting.dense.length && posting.dense[n]! > 0) return posting.dense[n]!;
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

/** A posting held by at least this share of the records gets a by-document lookup table. */
const DENSE_SHARE = 1 / 16;

/**
 * BM25+ over fielded text (each field scored on its own length statistics, weighted by its boost, summed),
 * with MiniSearch's scoring — a record's sum is multiplied by the number of distinct query terms it holds —
 * so that the ranking measured on LoCoMo carries over exactly. What it adds is cost control:
 * - scores go into preallocated accumulators and the best are kept in a bounded heap, so a term held by most
 *   of a 100k-record workspace costs a pass over plain arrays, not 100k result objects;
 * - the query's commonest terms (held by most records, so worth least) are not scanned at all when they
 *   need not be: candidates come from the rarer terms, the common ones are looked up for those candidates
 *   only, and a bound proves that no record holding only common terms could have made the list — when the
 *   bound cannot prove it, the query is scored in full instead. Either way the result is exact.
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
   */
  search(text: string | WeightedQuery, limit: number, accept: (item: T) => boolean): Array<Bm25Hit<T>> {
    const { plans, info } = this.plan(text);
    if (plans.length === 0 || limit <= 0) return [];

    // Terms with a lookup table need not be scanned: scan the others, or else the one with the fewest entries,
    // and look the rest up for the records reached.
    const sparse = plans.filter((t) => !t.dense);
    const dense = plans.filter((t) => t.dense);
    if (dense.length > 0 && plans.length > 1) {
      const scanned = sparse.length > 0 ? sparse : [dense.reduce((a, b) => (entries(b) < entries(a) ? b : a))];
      const looked = dense.filter((t) => !scanned.includes(t));
      const { hits, full } = this.score(scanned, looked, limit, accept, info);
      // A record holding only looked-up terms scores at most (the coordination they could earn it) × (the sum of
      // their bounds).
      const ceiling =
        this.coordination(
          looked.filter((t) => t.counts).length,
          looked.reduce((sum, t) => sum + t.info, 0),
          info,
        ) * looked.reduce((sum, t) => sum + t.bound, 0);
      if (full && hits.at(-1)!.score > ceiling) return hits;
    }
    return this.score(plans, [], limit, accept, info).hits;
  }

  /**
   * `search` over the given records only (a filter whose records are known: one session, one agent), best
   * first, with the same scores: each record is looked up in the terms with a lookup table, and the other
   * terms' postings are scanned for it. Its cost follows the records given, not the records that hold a term.
   */
  searchAmong(text: string | WeightedQuery, limit: number, ids: readonly string[]): Array<Bm25Hit<T>> {
    const { plans, info } = this.plan(text);
    if (plans.length === 0 || limit <= 0 || ids.length === 0) return [];
    const { score, lastTerm, distinct, gained, touched, among } = this.scratchFor();
    const members: number[] = [];
    for (const id of ids) {
      const n = this.numbers.get(id);
      if (n !== undefined && among[n] === 0) {
        among[n] = 1;
        members.push(n);
      }
    }
    const { d, k1, base, slopes } = this.saturation();
    const add = (term: TermPlan, n: number, field: number, factor: number, freq: number) => {
      if (lastTerm[n] !== term.index) {
        if (lastTerm[n] === 0) touched.push(n);
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
          for (const n of members) if (n < dense.length && dense[n]! > 0) add(term, n, field, factor, dense[n]!);
        } else {
          const { docs, freqs, length } = posting;
          for (let i = 0; i < length; i++) if (among[docs[i]!] === 1) add(term, docs[i]!, field, factor, freqs[i]!);
        }
      }
    }
    for (const n of members) among[n] = 0;
    return this.rank(limit, () => true, [], { d, k1, base }, info);
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

  /** Scans the postings of `scanned`, then ranks the records reached, adding `looked` to each by lookup. */
  private score(scanned: TermPlan[], looked: TermPlan[], limit: number, accept: (item: T) => boolean, info: number) {
    const { score, lastTerm, distinct, gained, touched } = this.scratchFor();
    // BM25+'s term-frequency part, inlined in the loop below: it runs once per posting entry reached, the
    // hottest code of a query.
    const { d, k1, base, slopes } = this.saturation();
    const lengthsByField = this.lengths;
    const ids = this.ids;
    for (const term of scanned) {
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
            if (lastTerm[n] === 0) touched.push(n);
            lastTerm[n] = index;
            distinct[n]! += counts;
            gained[n]! += termInfo;
          }
          const freq = freqs[i]!;
          score[n]! += factor * (d + (freq * k1) / (freq + base + slope * lengths[n]!));
        }
      }
    }
    const lookups = looked.flatMap((term) =>
      term.fields.map(({ field, posting, factor }, i) => ({
        table: posting.dense!,
        lengths: lengthsByField[field]!,
        slope: slopes[field]!,
        factor,
        firstOfTerm: i === 0,
        info: term.info,
        counts: term.counts,
      })),
    );
    const hits = this.rank(limit, accept, lookups, { d, k1, base }, info);
    return { hits, full: hits.length >= limit };
  }

  /**
   * The best `limit` records the current query reached that `accept` lets through, each completed with the
   * `lookups` (terms not scanned, looked up by document number) in the order a full scan adds them, so that
   * scores are identical; the accumulators are reset.
   */
  private rank(
    limit: number,
    accept: (item: T) => boolean,
    lookups: Lookup[],
    { d, k1, base }: { d: number; k1: number; base: number },
    info: number,
  ): Array<Bm25Hit<T>> {
    const { score, distinct, gained, touched, finals, matched, covered } = this.scratch;
    const reached = touched.length;
    const count = lookups.length;
    for (let j = 0; j < reached; j++) {
      const n = touched[j]!;
      let sum = score[n]!;
      let terms = distinct[n]!;
      let held = gained[n]!;
      let termReached = false;
      for (let l = 0; l < count; l++) {
        const lookup = lookups[l]!;
        if (lookup.firstOfTerm) termReached = false;
        const table = lookup.table;
        const freq = n < table.length ? table[n]! : 0;
        if (freq === 0) continue;
        sum += lookup.factor * (d + (freq * k1) / (freq + base + lookup.slope * lookup.lengths[n]!));
        if (!termReached) {
          termReached = true;
          if (lookup.counts) terms += 1;
          held += lookup.info;
        }
      }
      // A record reached by added terms alone counts as holding one.
      finals[j] = sum * this.coordination(terms, held, info);
      matched[j] = terms;
      covered[j] = held;
    }
    // Nearly every record passes the usual filter (validity), so rank by score alone first and judge only the
    // page; rank again with the filter only when it turns one of them down.
    const items = this.items;
    const passes = (j: number) => accept(items[touched[j]!] as T);
    let page = this.best(limit, reached);
    if (!page.every(passes)) page = this.best(limit, reached, passes);
    const hits = page.map((j) => {
      const n = touched[j]!;
      return {
        id: this.ids[n]!,
        item: items[n] as T,
        score: finals[j]!,
        matchedTerms: matched[j]!,
        informative: info > 0 ? Math.min(1, covered[j]! / info) : 0,
      };
    });
    this.scratch.end();
    return hits;
  }

  /** Positions in `touched` of the best `limit` final scores (among those `passes` lets through), best first. */
  private best(limit: number, reached: number, passes?: (j: number) => boolean): number[] {
    const heap = new BoundedHeap(limit, this.scratch.finals, this.scratch.touched);
    for (let j = 0; j < reached; j++) {
      if (heap.wouldTake(j) && (!passes || passes(j))) heap.push(j);
    }
    return heap.drain();
  }

  /**
   * What a record's sum is multiplied by, for holding `terms` of the query's distinct terms worth `held` of
   * its information `info` (Bm25Params.coordination). A record reached by added terms alone counts as holding one.
   */
  private coordination(terms: number, held: number, info: number): number {
    const { coordination: power = 1, idfCoordination } = this.params;
    const base = idfCoordination ? 1 + (this.scratch.asked - 1) * (info > 0 ? Math.min(1, held / info) : 0) : Math.max(1, terms);
    return power === 1 ? base : base ** power;
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
  private saturation() {
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
        if (!posting.dense && posting.live >= documents * DENSE_SHARE) posting.dense = denseOf(posting);
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

/** A term's field not scanned but looked up for each record reached: its table and constants. */
interface Lookup {
  table: Uint16Array;
  lengths: Uint32Array;
  slope: number;
  /** weight × boost × idf */
  factor: number;
  /** The first of its term's fields: a record reached here or in the term's next fields counts the term once. */
  firstOfTerm: boolean;
  /** Its term's idf over records (TermPlan.info). */
  info: number;
  counts: boolean;
}

/** Posting entries a scan of the term would read. */
const entries = (term: TermPlan) => term.fields.reduce((sum, f) => sum + f.posting.length, 0);

function denseOf(posting: Posting): Uint16Array {
  let dense: Uint16Array = new Uint16Array(Math.max(1024, (posting.length > 0 ? posting.docs[posting.length - 1]! : 0) * 2));
  for (let i = 0; i < posting.length; i++) dense = setDense(dense, posting.docs[i]!, posting.freqs[i]!);
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

/** Term frequencies above 65535 saturate BM25 long before; they are stored as the largest that fits. */
function setDense(dense: Uint16Array, n: number, freq: number): Uint16Array {
  const table = grown(dense, n, (length) => new Uint16Array(length));
  table[n] = Math.min(freq, 0xffff);
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
  /** Document numbers of the records the query reached, in the order reached. */
  readonly touched: number[] = [];
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
  }

  begin() {
    this.touched.length = 0;
    return this;
  }

  end(): void {
    for (const n of this.touched) {
      this.score[n] = 0;
      this.lastTerm[n] = 0;
      this.distinct[n] = 0;
      this.gained[n] = 0;
    }
    this.touched.length = 0;
  }
}
