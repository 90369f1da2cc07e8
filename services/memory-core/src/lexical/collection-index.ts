import type { Facts } from "../records/filters.js";
import { turnOfIndexed, type IndexedRecord } from "../records/indexed-collections.js";
import { holds, type Condition } from "../records/filters.js";
import { citationKeys, lookupKeys } from "@cairn/openapi/code-paths";
import { CITED_PATHS_FIELD, citedPathsOf, joinCited, splitCited } from "../records/code-citations.js";
import { parseList } from "../records/stored-turn.js";
import { FactTable } from "./fact-table.js";
import type { RankingHandle } from "./ranking-host.js";
import type { AnalyzedDocument, LexicalHit } from "./ranking.js";
import type { SnapshotStretch } from "./snapshot.js";
import type { StoredTurn } from "../records/stored-turn.js";
import { oldestFirst, type Position } from "../records/cursor.js";

export type { LexicalHit } from "./ranking.js";

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
  "code",
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
  metadata: Facts;
}

/** The records of one value of a key field, by number; numbers of records since removed or replaced go lazily. */
interface KeyRun {
  numbers: Uint32Array;
  length: number;
  live: number;
}

/**
 * One collection of one workspace, searchable by words: each record's filterable metadata here, its BM25
 * ranking on the ranking thread (ranking-host.ts). It holds nothing that Chroma does not: it is built from
 * Chroma and kept current from the workspace's change feed (see indexes.ts). Documents and bulky metadata stay
 * in Chroma: what a caller needs of whole records (`records`) is fetched by id, a page at a time.
 */
export class CollectionIndex {
  /** By id, each record's number; by number, its id (undefined once removed: numbers are not reused). */
  private readonly numbers = new Map<string, number>();
  private readonly ids: Array<string | undefined> = [];
  /** What queries filter on of each record: its metadata but UNFILTERED. */
  private readonly facts = new FactTable();
  /** Per value of each key field (`keyOf(field, value)`), the records holding it. */
  private readonly byKey = new Map<string, KeyRun>();
  /** Per citation key (code-citations.ts: a path cited, a folder holding one), the records citing it. */
  private readonly byCitation = new Map<string, KeyRun>();

  /**
   * `keyFields`: metadata fields that queries filter on by equality (agent, session); the index keeps the
   * records of each value, so such a filter costs what its records do, not a pass over every record.
   * `fetch`: whole records from Chroma by id.
   */
  constructor(
    private readonly ranker: RankingHandle,
    private readonly keyFields: readonly string[] = [],
    private readonly fetch: (ids: readonly string[]) => Promise<IndexedRecord[]> = () => Promise.resolve([]),
  ) {}

  /** False once the ranking thread has lost this index's ranking: the catalog builds the index again. */
  get alive(): boolean {
    return this.ranker.alive;
  }

  get size(): number {
    return this.numbers.size;
  }

  put(document: LexicalDocument): void {
    const facts: Facts = {};
    for (const [field, value] of Object.entries(document.metadata)) if (!UNFILTERED.has(field)) facts[field] = value;
    // A turn stored before turns kept their cited paths cites the paths among its refs all the same.
    if (facts[CITED_PATHS_FIELD] === undefined && typeof document.metadata.refs === "string") {
      const cited = citedPathsOf(undefined, parseList<string>(document.metadata.refs));
      if (cited.length > 0) facts[CITED_PATHS_FIELD] = joinCited(cited);
    }
    this.ranker.put({ id: document.id, fields: document.fields, facts });
    this.keep(document.id, facts);
  }

  /** `put` of a record as a snapshot holds it (`dump`): analysed, with its filterable metadata only. */
  putAnalyzed(document: AnalyzedDocument): void {
    this.ranker.put(document);
    this.keep(document.id, document.facts);
  }

  private keep(id: string, facts: Facts): void {
    this.forget(id);
    const n = this.ids.length;
    this.ids.push(id);
    this.numbers.set(id, n);
    this.facts.set(n, facts);
    this.key(n, facts);
  }

  /** A stretch of the records as a snapshot's lines, which `putAnalyzed` takes back once read (RankingHandle.dump). */
  dump(from: number, limit: number): Promise<SnapshotStretch> {
    return this.ranker.dump(from, limit);
  }

  remove(id: string): void {
    this.ranker.remove(id);
    this.forget(id);
  }

  private forget(id: string): void {
    const n = this.numbers.get(id);
    if (n === undefined) return;
    this.unkey(n);
    this.facts.clear(n);
    this.numbers.delete(id);
    this.ids[n] = undefined;
  }

