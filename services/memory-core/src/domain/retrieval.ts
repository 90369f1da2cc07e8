import type { Embedder } from "../embeddings/embedder.js";
import { internal } from "../errors.js";
import type { ChromaStore, Metadata, Neighbour, StoredRecord, Where } from "../store/chroma-store.js";
import { atLeast, hitConfidence, semanticFloor } from "./confidence.js";
import { matches, toWhere, type Condition } from "./filters.js";
import { reciprocalRankFusion, type Retriever } from "./fusion.js";
import type { LexicalCatalog, SearchableCollection } from "./lexical-catalog.js";
import type { LexicalIndex } from "./lexical-index.js";
import type { RetrievalTuning } from "./retrieval-tuning.js";
import type { Confidence } from "./types.js";

export type SearchMode = "hybrid" | "semantic" | "lexical";

export interface SearchRequest {
  query: string;
  limit: number;
  mode: SearchMode;
  minConfidence: Confidence;
  conditions: Condition[];
}

export interface RankedRecord {
  record: StoredRecord;
  score: number;
  confidence: Confidence;
  matched_by: Retriever[];
}

/** In hybrid mode the lexical side contributes this many candidates per asked hit (and at least MIN_DEPTH) to the fusion. */
const DEPTH_PER_HIT = 4;
const MIN_DEPTH = 40;
/**
 * Fewer from the dense side: at weight 0.1 even its first candidate adds less to a fused score (0.1/61) than
 * the 40th lexical one (1/100), so dense depth matters where the lexical list runs short and as a second vote;
 * each dense candidate costs Chroma ~0.2 ms. LoCoMo decided the value (docs/benchmarks.md).
 */
const DENSE_DEPTH_PER_HIT = 2;
const MIN_DENSE_DEPTH = 20;

/** Conditions that at least this share of records pass are applied here to an unfiltered over-fetch. */
const WIDE_SHARE = 0.25;

/**
 * When at most this many records (and this share of them) pass a filter, the dense side ranks them itself: at
 * 100k records, fetching 220 vectors by id costs about 11 ms and 1000 about 40, where Chroma's filter on one
 * session or agent costs 60–80 ms, growing with the collection.
 */
const EXACT_LIMIT = 1000;
const EXACT_SHARE = 1 / 50;

/** Conditions that only corrected or future-dated records fail: validity at an instant. */
const NEARLY_ALL_PASS = new Set(["valid_until", "valid_from"]);

/**
 * Hybrid retrieval: dense (Chroma, cosine) and lexical (BM25 over the same records) candidates, fused by
 * reciprocal rank, each retriever seeing the same filters; then confidence per hit.
 */
export class HybridRetrieval {
  constructor(
    private readonly store: ChromaStore,
    private readonly embedder: Embedder,
    private readonly lexical: LexicalCatalog,
    private readonly tuning: Pick<RetrievalTuning, "fusion" | "semanticGate">,
  ) {}

  async search(workspace: string, collection: SearchableCollection, request: SearchRequest): Promise<RankedRecord[]> {
    // One retriever alone needs no candidates beyond the page; fusion does.
    const hybrid = request.mode === "hybrid";
    const lexicalDepth = hybrid ? Math.max(MIN_DEPTH, request.limit * DEPTH_PER_HIT) : request.limit;
    const denseDepth = hybrid ? Math.max(MIN_DENSE_DEPTH, request.limit * DENSE_DEPTH_PER_HIT) : request.limit;
    // Caught up with every write acknowledged before this query, the lexical index is also where the dense
    // side's records come from: Chroma sends only ids and distances. Lexical scoring holds the thread, so it
    // starts once the dense side has its Chroma query under way, and overlaps it.
    const accept = (metadata: Metadata) => matches(metadata, request.conditions);
    const denseAsked = deferred();
    const densePending =
      request.mode === "lexical"
        ? Promise.resolve([])
        : this.dense(workspace, collection, request, denseDepth, () => indexReady, denseAsked.resolve).finally(denseAsked.resolve);
    if (request.mode === "lexical") denseAsked.resolve();
    const lexicalPending = this.lexical.read(
      workspace,
      collection,
      (index) => (request.mode === "semantic" ? [] : index.query(request.query, lexicalDepth, accept, index.matching(request.conditions))),
      { notBefore: denseAsked.promise },
    );
    const indexReady = lexicalPending.then(({ index }) => index);
    indexReady.catch(() => undefined); // its failure is lexicalPending's, reported below
    const [dense, { value: lexical }] = await Promise.all([densePending, lexicalPending]);
    const floor = semanticFloor(this.embedder.model, this.tuning.semanticGate);
    const denseRanked = request.mode === "semantic" ? dense : dense.filter((d) => 1 - d.distance >= floor);
    const fused = reciprocalRankFusion(
      [
        { retriever: "semantic", ids: denseRanked.map((d) => d.record.id), weight: this.tuning.fusion.semantic },
        { retriever: "lexical", ids: lexical.map((l) => l.id), weight: this.tuning.fusion.lexical },
      ],
      this.tuning.fusion.k,
    );
    const similarity = new Map(dense.map((d) => [d.record.id, 1 - d.distance]));
    const coverage = new Map(lexical.map((l) => [l.id, l.coverage]));
    const ranked = fused
      .map((f) => ({
        fused: f,
        confidence: hitConfidence(
          {
            matchedBy: f.matchedBy,
            ...(similarity.has(f.id) ? { similarity: similarity.get(f.id)! } : {}),
            ...(coverage.has(f.id) ? { coverage: coverage.get(f.id)! } : {}),
          },
          this.embedder.model,
        ),
      }))
      .filter((r) => atLeast(r.confidence, request.minConfidence))
      .slice(0, request.limit);

    const index = await indexReady;
    const records = new Map<string, StoredRecord>(dense.map((d) => [d.record.id, d.record]));
    return ranked.flatMap(({ fused, confidence }) => {
      const record = records.get(fused.id) ?? index.record(fused.id);
      return record ? [{ record, score: round(fused.score), confidence, matched_by: [...fused.matchedBy].sort() }] : [];
    });
  }

