import type { Facts } from "../records/filters.js";
import { Bm25Index, weightedTerms, type AnalyzedField, type Bm25Params, type WeightedQuery } from "./bm25-index.js";
import { holds, type Condition } from "../records/filters.js";
import { FactTable } from "./fact-table.js";

const CONTEXT_POOL = 200;

export interface LexicalHit {
  id: string;
  score: number;
  /** Share of the query's distinct terms that the record holds. */
  coverage: number;
  /** Share of the query's information (its terms' idf) that the record holds: Bm25Hit.informative. */
  informative: number;
}

/** What the ranking is given of a record: its searchable fields and the metadata that queries filter on. */
export interface RankedDocument {
  id: string;
  fields: Record<string, string>;
  facts: Facts;
}

/** A record as a snapshot holds it (snapshot.ts): its fields analysed, in the ranking's field order. */
export interface AnalyzedDocument {
  id: string;
  analyzed: AnalyzedField[];
  facts: Facts;
}

/** A stretch of a ranking's records, in the order they were put, and where the next stretch starts (none: the end). */
export interface RankingDump {
  documents: AnalyzedDocument[];
  next: number | undefined;
}

export interface LexicalQuery {
  text: string;
  limit: number;
  conditions: Condition[];
  /** When known, every record that meets the conditions (a filter on agent or session): scored among them only. */
  among?: string[];
}

/**
 * A ranking's sizes (for /metrics): records and distinct terms. Posting entries are not counted: counting them is
 * a pass over every term's postings, which holds the ranking thread for as long as the index is large.
 */
export interface RankingStats {
  documents: number;
  terms: number;
}

export interface RankingOptions {
  boosts: Record<string, number>;
  bm25: Bm25Params;
  /** Turn context: 0 for none (see LexicalTuning.neighbourShare). */
  neighbourShare: number;
  /** Pseudo-relevance feedback (see LexicalTuning.feedback); absent or 0 terms for none. */
  feedback?: FeedbackOptions;
}

export interface FeedbackOptions {
  /** The best this many hits of a first pass lend terms... */
  hits: number;
  /** ...this many of them, held by at least `minHits` of those hits... */
  terms: number;
  minHits: number;
  /** ...the best weighing this much against a query term's 1, for a second pass. */
  weight: number;
}

/**
 * A session's records, by row; in order (by `valid_from`, then id) once turn context needs it, until the session
 * changes. `members` may still hold rows since removed (dropped when it is next sorted); `live` counts the rest.
 */
interface Session {
  members: number[];
  live: number;
  sorted: number[] | undefined;
}

/** A hit while it is ranked. */
interface RowHit {
  row: number;
  score: number;
  coverage: number;
  informative: number;
}

/**
 * Lexical ranking of one collection: BM25+ (bm25-index.ts), the query's filter, and turn context. It runs
 * wherever its owner puts it (ranking-host.ts runs it on a worker thread); it holds nothing but what it is
 * given, in the order given.
 */
export class Ranking {
  /** Each record's item is its row: the number its facts, session and place are kept under. */
  private readonly bm25: Bm25Index<number>;
  /** By row: the record's id (undefined once removed), its facts, its session and its place in it. */
  private readonly ids: Array<string | undefined> = [];
  private readonly facts = new FactTable();
  private sessionOf: Int32Array = new Int32Array(1024).fill(-1);
  private positions: Int32Array = new Int32Array(1024);
  /** By the code of their `session_id` in `facts`. */
  private readonly sessions = new Map<number, Session>();
  private readonly neighbourShare: number;
  private readonly feedback: FeedbackOptions | undefined;

  constructor(options: RankingOptions) {
    this.bm25 = new Bm25Index(Object.keys(options.boosts), options.boosts, options.bm25);
    this.neighbourShare = options.neighbourShare;
    this.feedback = options.feedback && options.feedback.terms > 0 ? options.feedback : undefined;
  }

  put(document: RankedDocument | AnalyzedDocument): void {
    this.remove(document.id);
    const row = this.ids.length;
    this.ids.push(document.id);
    this.facts.set(row, document.facts);
    if (row >= this.sessionOf.length) {
      this.sessionOf = grownInt32(this.sessionOf, -1);
      this.positions = grownInt32(this.positions, 0);
    }
    if ("analyzed" in document) this.bm25.putAnalyzed(document.id, document.analyzed, row);
    else this.bm25.put(document.id, document.fields, row);
    const code = typeof document.facts.session_id === "string" ? this.facts.code(row, "session_id") : -1;
    if (code < 0 || this.neighbourShare <= 0) return;
    this.sessionOf[row] = code;
    let session = this.sessions.get(code);
    if (!session) {
      session = { members: [], live: 0, sorted: undefined };
      this.sessions.set(code, session);
    }
    session.members.push(row);
    session.live += 1;
    session.sorted = undefined;
  }

  remove(id: string): void {
    const row = this.bm25.item(id);
    if (row === undefined) return;
    this.bm25.remove(id);
    this.ids[row] = undefined;
    this.facts.clear(row);
    const code = this.sessionOf[row]!;
    const session = code >= 0 ? this.sessions.get(code) : undefined;
    if (!session) return;
    session.live -= 1;
    session.sorted = undefined;
    if (session.live === 0) this.sessions.delete(code);
  }

