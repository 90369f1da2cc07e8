import type { Metadata } from "../store/chroma-store.js";
import { Bm25Index, weightedTerms, type Bm25Params, type WeightedQuery } from "./bm25-index.js";
import { holds, type Condition } from "../retrieval/filters.js";

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
  facts: Metadata;
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
 * a pass over every term's postings, which held the ranking thread for ~120 ms at 280k terms.
 */
export interface RankingStats {
  documents: number;
  terms: number;
}

export interface RankingOptions {
  boosts: Record<string, number>;
  bm25: Bm25Params;
  /** Turn context: 0 for none (see RetrievalTuning.neighbourShare). */
  neighbourShare: number;
  /** Pseudo-relevance feedback (see RetrievalTuning.feedback); absent or 0 terms for none. */
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

/** A record as the ranking holds it; its BM25 hits carry it, so filters and turn context need no lookup by id. */
interface Held {
  id: string;
  facts: Metadata;
  /**
   * Its validity window, also in `facts`: nearly every query filters on it, and reading it here costs a
   * fraction of a lookup by name in `facts`, whose objects differ in shape (Chroma sends keys in any order).
   */
  validFrom: Metadata[string] | undefined;
  validUntil: Metadata[string] | undefined;
  /** Its session, for turn context. */
  session: Session | undefined;
  /** Its place in its session's sorted list, while that list is kept. */
  position: number;
  /** The last query that ranked it on its own, and its score there: turn context reads its neighbours' scores. */
  rankedBy: number;
  ownScore: number;
}

/** A session's records; in order (by `valid_from`, then id) once turn context needs it, until the session changes. */
interface Session {
  members: Set<Held>;
  sorted: Held[] | undefined;
}

/** A hit while it is ranked. */
interface HeldHit {
  held: Held;
  score: number;
  coverage: number;
  informative: number;
}

/**
 * Lexical ranking of one collection: BM25+ (bm25-index.ts), the query's filter, and turn context. It runs
 * wherever its owner puts it (lexical-rankers.ts runs it on a worker thread); it holds nothing but what it is
 * given, in the order given.
 */
export class Ranking {
  private readonly bm25: Bm25Index<Held>;
  private readonly held = new Map<string, Held>();
  private readonly sessions = new Map<string, Session>();
  private readonly neighbourShare: number;
  private readonly feedback: FeedbackOptions | undefined;
  private queries = 0;

  constructor(options: RankingOptions) {
    this.bm25 = new Bm25Index(Object.keys(options.boosts), options.boosts, options.bm25);
    this.neighbourShare = options.neighbourShare;
    this.feedback = options.feedback && options.feedback.terms > 0 ? options.feedback : undefined;
  }

  put(document: RankedDocument): void {
    this.remove(document.id);
    const name = document.facts.session_id;
    let session: Session | undefined;
    if (typeof name === "string" && this.neighbourShare > 0) {
      session = this.sessions.get(name) ?? { members: new Set(), sorted: undefined };
      this.sessions.set(name, session);
    }
    const held: Held = {
      id: document.id,
      facts: document.facts,
      validFrom: document.facts.valid_from,
      validUntil: document.facts.valid_until,
      session,
      position: -1,
      rankedBy: 0,
      ownScore: 0,
    };
    this.bm25.put(document.id, document.fields, held);
    this.held.set(document.id, held);
    if (!session) return;
    session.members.add(held);
    session.sorted = undefined;
  }

  remove(id: string): void {
    const held = this.held.get(id);
    if (!held) return;
    this.bm25.remove(id);
    this.held.delete(id);
    const session = held.session;
    if (!session) return;
    session.members.delete(held);
    session.sorted = undefined;
    if (session.members.size === 0) this.sessions.delete(String(held.facts.session_id));
  }

  stats(): RankingStats {
    return this.bm25.stats();
  }

  /** The best `limit` records that meet the conditions. */
  query({ text, limit, conditions, among }: LexicalQuery): LexicalHit[] {
    const question = weightedTerms(text);
    const asked = question.size;
    if (asked === 0) return [];
    // `matches` (filters.ts) over a held record.
    const accept = (held: Held) => {
      for (const c of conditions) if (!holds(valueOf(held, c.field), c)) return false;
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
      held: h.item,
      score: h.score,
      coverage: Math.min(1, h.matchedTerms / asked),
      informative: h.informative,
    }));
    const ranked = this.neighbourShare > 0 ? this.withContext(hits, limit, accept) : hits;
    return ranked.map((h) => ({ id: h.held.id, score: h.score, coverage: h.coverage, informative: h.informative }));
  }

  /** The records just before and after this one in its session. */
  private neighbours(held: Held): Held[] {
    const session = held.session;
    if (!session) return [];
    let list = session.sorted;
    if (!list) {
      const at = (h: Held) => Number(h.facts.valid_from ?? 0);
      list = [...session.members].sort((a, b) => at(a) - at(b) || (a.id < b.id ? -1 : 1));
      list.forEach((h, i) => (h.position = i));
      session.sorted = list;
    }
    const i = held.position;
    const out: Held[] = [];
    if (i > 0) out.push(list[i - 1]!);
    if (i + 1 < list.length) out.push(list[i + 1]!);
    return out;
  }

  /**
   * Each hit, and each neighbour of a hit, scored with a share of its best neighbour's score; the best `limit`.
   * The hits passed `accept` already. At least `limit` hits score their own score or more, so a candidate that
   * cannot rise above the `limit`-th own score even with the best hit beside it is dropped unexamined.
   */
  private withContext(hits: HeldHit[], limit: number, accept: (held: Held) => boolean): HeldHit[] {
    if (hits.length === 0) return hits;
    const share = this.neighbourShare;
    const query = ++this.queries;
    for (const hit of hits) {
      hit.held.rankedBy = query;
      hit.held.ownScore = hit.score;
    }
    const isHit = (held: Held) => held.rankedBy === query;
    const lift = share * hits[0]!.score;
    const floor = hits.length >= limit ? hits[limit - 1]!.score : 0;
    const bestNeighbour = (held: Held) => {
      let best = 0;
      for (const n of this.neighbours(held)) if (isHit(n)) best = Math.max(best, n.ownScore);
      return best;
    };
    const out: HeldHit[] = [];
    for (const hit of hits) {
      if (hit.score + lift < floor) break; // hits come best first
      out.push({
        held: hit.held,
        score: hit.score + share * bestNeighbour(hit.held),
        coverage: hit.coverage,
        informative: hit.informative,
      });
    }
    if (lift >= floor) {
      const seen = new Set<Held>();
      for (const hit of hits) {
        for (const held of this.neighbours(hit.held)) {
          if (isHit(held) || seen.has(held)) continue;
          seen.add(held);
          if (accept(held)) out.push({ held, score: share * bestNeighbour(held), coverage: 0, informative: 0 });
        }
      }
    }
    return out.sort((a, b) => b.score - a.score).slice(0, limit);
  }
}

const valueOf = (held: Held, field: string) =>
  field === "valid_until" ? held.validUntil : field === "valid_from" ? held.validFrom : held.facts[field];
