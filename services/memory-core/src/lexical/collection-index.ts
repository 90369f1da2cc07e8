import type { Metadata, StoredRecord } from "../store/chroma-store.js";
import { matches, type Condition } from "../retrieval/filters.js";
import type { RankingHandle } from "./ranking-host.js";
import type { LexicalHit } from "./ranking.js";

export type { LexicalHit } from "./ranking.js";

const NONE: ReadonlySet<string> = new Set();

const keyOf = (field: string, value: unknown) => `${field}\u0000${String(value)}`;

/**
 * Bulky metadata (hashes, keys, JSON lists, a summary's text) that no query filters on: left out of what the
 * ranking thread is sent of each record, where a copy would cost more than the rest of its metadata together.
 * Scalars stay, so a filter added later on any of them works on both retrievers.
 */
const UNFILTERED = new Set([
  "payload_sha256",
  "idempotency_key",
  "write_id",
  "tags",
  "refs",
  "checks",
  "supersedes",
  "title",
  "summary",
  "agents",
  "decisions",
  "open_questions",
  "next_steps",
]);

export interface LexicalDocument {
  id: string;
  fields: Record<string, string>;
  metadata: Metadata;
  /** The record's stored document, kept so a ranked page need not be fetched from Chroma again. */
  document?: string;
}

/**
 * One collection of one workspace, searchable by words: each record's metadata and document here, its BM25
 * ranking on the ranking thread (lexical-rankers.ts). It holds nothing that Chroma does not: it is built from
 * Chroma and kept current from the workspace's change feed (see lexical-catalog.ts).
 */
export class CollectionIndex {
  /** What the index was last given of each record: its metadata, and its document when the catalog had it. */
  private readonly records = new Map<string, StoredRecord>();
  /** Per value of each key field (`keyOf(field, value)`), the records holding it. */
  private readonly byKey = new Map<string, Set<string>>();

  /**
   * `keyFields`: metadata fields that queries filter on by equality (agent, session); the index keeps the
   * records of each value, so such a filter costs what its records do, not a pass over every record.
   */
  constructor(
    private readonly ranker: RankingHandle,
    private readonly keyFields: readonly string[] = [],
  ) {}

  /** False once the ranking thread has lost this index's ranking: the catalog builds the index again. */
  get alive(): boolean {
    return this.ranker.alive;
  }

  get size(): number {
    return this.records.size;
  }

  put(document: LexicalDocument): void {
    const facts: Metadata = {};
    for (const [field, value] of Object.entries(document.metadata)) if (!UNFILTERED.has(field)) facts[field] = value;
    this.ranker.put({ id: document.id, fields: document.fields, facts });
    const previous = this.records.get(document.id);
    if (previous) this.unkey(document.id, previous.metadata);
    this.key(document.id, document.metadata);
    this.records.set(document.id, {
      id: document.id,
      metadata: document.metadata,
      ...(document.document !== undefined ? { document: document.document } : {}),
    });
  }

  remove(id: string): void {
    this.ranker.remove(id);
    const metadata = this.records.get(id)?.metadata;
    if (metadata) this.unkey(id, metadata);
    this.records.delete(id);
  }

  /** Gives the ranking thread's memory back; the index is not used after. */
  drop(): void {
    this.ranker.drop();
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

  /** The values a key field takes in the index's records (the agents of a workspace's turns, say). */
  values(field: string): string[] {
    if (!this.keyFields.includes(field)) throw new Error(`${field} is not a key field of this index`);
    const prefix = keyOf(field, "");
    return [...this.byKey.keys()].filter((key) => key.startsWith(prefix)).map((key) => key.slice(prefix.length));
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

  /**
   * The best `limit` records that meet the conditions, ranked on the ranking thread; scored among the filter's
   * records only when a key field tells which they are.
   */
  query(text: string, limit: number, conditions: Condition[]): Promise<LexicalHit[]> {
    const among = this.matching(conditions);
    return this.ranker.query({ text, limit, conditions, ...(among ? { among } : {}) });
  }
}
