import type { Embedder } from "../embeddings/embedder.js";
import { internal } from "../errors.js";
import { matches, type Condition } from "../records/filters.js";
import type { IndexedCollections, IndexedRecord, Nearest } from "../records/indexed-collections.js";
import type { LexicalIndexes, SearchableCollection } from "../lexical/indexes.js";
import type { CollectionIndex } from "../lexical/collection-index.js";

/**
 * A filter is applied here to an unfiltered over-fetch when enough records pass that this many neighbours
 * should hold the page: bare neighbours are cheap next to Chroma's own filter on one agent (docs/benchmarks.md,
 * "memory-core latency": "ids-only dense side, records from the lexical index, filter planning").
 */
const OVER_FETCH_LIMIT = 1000;

/**
 * When at most this many records (and this share of them) pass a filter, the dense side ranks them itself:
 * fetching that many vectors by id costs less than Chroma's filter on one session or agent, which grows with
 * the collection (docs/benchmarks.md, "memory-core latency": "filter planning").
 */
const EXACT_LIMIT = 1000;
const EXACT_SHARE = 1 / 50;

/** Conditions that only corrected or future-dated records fail: validity at an instant. */
const NEARLY_ALL_PASS = new Set(["valid_until", "valid_from"]);

export interface DenseHit {
  /** Whole when fetched from Chroma; else (no `document`) the lexical index's filterable metadata only. */
  record: IndexedRecord;
  /** Cosine distance: 0 identical, 2 opposite. */
  distance: number;
}

/**
 * The dense side of hybrid retrieval: the records nearest to the query's embedding in Chroma that meet its
 * conditions. Chroma sends ids and distances; the conditions are judged on the caught-up lexical index's
 * metadata, and the caller fetches the records it keeps (CollectionIndex.records).
 */
export class DenseRetrieval {
  constructor(
    private readonly collections: IndexedCollections,
    private readonly embedder: Embedder,
    private readonly lexical: LexicalIndexes,
  ) {}

  /** The query's embedding: what `nearest` looks near. */
  async embedQuery(query: string): Promise<number[]> {
    const [embedding] = await this.embedder.embed([query]);
    if (!embedding) throw internal();
    return embedding;
  }

  /**
   * The `depth` nearest records to the query (its text embedded, or a vector given) that meet the request's
   * conditions: those the lexical index holds with its metadata only, the others (written since its catch-up) whole.
   */
  async nearest(
    workspace: string,
    collection: SearchableCollection,
    request: ({ query: string } | { embedding: number[] }) & { conditions: readonly Condition[] },
    depth: number,
    indexReady: () => Promise<CollectionIndex>,
  ): Promise<DenseHit[]> {
    const embedding = "embedding" in request ? request.embedding : await this.embedQuery(request.query);
    const query = (n: number, conditions: readonly Condition[] = []) =>
      this.collections.nearest(workspace, collection, embedding, n, conditions);
    const resolve = async (neighbours: Nearest[]): Promise<DenseHit[]> => {
      const index = await indexReady();
      const known = new Map<string, IndexedRecord>();
      for (const { id } of neighbours) {
        const facts = index.metadata(id);
        if (facts) known.set(id, { id, facts });
      }
      // Written after the catch-up looked at the change feed: Chroma has them, the index not yet.
      const unknown = neighbours.filter((n) => !known.has(n.id)).map((n) => n.id);
      for (const record of await this.collections.byIds(workspace, collection, unknown)) known.set(record.id, record);
      return neighbours.flatMap(({ id, distance }) => {
        const record = known.get(id);
        return record && matches(record.facts, request.conditions) ? [{ record, distance }] : [];
      });
    };
    if (request.conditions.length === 0) return resolve(await query(depth));
    // The page, when `n` neighbours (filtered by `conditions`) leave enough once filtered here, or hold them all.
    const attempt = async (n: number, conditions: readonly Condition[] = []) => {
      const nearest = await query(n, conditions);
      const kept = await resolve(nearest);
      return kept.length >= depth || nearest.length < n ? kept.slice(0, depth) : undefined;
    };
    const overFetch = async (first: number) => (await attempt(first)) ?? (await attempt(first * 4 + 10));
    // Chroma's filtered query costs in proportion to the records each clause matches (a clause nearly all match,
    // such as validity, costs the most), while an unfiltered query is cheap (docs/benchmarks.md, "memory-core
    // latency": "filter planning"). So ask Chroma for more, unfiltered, and filter here, whenever enough
    // records pass; rank a few records' vectors here; let Chroma filter on the selective clauses only
    // otherwise. Exact whenever enough survive; Chroma applies every condition itself only when they do not.
    const margin = Math.max(2, Math.ceil(depth / 10));
    const selective = request.conditions.filter((c) => !NEARLY_ALL_PASS.has(c.field));
    // Chroma cannot judge a citation: a query it filters would still be filtered here, at the cost of its filter on
    // validity. Past the over-fetch's reach, the nearest OVER_FETCH_LIMIT records that pass are the dense side's
    // candidates (the lexical side ranks every citing record).
    const citing = request.conditions.some((c) => c.op === "cites");
    const nearestPassing = async () => (await resolve(await query(OVER_FETCH_LIMIT))).slice(0, depth);
    if (selective.length === 0) {
      const kept = await overFetch(depth + margin);
      if (kept) return kept;
    } else {
      // The lexical index holds every record's metadata: it tells how many pass. As it stands is close enough
      // for choosing how to ask, and does not wait for the lexical side's catch-up.
      const standing = await this.lexical.snapshot(workspace, collection, "as-is");
      const passing = standing.matching(request.conditions);
      const share = passing
        ? passing.length / Math.max(1, standing.size)
        : standing.estimateShare((metadata) => matches(metadata, request.conditions));
      // Enough neighbours that, at this share, they hold the page one and a half times over.
      const first = share > 0 ? Math.ceil((depth * 1.5) / share) + margin : Number.POSITIVE_INFINITY;
      const few = passing && passing.length <= (citing ? EXACT_LIMIT : Math.min(EXACT_LIMIT, standing.size * EXACT_SHARE));
      if (few) {
        // So few pass that comparing the query with each of their vectors here (fetched by id) costs less than
        // Chroma's filtering (which cannot judge a citation at all), and is exact. Which records pass is
        // read-your-writes: from the caught-up index.
        const caughtUp = (await indexReady()).matching(request.conditions) ?? [];
        const vectors = await this.collections.byIds(workspace, collection, caughtUp, { withText: false, withEmbeddings: true });
        const nearest = vectors
          .flatMap((r) => (r.embedding ? [{ id: r.id, distance: cosineDistance(embedding, r.embedding) }] : []))
          .sort((a, b) => a.distance - b.distance)
          .slice(0, depth);
        return (await resolve(nearest)).slice(0, depth);
      }
      if (first <= OVER_FETCH_LIMIT) {
        const kept = await overFetch(first);
        if (kept) return kept;
      } else if (citing) {
        return nearestPassing();
      } else {
        const kept = await attempt(depth + margin, selective);
        if (kept) return kept;
      }
    }
    return citing ? nearestPassing() : resolve(await query(depth, request.conditions));
  }
}

/** Cosine distance as Chroma reports it for a collection in cosine space: 1 − cos(a, b). */
function cosineDistance(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    aa += a[i]! * a[i]!;
    bb += b[i]! * b[i]!;
  }
  return aa === 0 || bb === 0 ? 1 : 1 - dot / Math.sqrt(aa * bb);
}
