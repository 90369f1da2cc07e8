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

/** A hit while the index ranks it. */
interface HeldHit {
  held: Held;
  score: number;
  coverage: number;
}

export interface LexicalDocument {
  id: string;
  fields: Record<string, string>;
  metadata: Metadata;
  /** The record's stored document, kept so a ranked page need not be fetched from Chroma again. */
  document?: string;
}

/** A record as the index holds it; its BM25 hits carry it, so filters and turn context need no lookup by id. */
interface Held {
  record: StoredRecord;
  /** Its place in its session's sorted list, while that list is kept (see `sortedSessions`). */
  position: number;
}

/**
 * BM25+ (bm25-index.ts) over one collection of one workspace. It holds nothing that Chroma does not:
 * it is built from Chroma and kept current from the workspace's change feed (see lexical-catalog.ts).
 */
export class LexicalIndex {
  private readonly bm25: Bm25Index<Held>;
  /** What the index was last given of each record: its metadata, and its document when the catalog had it. */
  private readonly records = new Map<string, Held>();
  /** Per value of each key field (`keyOf(field, value)`), the records holding it. */
  private readonly byKey = new Map<string, Set<string>>();
  private readonly keyFields: readonly string[];
  /**
   * Per session, its records in order (by `valid_from`, then id), sorted from `byKey` when turn context first
   * needs it and dropped when the session changes; each record keeps its place in the list.
   */
  private readonly sortedSessions = new Map<string, Held[]>();

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
    const held: Held = {
      record: {
        id: document.id,
        metadata: document.metadata,
        ...(document.document !== undefined ? { document: document.document } : {}),
      },
      position: -1,
    };
    this.bm25.put(document.id, document.fields, held);
    const previous = this.records.get(document.id);
    if (previous) {
      this.unkey(document.id, previous.record.metadata);
      this.touchSession(previous.record.metadata);
    }
    this.key(document.id, document.metadata);
    this.records.set(document.id, held);
    this.touchSession(document.metadata);
  }

  remove(id: string): void {
    this.bm25.remove(id);
    const metadata = this.records.get(id)?.record.metadata;
    if (metadata) this.unkey(id, metadata);
    this.records.delete(id);
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
      const metadata = this.records.get(id)?.record.metadata;
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
    for (const { record } of this.records.values()) {
      if (i++ % stride !== 0) continue;
      judged += 1;
      if (accept(record.metadata)) passed += 1;
    }
    return passed / judged;
  }

  /** The record as of the last catch-up, when the index holds its document. */
  record(id: string): StoredRecord | undefined {
    const record = this.records.get(id)?.record;
    return record?.document !== undefined ? record : undefined;
  }

  private touchSession(metadata: Metadata) {
    if (typeof metadata.session_id === "string") this.sortedSessions.delete(metadata.session_id);
  }

  /** The records just before and after this one in its session. */
  private neighbours(held: Held): Held[] {
    const session = held.record.metadata.session_id;
    if (typeof session !== "string") return [];
    let list = this.sortedSessions.get(session);
    if (!list) {
      list = [...(this.byKey.get(keyOf("session_id", session)) ?? NONE)].map((id) => this.records.get(id)!);
      const at = (h: Held) => Number(h.record.metadata.valid_from ?? 0);
      list.sort((a, b) => at(a) - at(b) || (a.record.id < b.record.id ? -1 : 1));
      list.forEach((h, i) => (h.position = i));
      this.sortedSessions.set(session, list);
    }
    const i = held.position;
    const out: Held[] = [];
    if (i > 0) out.push(list[i - 1]!);
    if (i + 1 < list.length) out.push(list[i + 1]!);
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
      : this.bm25.search(text, pool, (held) => accept(held.record.metadata));
    const hits = found.map((h) => ({ held: h.item, score: h.score, coverage: Math.min(1, h.matchedTerms / asked) }));
    const ranked = this.neighbourShare > 0 ? this.withContext(hits, limit, accept) : hits;
    return ranked.map((h) => ({ id: h.held.record.id, score: h.score, coverage: h.coverage }));
  }

  /**
   * Each hit, and each neighbour of a hit, scored with a share of its best neighbour's score; the best `limit`.
   * The hits passed `accept` already. At least `limit` hits score their own score or more, so a candidate that
   * cannot rise above the `limit`-th own score even with the best hit beside it is dropped unexamined.
   */
  private withContext(hits: HeldHit[], limit: number, accept: (metadata: Metadata) => boolean): HeldHit[] {
    if (hits.length === 0) return hits;
    const share = this.neighbourShare;
    const own = new Map(hits.map((h) => [h.held, h.score]));
    const lift = share * hits[0]!.score;
    const floor = hits.length >= limit ? hits[limit - 1]!.score : 0;
    const bestNeighbour = (held: Held) => {
      let best = 0;
      for (const n of this.neighbours(held)) best = Math.max(best, own.get(n) ?? 0);
      return best;
    };
    const out: HeldHit[] = [];
    for (const hit of hits) {
      if (hit.score + lift < floor) break; // hits come best first
      out.push({ held: hit.held, score: hit.score + share * bestNeighbour(hit.held), coverage: hit.coverage });
    }
    if (lift >= floor) {
      const seen = new Set<Held>();
      for (const hit of hits) {
        for (const held of this.neighbours(hit.held)) {
          if (own.has(held) || seen.has(held)) continue;
          seen.add(held);
          if (accept(held.record.metadata)) out.push({ held, score: share * bestNeighbour(held), coverage: 0 });
        }
      }
    }
    return out.sort((a, b) => b.score - a.score).slice(0, limit);
  }
}