  /** Up to `limit` record numbers from `from` (removed ones are skipped, so fewer records may come). */
  dump(from: number, limit: number): RankingDump {
    const to = from + limit;
    const documents = [...this.bm25.analyzed(from, to)].map(({ id, item, fields }) => ({
      id,
      analyzed: fields,
      facts: this.facts.metadata(item),
    }));
    return { documents, next: to < this.bm25.numbered ? to : undefined };
  }

  stats(): RankingStats {
    return this.bm25.stats();
  }

  /** Allocates what a query over the records held needs (Bm25Index.prepare). */
  prepare(): void {
    this.bm25.prepare();
  }

  /** The best `limit` records that meet the conditions. */
  query({ text, limit, conditions, among }: LexicalQuery): LexicalHit[] {
    const question = weightedTerms(text);
    const asked = question.size;
    if (asked === 0) return [];
    // `matches` (filters.ts) over a record's facts.
    const readers = conditions.map((c) => ({ condition: c, read: this.facts.reader(c.field) }));
    const accept = (row: number) => {
      for (const { condition, read } of readers) if (!holds(read(row), condition)) return false;
      return true;
    };
    // Turn context can lift a record by at most `neighbourShare` of the best score, so records below the
    // first `CONTEXT_POOL` cannot reach the top `limit` through it in any realistic ranking.
    const pool = this.neighbourShare > 0 ? Math.max(limit, CONTEXT_POOL) : limit;
    const search = (q: string | WeightedQuery, k = pool) => (among ? this.bm25.searchAmong(q, k, among) : this.bm25.search(q, k, accept));
    const feedback = this.feedback;
    let found: ReturnType<typeof search> | undefined;
    if (feedback) {
      // Pseudo-relevance feedback: the first pass's best hits lend their distinctive terms to a second pass.
      const first = search(text, feedback.hits);
      const added = this.bm25.feedbackTerms(first, question, feedback.terms, feedback.weight, feedback.minHits);
      if (added.size > 0) found = search({ asked: question, added });
      else if (first.length < feedback.hits) found = first;
    }
    found ??= search(text);
    const hits = found.map((h) => ({
      row: h.item,
      score: h.score,
      coverage: Math.min(1, h.matchedTerms / asked),
      informative: h.informative,
    }));
    const ranked = this.neighbourShare > 0 ? this.withContext(hits, limit, accept) : hits;
    return ranked.map((h) => ({ id: this.ids[h.row]!, score: h.score, coverage: h.coverage, informative: h.informative }));
  }

  /** The records just before and after this one in its session. */
  private neighbours(row: number): number[] {
    const session = this.sessions.get(this.sessionOf[row]!);
    if (!session) return [];
    let list = session.sorted;
    if (!list) {
      const ids = this.ids;
      session.members = session.members.filter((r) => ids[r] !== undefined);
      const at = this.facts.reader("valid_from");
      const key = (r: number) => Number(at(r) ?? 0);
      list = [...session.members].sort((a, b) => key(a) - key(b) || (ids[a]! < ids[b]! ? -1 : 1));
      list.forEach((r, i) => (this.positions[r] = i));
      session.sorted = list;
    }
    const i = this.positions[row]!;
    const out: number[] = [];
    if (i > 0) out.push(list[i - 1]!);
    if (i + 1 < list.length) out.push(list[i + 1]!);
    return out;
  }

  /**
   * Each hit, and each neighbour of a hit, scored with a share of its best neighbour's score; the best `limit`.
   * The hits passed `accept` already. At least `limit` hits score their own score or more, so a candidate that
   * cannot rise above the `limit`-th own score even with the best hit beside it is dropped unexamined.
   */
  private withContext(hits: RowHit[], limit: number, accept: (row: number) => boolean): RowHit[] {
    if (hits.length === 0) return hits;
    const share = this.neighbourShare;
    /** The hits' own scores, by row. */
    const own = new Map<number, number>();
    for (const hit of hits) own.set(hit.row, hit.score);
    const lift = share * hits[0]!.score;
    const floor = hits.length >= limit ? hits[limit - 1]!.score : 0;
    const bestNeighbour = (row: number) => {
      let best = 0;
      for (const n of this.neighbours(row)) best = Math.max(best, own.get(n) ?? 0);
      return best;
    };
    const out: RowHit[] = [];
    for (const hit of hits) {
      if (hit.score + lift < floor) break; // hits come best first
      out.push({
        row: hit.row,
        score: hit.score + share * bestNeighbour(hit.row),
        coverage: hit.coverage,
        informative: hit.informative,
      });
    }
    if (lift >= floor) {
      const seen = new Set<number>();
      for (const hit of hits) {
        for (const row of this.neighbours(hit.row)) {
          if (own.has(row) || seen.has(row)) continue;
          seen.add(row);
          if (accept(row)) out.push({ row, score: share * bestNeighbour(row), coverage: 0, informative: 0 });
        }
      }
    }
    return out.sort((a, b) => b.score - a.score).slice(0, limit);
  }
}

/** The table half as long again, new entries `fill`. */
function grownInt32(table: Int32Array, fill: number): Int32Array {
  const larger = new Int32Array(table.length + (table.length >> 1)).fill(fill);
  larger.set(table);
  return larger;
}