  /**
   * The `depth` nearest records that meet the request's conditions, with their documents. Calls `asked` once
   * its Chroma query is under way, and always before it waits on the index (whose reading waits on `asked`).
   */
  private async dense(
    workspace: string,
    collection: SearchableCollection,
    request: SearchRequest,
    depth: number,
    indexReady: () => Promise<LexicalIndex>,
    asked: () => void,
  ): Promise<DenseHit[]> {
    const [embedding] = await this.embedder.embed([request.query]);
    if (!embedding) throw internal();
    const store = await this.store.collection(workspace, collection);
    const query = (options: { n: number; where?: Where }) => {
      const pending = store.query({ embedding, ...options });
      asked();
      return pending;
    };
    const resolve = async (neighbours: Neighbour[]): Promise<DenseHit[]> => {
      const index = await indexReady();
      const known = new Map<string, StoredRecord>();
      for (const { id } of neighbours) {
        const record = index.record(id);
        if (record) known.set(id, record);
      }
      // Written after the catch-up looked at the change feed: Chroma has them, the index not yet.
      const unknown = neighbours.filter((n) => !known.has(n.id)).map((n) => n.id);
      for (const record of await store.get({ ids: unknown, withDocuments: true })) known.set(record.id, record);
      return neighbours.flatMap(({ id, distance }) => {
        const record = known.get(id);
        return record && matches(record.metadata, request.conditions) ? [{ record, distance }] : [];
      });
    };
    if (request.conditions.length === 0) return resolve(await query({ n: depth }));
    // Chroma's filtered query costs in proportion to the records each clause matches (at 100k records, about
    // 450 ms for a clause nearly all match, such as validity, and 60–80 ms for one agent or session), while an
    // unfiltered query costs a few ms. So ask Chroma for more, unfiltered, and filter here, whenever enough
    // records pass; let it filter on the selective clauses only otherwise. Exact whenever enough survive;
    // Chroma applies every condition itself only when they do not.
    const overFetch = async (first: number) => {
      for (const n of [first, first * 4 + 10]) {
        const nearest = await query({ n });
        const kept = await resolve(nearest);
        if (kept.length >= depth || nearest.length < n) return kept.slice(0, depth);
      }
      return undefined;
    };
    const margin = Math.max(2, Math.ceil(depth / 10));
    const selective = request.conditions.filter((c) => !NEARLY_ALL_PASS.has(c.field));
    if (selective.length === 0) {
      const kept = await overFetch(depth + margin);
      if (kept) return kept;
    } else {
      // The lexical index holds every record's metadata: it tells how many pass. As it stands is close enough
      // for choosing how to ask, and does not wait for the lexical side's catch-up.
      const standing = await this.lexical.standing(workspace, collection);
      const passing = standing.matching(request.conditions);
      const share = passing ? passing.length / Math.max(1, standing.size) : standing.share((metadata) => matches(metadata, request.conditions));
      if (share >= WIDE_SHARE) {
        const kept = await overFetch(Math.ceil((depth * 1.2) / share) + margin);
        if (kept) return kept;
      } else if (passing && passing.length <= Math.min(EXACT_LIMIT, standing.size * EXACT_SHARE)) {
        // So few pass that comparing the query with each of their vectors here (fetched by id) costs less than
        // Chroma's filtering, and is exact. Which records pass is read-your-writes: from the caught-up index.
        asked();
        const caughtUp = (await indexReady()).matching(request.conditions) ?? [];
        const vectors = await store.get({ ids: caughtUp, withEmbeddings: true });
        const nearest = vectors
          .flatMap((r) => (r.embedding ? [{ id: r.id, distance: cosineDistance(embedding, r.embedding) }] : []))
          .sort((a, b) => a.distance - b.distance)
          .slice(0, depth);
        return (await resolve(nearest)).slice(0, depth);
      } else {
        const n = depth + margin;
        const nearest = await query({ n, where: toWhere(selective)! });
        const kept = await resolve(nearest);
        if (kept.length >= depth || nearest.length < n) return kept.slice(0, depth);
      }
    }
    const where = toWhere(request.conditions);
    return resolve(await query({ n: depth, ...(where ? { where } : {}) }));
  }
}

interface DenseHit {
  record: StoredRecord;
  /** Cosine distance: 0 identical, 2 opposite. */
  distance: number;
}

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
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

const round = (n: number) => Math.round(n * 1e6) / 1e6;
