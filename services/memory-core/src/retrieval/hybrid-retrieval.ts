import type { Embedder } from "../embeddings/embedder.js";
import { atLeast, followingRank, hitConfidence, semanticFloor } from "./confidence.js";
import { DenseRetrieval } from "./dense-retrieval.js";
import type { Condition } from "../records/filters.js";
import { reciprocalRankFusion, withHead, type Retriever } from "./fusion.js";
import type { LexicalIndexes, SearchableCollection } from "../lexical/indexes.js";
import type { RetrievalTuning } from "./retrieval-tuning.js";
import { summaryOfIndexed, turnOfIndexed, type IndexedCollections, type IndexedRecord } from "../records/indexed-collections.js";
import type { StoredTurn } from "../records/stored-turn.js";
import type { Confidence, MemoryHit, Summary } from "../records/types.js";

export type SearchMode = "hybrid" | "semantic" | "lexical";

export interface SearchRequest {
  query: string;
  /** The query's embedding when the caller holds it (`embedQuery`): searches that share one text embed it once. */
  queryEmbedding?: number[];
  limit: number;
  mode: SearchMode;
  minConfidence: Confidence;
  conditions: Condition[];
  /** Each hit's evidence too (`RankedRecord.evidence`). */
  evidence?: boolean;
}

export interface RankedRecord {
  record: IndexedRecord;
  score: number;
  confidence: Confidence;
  matched_by: Retriever[];
  /**
   * What the hit's confidence rests on, when the request asked for it, to 2 decimals: its cosine similarity (when
   * the dense side found it) and the share of the query's information it holds (when the lexical side found it).
   */
  evidence?: { similarity?: number; share?: number };
}

/** How a hit ranked: its fused score, its confidence, and which retrievers found it. */
export type Rank = Omit<RankedRecord, "record">;

/** A turn found by the retrievers, or (`path`) by the code it cites. */
export type RankedTurn = Omit<Rank, "matched_by"> & { matched_by: MemoryHit["matched_by"]; turn: StoredTurn };
export type RankedSummary = Rank & { summary: Summary };

/** In hybrid mode the lexical side contributes this many candidates per asked hit (and at least MIN_DEPTH) to the fusion. */
const DEPTH_PER_HIT = 4;
const MIN_DEPTH = 40;
/**
 * Fewer from the dense side: only its nearest (per asked hit, above the gate) vote in the fusion, and the rest of
 * its candidates inform confidence only; each dense candidate costs Chroma time. LoCoMo decided the value
 * (docs/benchmarks.md).
 */
const DENSE_DEPTH_PER_HIT = 2;
const MIN_DENSE_DEPTH = 20;

/**
 * Hybrid retrieval: dense (Chroma, cosine) and lexical (BM25 over the same records) candidates, fused by
 * reciprocal rank, each retriever seeing the same filters; then confidence per hit.
 */
export class HybridRetrieval {
  private readonly denseSide: DenseRetrieval;

  constructor(
    private readonly collections: IndexedCollections,
    private readonly embedder: Embedder,
    private readonly lexical: LexicalIndexes,
    private readonly tuning: Pick<RetrievalTuning, "fusion" | "semanticGate" | "confidence">,
  ) {
    this.denseSide = new DenseRetrieval(collections, embedder, lexical);
  }

  /** Turns, best first. */
  async searchTurns(workspace: string, request: SearchRequest): Promise<RankedTurn[]> {
    return (await this.search(workspace, "turns", request)).map(({ record, ...rank }) => ({ ...rank, turn: turnOfIndexed(record) }));
  }

  /**
   * The turns that cite code paths (a `cites` condition among the conditions) and meet the rest, newest first:
   * a citation is an exact match, so each is found with `high` confidence, by `path`.
   */
  async newestCiting(workspace: string, conditions: Condition[], limit: number): Promise<RankedTurn[]> {
    const { index, value: ids } = await this.lexical.read(workspace, "turns", (index) => index.newest(conditions, limit) ?? []);
    const records = await index.records(ids);
    return records.map((record, i) => ({
      score: round(1 / (i + 1)),
      confidence: "high",
      matched_by: ["path"],
      turn: turnOfIndexed(record),
    }));
  }