  /** Gives the ranking thread's memory back; the index is not used after. */
  drop(): void {
    this.ranker.drop();
  }

  private key(n: number, facts: Facts) {
    for (const field of this.keyFields) {
      const value = facts[field];
      if (value !== undefined) addTo(this.byKey, keyOf(field, value), n);
    }
    for (const key of citationKeysOf(facts[CITED_PATHS_FIELD])) addTo(this.byCitation, key, n);
  }

  private unkey(n: number) {
    for (const field of this.keyFields) {
      const value = this.facts.get(n, field);
      if (value !== undefined) takeFrom(this.byKey, keyOf(field, value));
    }
    for (const key of citationKeysOf(this.facts.get(n, CITED_PATHS_FIELD))) takeFrom(this.byCitation, key);
  }

  /** The live records of a run, dropping the rest from it once they are most of it. */
  private members(run: KeyRun): number[] {
    const out: number[] = [];
    for (let i = 0; i < run.length; i++) {
      const n = run.numbers[i]!;
      if (this.ids[n] !== undefined) out.push(n);
    }
    if (run.length > 2 * out.length + 16) {
      run.numbers = Uint32Array.from(out);
      run.length = out.length;
    }
    return out;
  }

  /** The values a key field takes in the index's records (the agents of a workspace's turns, say). */
  values(field: string): string[] {
    if (!this.keyFields.includes(field)) throw new Error(`${field} is not a key field of this index`);
    const prefix = keyOf(field, "");
    return [...this.byKey.keys()].filter((key) => key.startsWith(prefix)).map((key) => key.slice(prefix.length));
  }

  /**
   * The records that meet every condition, when one of them is an equality on a key field or a citation (found
   * from the records of that value or of those paths, the fewest); undefined when none is, and only a pass over
   * every record could tell.
   */
  matching(conditions: readonly Condition[]): string[] | undefined {
    const found = this.candidates(conditions);
    if (found === undefined) return undefined;
    // The condition the candidates came from holds for each of them already.
    const readers = conditions.filter((c) => c !== found.from).map((c) => ({ condition: c, read: this.facts.reader(c.field) }));
    return found.numbers.filter((n) => readers.every(({ condition, read }) => holds(read(n), condition))).map((n) => this.ids[n]!);
  }

  /**
   * The live records of the most selective key or citation condition, and that condition (`from`, when the
   * records are exactly those it lets through); undefined when there is none.
   */
  private candidates(conditions: readonly Condition[]): { numbers: number[]; from?: Condition } | undefined {
    let fewest: KeyRun | undefined;
    let cited: { numbers: number[]; from: Condition } | undefined;
    let any = false;
    for (const c of conditions) {
      if (c.op === "cites") {
        any = true;
        const numbers = new Set<number>();
        for (const asked of c.paths) {
          for (const key of lookupKeys(asked)) {
            const run = this.byCitation.get(key);
            if (run) for (const n of this.members(run)) numbers.add(n);
          }
        }
        if (cited === undefined || numbers.size < cited.numbers.length) cited = { numbers: [...numbers], from: c };
        continue;
      }
      if (c.op !== "eq" || !this.keyFields.includes(c.field)) continue;
      any = true;
      const run = this.byKey.get(keyOf(c.field, c.value));
      if (!run) return { numbers: [] };
      if (!fewest || run.live < fewest.live) fewest = run;
    }
    if (!any) return undefined;
    if (cited !== undefined && (fewest === undefined || cited.numbers.length <= fewest.live)) return cited;
    return { numbers: this.members(fewest!) };
  }

