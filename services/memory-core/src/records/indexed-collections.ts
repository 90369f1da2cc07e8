import type { ChromaStore, EmbeddedCollectionName, EmbeddingStamp, StoredRecord } from "../store/chroma-store.js";
import { toWhere, type Condition, type Facts } from "./filters.js";
import { turnOf, type StoredTurn } from "./stored-turn.js";
import { summaryFromRecord } from "./summary-record.js";
import type { Summary } from "./types.js";

/**
 * A record of an embedded collection as the derived indexes read it: its text and vector when asked for, and its
 * fields as the facts filters read (flat, by key).
 */
export interface IndexedRecord {
  id: string;
  facts: Facts;
  document?: string;
  embedding?: number[];
}

/** A record near a vector, by cosine distance (0 identical, 2 opposite). */
export interface Nearest {
  id: string;
  distance: number;
}

/**
 * The embedded collections as the lexical indexes and the dense side of retrieval read them: every record page by
 * page, records by id, the nearest ones to a vector; and which Chroma collection and embedding stamp they are, so
 * that a snapshot of an index is never taken for another's.
 */
export class IndexedCollections {
  constructor(private readonly store: ChromaStore) {}

  get stamp(): EmbeddingStamp {
    return this.store.stamp;
  }

  /** Chroma's id of the collection: a collection dropped and made again (restore, re-embedding) has another. */
  async collectionId(workspace: string, collection: EmbeddedCollectionName): Promise<string> {
    return (await this.store.collection(workspace, collection)).chromaId;
  }

  /** Every record with its text, a page at a time, in the order they were added. */
  async *pages(workspace: string, collection: EmbeddedCollectionName, size: number): AsyncGenerator<IndexedRecord[]> {
    const records = await this.store.collection(workspace, collection);
    for await (const page of records.pages({ size, withDocuments: true })) yield page.map(indexed);
  }

  /** The records of these ids that are stored, with their text unless told otherwise, and vectors when asked. */
  async byIds(
    workspace: string,
    collection: EmbeddedCollectionName,
    ids: readonly string[],
    options: { withText?: boolean; withEmbeddings?: boolean } = {},
  ): Promise<IndexedRecord[]> {
    const records = await this.store.collection(workspace, collection);
    const found = await records.get({
      ids: [...ids],
      withDocuments: options.withText ?? true,
      withEmbeddings: options.withEmbeddings ?? false,
    });
    return found.map(indexed);
  }

  /** The `n` records nearest to `embedding`, closest first, of those that meet the conditions (Chroma filters). */
  async nearest(
    workspace: string,
    collection: EmbeddedCollectionName,
    embedding: number[],
    n: number,
    conditions: readonly Condition[] = [],
  ): Promise<Nearest[]> {
    const records = await this.store.collection(workspace, collection);
    const where = toWhere(conditions);
    return records.query({ embedding, n, ...(where ? { where } : {}) });
  }
}

const indexed = (record: StoredRecord): IndexedRecord => ({
  id: record.id,
  facts: record.metadata,
  ...(record.document !== undefined ? { document: record.document } : {}),
  ...(record.embedding ? { embedding: record.embedding } : {}),
});

/** The turn an indexed record of the turns collection holds. */
export const turnOfIndexed = (record: IndexedRecord): StoredTurn =>
  turnOf({
    id: record.id,
    metadata: record.facts,
    ...(record.document !== undefined ? { document: record.document } : {}),
    ...(record.embedding ? { embedding: record.embedding } : {}),
  });

/** The summary an indexed record of the summaries collection holds. */
export const summaryOfIndexed = (record: IndexedRecord): Summary => summaryFromRecord({ id: record.id, metadata: record.facts });