  /**
   * The `depth` turns nearest by meaning to the stored turn `like` that meet `conditions`, nearest first, each with
   * its cosine similarity to it; no fusion and no confidence. The stored vector is the query, so no text is
   * embedded; nothing when `like` is not stored. Their whole records are read from Chroma.
   */
  async nearestTurns(
    workspace: string,
    request: { like: string; conditions: Condition[] },
    depth: number,
  ): Promise<Array<{ turn: StoredTurn; similarity: number }>> {
    // Caught up with every acknowledged write: the dense side judges the conditions on its metadata.
    const indexReady = this.lexical.snapshot(workspace, "turns");
    indexReady.catch(() => undefined); // awaited below
    const [stored] = await this.collections.byIds(workspace, "turns", [request.like], { withText: false, withEmbeddings: true });
    if (!stored?.embedding) return [];
    const dense = await this.denseSide.nearest(
      workspace,
      "turns",
      { embedding: stored.embedding, conditions: request.conditions },
      depth,
      () => indexReady,
    );
    const index = await indexReady;
    const records = new Map((await index.records(dense.map((d) => d.record.id))).map((r) => [r.id, r]));
    return dense.flatMap(({ record, distance }) => {
      const whole = records.get(record.id);
      return whole ? [{ turn: turnOfIndexed(whole), similarity: 1 - distance }] : [];
    });
  }

  /** A query's embedding, for several searches of the same text (`SearchRequest.queryEmbedding`). */
  embedQuery(query: string): Promise<number[]> {
    return this.denseSide.embedQuery(query);
  }

  /** The similarity at or above which the dense side's evidence counts at `level` for this embedder (confidence.ts). */
  similarityFloor(level: "low" | "medium" | "high"): number {
    return semanticFloor(this.embedder.model, level);
  }

  /** Session summaries, best first. */
  async searchSummaries(workspace: string, request: SearchRequest): Promise<RankedSummary[]> {
    return (await this.search(workspace, "summaries", request)).map(({ record, ...rank }) => ({
      ...rank,
      summary: summaryOfIndexed(record),
    }));
  }