  /**
   * The ids of the records that meet the conditions, newest first, at most `limit`; undefined when no condition
   * tells which records they are (see `matching`). Newest by when what they tell happened (`valid_from`: a
   * commit's time for imported history, whose turns share the instant they were stored), then by when they were
   * stored.
   */
  newest(conditions: readonly Condition[], limit: number): string[] | undefined {
    const ids = this.matching(conditions);
    if (ids === undefined) return undefined;
    const number = (n: number, field: string) => {
      const value = this.facts.get(n, field);
      return typeof value === "number" ? value : 0;
    };
    return ids
      .map((id) => {
        const n = this.numbers.get(id)!;
        return { id, happened: number(n, "valid_from"), stored: number(n, "recorded_at") };
      })
      .sort((a, b) => b.happened - a.happened || b.stored - a.stored || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .slice(0, limit)
      .map((r) => r.id);
  }

  /**
   * The records that meet the conditions (`matching`: one of them must be on a key field), oldest stored first
   * (`recorded_at`, then id, as `oldestFirst` orders a listing): how many there are in all, and the first
   * `limit` of them after `after` (`following`: how many come after it). What it holds beyond the matching ids
   * is the page, whatever their number.
   */
  oldestStored(
    conditions: readonly Condition[],
    limit: number,
    after?: Position,
  ): { total: number; following: number; ids: string[] } | undefined {
    const ids = this.matching(conditions);
    if (ids === undefined) return undefined;
    const stored = this.facts.reader("recorded_at");
    const positionOf = (id: string): Position => {
      const at = stored(this.numbers.get(id)!);
      return { at: typeof at === "number" ? at : 0, id };
    };
    const page: Position[] = [];
    let following = 0;
    for (const id of ids) {
      const position = positionOf(id);
      if (after && oldestFirst(after, position) >= 0) continue;
      following += 1;
      // Kept sorted and at most `limit` long: a record enters only ahead of the page's last.
      if (page.length === limit && (limit === 0 || oldestFirst(position, page[limit - 1]!) >= 0)) continue;
      let at = page.length;
      while (at > 0 && oldestFirst(position, page[at - 1]!) < 0) at -= 1;
      page.splice(at, 0, position);
      if (page.length > limit) page.pop();
    }
    return { total: ids.length, following, ids: page.map((p) => p.id) };
  }

  /** A record's filterable metadata (all but UNFILTERED) as of the last catch-up; undefined when not indexed. */
  metadata(id: string): Facts | undefined {
    const n = this.numbers.get(id);
    return n === undefined ? undefined : this.facts.metadata(n);
  }

  /**
   * About what share of records `accept` lets through: all of them judged when they are few, else an even
   * sample of about `sample` across the order they came in. For choosing how to ask, never for an answer.
   */
  estimateShare(accept: (metadata: Facts) => boolean, sample = 2048): number {
    if (this.numbers.size === 0) return 0;
    const stride = Math.max(1, Math.floor(this.numbers.size / sample));
    let judged = 0;
    let passed = 0;
    let i = 0;
    for (const n of this.numbers.values()) {
      if (i++ % stride !== 0) continue;
      judged += 1;
      if (accept(this.facts.metadata(n))) passed += 1;
    }
    return passed / judged;
  }

  /**
   * The turn of this id as the index holds it (an index of the turns collection): the fields filters read, and its
   * corrections and review; no text, and no lists or hashes (UNFILTERED), which `turns` reads from Chroma.
   */
  turn(id: string): StoredTurn | undefined {
    const facts = this.metadata(id);
    return facts ? turnOfIndexed({ id, facts }) : undefined;
  }

  /** The turns of these ids with their text, as `records` reads them (an index of the turns collection). */
  async turns(ids: readonly string[]): Promise<StoredTurn[]> {
    return (await this.records(ids)).map(turnOfIndexed);
  }

  /**
   * The whole records (documents and all metadata) of the given ids, in their order, from Chroma; those that
   * Chroma no longer holds are left out.
   */
  async records(ids: readonly string[]): Promise<IndexedRecord[]> {
    if (ids.length === 0) return [];
    const byId = new Map((await this.fetch([...new Set(ids)])).map((r) => [r.id, r]));
    return ids.flatMap((id) => {
      const record = byId.get(id);
      return record ? [record] : [];
    });
  }

  /** Resolves once the ranking thread has indexed every change made before the call, ready to query (RankingHandle.prepare). */
  ready(): Promise<void> {
    return this.ranker.prepare();
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

function addTo(runs: Map<string, KeyRun>, key: string, n: number): void {
  let run = runs.get(key);
  if (!run) {
    run = { numbers: new Uint32Array(4), length: 0, live: 0 };
    runs.set(key, run);
  }
  if (run.length === run.numbers.length) {
    const larger = new Uint32Array(run.length + (run.length >> 1) + 4);
    larger.set(run.numbers);
    run.numbers = larger;
  }
  run.numbers[run.length++] = n;
  run.live += 1;
}

function takeFrom(runs: Map<string, KeyRun>, key: string): void {
  const run = runs.get(key);
  if (!run) return;
  run.live -= 1;
  if (run.live === 0) runs.delete(key);
}

/** The citation keys of a record's cited paths (each once: two paths in one folder share its key). */
const citationKeysOf = (stored: unknown): Set<string> => new Set(splitCited(stored).flatMap(citationKeys));
