import { sameStamp, type ChromaStore, type EmbeddedCollectionName, type EmbeddingStamp, type StoredRecord } from "../store/chroma-store.js";
import type { ExportedRecord } from "./types.js";

/** One page of a collection as stored, with the collection's stamp and size. */
export interface StoredPage {
  stamp: EmbeddingStamp;
  records: ExportedRecord[];
  total: number;
}

/**
 * The embedded collections' records as stored, for backups and restores: read page by page in the order they were
 * added (Chroma's order for a `get` without a filter), ids, documents and metadata untouched, vectors when asked,
 * whatever the collection's stamp (a workspace waiting for re-embedding can still be backed up); written back as
 * they were read.
 */
export class StoredRecords {
  constructor(private readonly store: ChromaStore) {}

  /** The stamp this server embeds with: what a collection not created yet would be stamped. */
  get stamp(): EmbeddingStamp {
    return this.store.stamp;
  }

  /** Whether a vector made under `stamp` can be stored as it is here. */
  fits(stamp: EmbeddingStamp, vector: readonly number[] | undefined): boolean {
    return sameStamp(stamp, this.store.stamp) && vector?.length === this.store.stamp.dimension;
  }

  /** Which of these ids the collection holds. */
  async present(workspace: string, collection: EmbeddedCollectionName, ids: readonly string[]): Promise<Set<string>> {
    return (await this.store.collection(workspace, collection)).present(ids);
  }

  /** Those of these turns that are stored, each with the write id it holds (when it holds one). */
  async writeIds(workspace: string, ids: readonly string[]): Promise<Map<string, string | undefined>> {
    const found = await (await this.store.collection(workspace, "turns")).get({ ids: [...ids] });
    return new Map(found.map((r) => [r.id, typeof r.metadata.write_id === "string" ? r.metadata.write_id : undefined]));
  }

  /** Stores records as they were exported, each with its vector; an id present already keeps what it holds. */
  async add(
    workspace: string,
    collection: EmbeddedCollectionName,
    records: ReadonlyArray<ExportedRecord & { embedding: number[] }>,
  ): Promise<void> {
    await (
      await this.store.collection(workspace, collection)
    ).add(records.map((r) => ({ id: r.id, embedding: r.embedding, document: r.document, metadata: r.metadata })));
  }

  /**
   * The page at `offset`, or undefined when the collection does not exist. `checkOffset` is called with the total
   * before the page is read, when `countFirst`: an offset past the end is refused before Chroma is asked for it.
   */
  async page(
    workspace: string,
    collection: EmbeddedCollectionName,
    options: { offset: number; limit: number; withEmbeddings: boolean; checkOffset?: (total: number) => void },
  ): Promise<StoredPage | undefined> {
    const inspected = await this.store.inspect(workspace, collection);
    if (!inspected) return undefined;
    const read = () =>
      inspected.records.get({ limit: options.limit, offset: options.offset, withDocuments: true, withEmbeddings: options.withEmbeddings });
    let page: StoredRecord[];
    let total: number;
    if (options.checkOffset === undefined) {
      [page, total] = await Promise.all([read(), inspected.records.count()]);
    } else {
      total = await inspected.records.count();
      options.checkOffset(total);
      page = await read();
    }
    return { stamp: inspected.stamp, records: page.map(exported), total };
  }
}

function exported(record: StoredRecord): ExportedRecord {
  return {
    id: record.id,
    document: record.document ?? "",
    metadata: record.metadata,
    ...(record.embedding ? { embedding: record.embedding } : {}),
  };
}