  async search(workspace: string, collection: SearchableCollection, request: SearchRequest): Promise<RankedRecord[]> {
    // One retriever alone needs no candidates beyond the page; fusion does.
    const hybrid = request.mode === "hybrid";
    const lexicalDepth = hybrid ? Math.max(MIN_DEPTH, request.limit * DEPTH_PER_HIT) : request.limit;
    const denseDepth = hybrid ? Math.max(MIN_DENSE_DEPTH, request.limit * DENSE_DEPTH_PER_HIT) : request.limit;
    // Caught up with every write acknowledged before this query, the lexical index is also where the dense
    // side's filters are judged: Chroma sends only ids and distances. Lexical scoring runs on the ranking thread
    // while the dense side waits for Chroma.
    const lexicalPending = this.lexical.read(workspace, collection, (index) =>
      request.mode === "semantic" ? [] : index.query(request.query, lexicalDepth, request.conditions),
    );
    const indexReady = lexicalPending.then(({ index }) => index);
    indexReady.catch(() => undefined); // its failure is lexicalPending's, reported below
    // The lexical side's first `limit` usually are the page (the dense vote re-orders near-ties): their whole
    // records are fetched from Chroma while the dense side still waits for its query, not after the fusion.
    const likelyPage = lexicalPending.then(({ index, value }) => index.records(value.slice(0, request.limit).map((l) => l.id)));
    likelyPage.catch(() => undefined); // awaited below
    const densePending =
      request.mode === "lexical"
        ? Promise.resolve([])
        : this.denseSide.nearest(
            workspace,
            collection,
            request.queryEmbedding ? { embedding: request.queryEmbedding, conditions: request.conditions } : request,
            denseDepth,
            () => indexReady,
          );
    const [dense, { value: lexical }] = await Promise.all([densePending, lexicalPending]);
    // The largest share of the query's information any lexical candidate holds: when it is small, the query's
    // words are not the store's (a paraphrase, or nothing stored), and the dense list speaks with more weight.
    const bestInformative = lexical.reduce((best, l) => Math.max(best, l.informative), 0);
    const weak = this.tuning.fusion.weakLexical;
    const weakened = weak !== undefined && bestInformative < weak.below;
    const fusion = weakened ? { ...this.tuning.fusion, semantic: weak.semantic, lexicalHead: 0 } : this.tuning.fusion;
    const floor = semanticFloor(this.embedder.model, (weakened ? weak.gate : undefined) ?? this.tuning.semanticGate);
    const denseRanked =
      request.mode === "semantic"
        ? dense
        : dense.filter((d) => 1 - d.distance >= floor).slice(0, Math.ceil(request.limit * (fusion.semanticPerHit ?? Infinity)));
    const fused = withHead(
      reciprocalRankFusion(
        [
          {
            retriever: "semantic",
            ids: denseRanked.map((d) => d.record.id),
            weight: fusion.semantic,
            k: fusion.semanticK ?? fusion.k,
            ...(fusion.similarityScaled ? { weights: denseRanked.map((d) => scaled(1 - d.distance, floor)) } : {}),
          },
          { retriever: "lexical", ids: lexical.map((l) => l.id), weight: fusion.lexical, k: fusion.lexicalK ?? fusion.k },
        ],
        fusion.k,
      ),
      lexical.slice(0, fusion.lexicalHead ?? 0).map((l) => l.id),
    );
    const similarity = new Map(dense.map((d) => [d.record.id, 1 - d.distance]));
    const informative = new Map(lexical.map((l) => [l.id, l.informative]));
    // Each candidate's level from its own evidence, then made to follow the ranking (no hit above one of higher
    // confidence), over every candidate so that a level does not depend on the page's size; `min_confidence`
    // then keeps a prefix.
    const levels = followingRank(
      fused.map((f) =>
        hitConfidence(
          {
            matchedBy: f.matchedBy,
            ...(request.mode === "semantic" ? {} : { bestInformative }),
            ...(similarity.has(f.id) ? { similarity: similarity.get(f.id)! } : {}),
            ...(informative.has(f.id) ? { informative: informative.get(f.id)! } : {}),
          },
          this.embedder.model,
          this.tuning.confidence,
        ),
      ),
    );
    const ranked = fused
      .map((f, i) => ({ fused: f, confidence: levels[i]! }))
      .filter((r) => atLeast(r.confidence, request.minConfidence))
      .slice(0, request.limit);

    const index = await indexReady;
    // The page's records, whole: the dense side's that came whole, the lexical side's fetched meanwhile, the rest
    // from Chroma by id in one request.
    const records = new Map<string, IndexedRecord>();
    for (const { record } of dense) if (record.document !== undefined) records.set(record.id, record);
    for (const record of await likelyPage) records.set(record.id, record);
    const missing = ranked.map((r) => r.fused.id).filter((id) => !records.has(id));
    for (const record of await index.records(missing)) records.set(record.id, record);
    return ranked.flatMap(({ fused, confidence }) => {
      const record = records.get(fused.id);
      if (!record) return [];
      const hit: RankedRecord = { record, score: round(fused.score), confidence, matched_by: [...fused.matchedBy].sort() };
      if (request.evidence) {
        const cosine = similarity.get(fused.id);
        const share = informative.get(fused.id);
        hit.evidence = {
          ...(cosine !== undefined ? { similarity: hundredths(cosine) } : {}),
          ...(share !== undefined ? { share: hundredths(share) } : {}),
        };
      }
      return [hit];
    });
  }
}

/** How far a similarity stands above the noise floor, 0 at the floor to 1 at identity. */
const scaled = (similarity: number, floor: number) => Math.max(0, (similarity - floor) / (1 - floor));

const round = (n: number) => Math.round(n * 1e6) / 1e6;
const hundredths = (n: number) => Math.round(n * 100) / 100;
