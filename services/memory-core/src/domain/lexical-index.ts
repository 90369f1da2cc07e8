import type { Metadata, StoredRecord } from "../store/chroma-store.js";
import { Bm25Index, type Bm25Params } from "./bm25-index.js";
import { matches, type Condition } from "./filters.js";
import { terms } from "./text-analysis.js";

const NONE: ReadonlySet<string> = new Set();

const keyOf = (field: string, value: unknown) => `${field}\u0000${String(value)}`;

const CONTEXT_POOL = 200;

export interface LexicalHit {
  id: string;
  score: number;
  /** Share of the query's distinct terms that the record holds. */
  coverage: number;
}

export interface LexicalDocument {
  id: string;
  fields: Record<string, string>;
  metadata: Metadata;
  /** The record's stored document, kept so a ranked page need not be fetched from Chroma again. */
  document?: string;
}

/**
 * BM25+ (bm25-index.ts) over one collection of one workspace. It holds nothing that Chroma does not:
 * it is built from Chroma and kept current from the workspace's change feed (see lexical-catalog.ts).
 */
export class LexicalIndex {
  private readonly bm25: Bm25Index;
  /** What the index was last given of each record: its metadata, and its document when the catalog had it. */
  private readonly records = new Map<string, StoredRecord>();
  /** Per value of each key field (`keyOf(field, value)`), the records holding it. */
  private readonly byKey = new Map<string, Set<string>>();
  private readonly keyFields: readonly string[];
  /**
   * Per session, its records in order (by `valid_from`, then id), sorted from `byKey` when turn context first
   * needs it and dropped when the session changes.
   */
  private readonly sortedSessions = new Map<string, string[]>();
  /** Each record's place in its session's sorted list. */
  private readonly positions = new Map<string, number>();

  /**
   * `keyFields`: metadata fields that queries filter on by equality (agent, session); the index keeps the
   * records of each value, so such a filter costs what its records do, not a pass over every record. Turn
   * context (`neighbourShare` above 0) finds a record's session the same way, so `session_id` is one of them.
   */
  constructor(
    boosts: Record<string, number>,
    bm25: Bm25Params,
    private readonly neighbourShare = 0,
    keyFields: readonly string[] = [],
  ) {
    this.bm25 = new Bm25Index(Object.keys(boosts), boosts, bm25);
    this.keyFields = neighbourShare > 0 && !keyFields.includes("session_id") ? [...keyFields, "session_id"] : keyFields;
  }

  get size(): number {
    return this.records.size;
  }

  put(document: LexicalDocument): void {
    this.bm25.put(document.id, document.fields);
    const previous = this.records.get(document.id);
    if (previous) this.unkey(document.id, previous.metadata);
    this.key(document.id, document.metadata);
    this.records.set(document.id, {
      id: document.id,
      metadata: document.metadata,
      ...(document.document !== undefined ? { document: document.document } : {}),
    });
    this.touchSession(document.metadata);
  }

  remove(id: string): void {
    this.bm25.remove(id);
    const metadata = this.records.get(id)?.metadata;
    if (metadata) this.unkey(id, metadata);
    this.records.delete(id);
    this.positions.delete(id);
    if (metadata) this.touchSession(metadata);
  }

  private key(id: string, metadata: Metadata) {
    for (const field of this.keyFields) {
      const value = metadata[field];
      if (value === undefined) continue;
      const key = keyOf(field, value);
      const ids = this.byKey.get(key) ?? new Set<string>();
      ids.add(id);
      this.byKey.set(key, ids);
    }
  }

  private unkey(id: string, metadata: Metadata) {
    for (const field of this.keyFields) {
      const key = keyOf(field, metadata[field]);
      const ids = this.byKey.get(key);
      ids?.delete(id);
      if (ids?.size === 0) this.byKey.delete(key);
    }
  }

  /**
   * The records that meet every condition, when one of them is an equality on a key field (found from that
   * field's records, the fewest); undefined when none is, and only a pass over every record could tell.
   */
  matching(conditions: readonly Condition[]): string[] | undefined {
    let fewest: ReadonlySet<string> | undefined;
    for (const c of conditions) {
      if (c.op !== "eq" || !this.keyFields.includes(c.field)) continue;
      const ids = this.byKey.get(keyOf(c.field, c.value)) ?? NONE;
      if (!fewest || ids.size < fewest.size) fewest = ids;
    }
    if (!fewest) return undefined;
    return [...fewest].filter((id) => {
      const metadata = this.records.get(id)?.metadata;
      return metadata !== undefined && matches(metadata, conditions);
    });
  }

  /**
   * About what share of records `accept` lets through: all of them judged when they are few, else an even
   * sample of about `sample` across the order they came in. For choosing how to ask, never for an answer.
   */
  estimateShare(accept: (metadata: Metadata) => boolean, sample = 2048): number {
    if (this.records.size === 0) return 0;
    const stride = Math.max(1, Math.floor(this.records.size / sample));
    let judged = 0;
    let passed = 0;
    let i = 0;
    for (const { metadata } of this.records.values()) {
      if (i++ % stride !== 0) continue;
      judged += 1;
      if (accept(metadata)) passed += 1;
    }
    return passed / judged;
  }

  /** The record as of the last catch-up, when the index holds its document. */
  record(id: string): StoredRecord | undefined {
    const record = this.records.get(id);
    return record?.document !== undefined ? record : undefined;
  }

  private touchSession(metadata: Metadata) {
    if (typeof metadata.session_id === "string") this.sortedSessions.delete(metadata.session_id);
  }

  /** The records just before and after `id` in its session. */
  private neighbours(id: string): string[] {
    const session = this.records.get(id)?.metadata.session_id;
    if (typeof session !== "string") return [];
    let ids = this.sortedSessions.get(session);
    if (!ids) {
      const at = (x: string) => Number(this.records.get(x)?.metadata.valid_from ?? 0);
      ids = [...(this.byKey.get(keyOf("session_id", session)) ?? NONE)].sort((a, b) => at(a) - at(b) || (a < b ? -1 : 1));
      ids.forEach((x, i) => this.positions.set(x, i));
      this.sortedSessions.set(session, ids);
    }
    const i = this.positions.get(id);
    if (i === undefined) return [];
    const out: string[] = [];
    if (i > 0) out.push(ids[i - 1]!);
    if (i + 1 < ids.length) out.push(ids[i + 1]!);
    return out;
  }

  /** The best `limit` records that `accept` lets through; `among`, when given, lists every such record. */
  query(text: string, limit: number, accept: (metadata: Metadata) => boolean, among?: readonly string[]): LexicalHit[] {
    const asked = terms(text).length;
    if (asked === 0) return [];
    // Turn context can lift a record by at most `neighbourShare` of the best score, so records below the
    // first `CONTEXT_POOL` cannot reach the top `limit` through it in any realistic ranking.
    const pool = this.neighbourShare > 0 ? Math.max(limit, CONTEXT_POOL) : limit;
    const found = among
      ? this.bm25.searchAmong(text, pool, among)
      : this.bm25.search(text, pool, (id) => {
          const metadata = this.records.get(id)?.metadata;
          return metadata !== undefined && accept(metadata);
        });
    const hits = found.map((h) => ({ id: h.id, score: h.score, coverage: Math.min(1, h.matchedTerms / asked) }));
    if (this.neighbourShare > 0) return this.withContext(hits, limit, accept);
    return hits;
  }

  /**
   * Each hit, and each neighbour of a hit, scored with a share of its best neighbour's score; the best `limit`.
   * The hits passed `accept` already. At least `limit` hits score their own score or more, so a candidate that
   * cannot rise above the `limit`-th own score even with the best hit beside it is dropped unexamined.
   */
  private withContext(hits: LexicalHit[], limit: number, accept: (metadata: Metadata) => boolean): LexicalHit[] {
    if (hits.length === 0) return hits;
    const share = this.neighbourShare;
    const own = new Map(hits.map((h) => [h.id, h]));
    const lift = share * hits[0]!.score;
    const floor = hits.length >= limit ? hits[limit - 1]!.score : 0;
    const bestNeighbour = (id: string) => {
      let best = 0;
      for (const n of this.neighbours(id)) best = Math.max(best, own.get(n)?.score ?? 0);
      return best;
    };
    const out: LexicalHit[] = [];
    for (const hit of hits) {
      if (hit.score + lift < floor) break; // hits come best first
      out.push({ id: hit.id, score: hit.score + share * bestNeighbour(hit.id), coverage: hit.coverage });
    }
    if (lift >= floor) {
      const seen = new Set<string>();
      for (const hit of hits) {
        for (const id of this.neighbours(hit.id)) {
          if (own.has(id) || seen.has(id)) continue;
          seen.add(id);
          const metadata = this.records.get(id)?.metadata;
          if (metadata && accept(metadata)) out.push({ id, score: share * bestNeighbour(id), coverage: 0 });
        }
      }
    }
    return out.sort((a, b) => b.score - a.score).slice(0, limit);
  }
}
