import {
  EMBEDDED_COLLECTIONS,
  sameStamp,
  type ChromaStore,
  type EmbeddedCollectionName,
  type EmbeddingStamp,
  type StoredRecord,
} from "../store/chroma-store.js";
import type { ExportedRecord } from "./types.js";

/** A record as the integrity check reads it: whether it is damaged, its vector's length, what it names. */
export interface CheckedRecord {
  id: string;
  /** What is wrong with its stored fields, when something is. */
  damage: string | undefined;
  /** Its vector's dimensions; undefined when it has no vector. */
  dimensions: number | undefined;
  /** A turn's agent, slot in the agent's sequence and write; a turn's or a summary's session. */
  agent: string;
  seq: number;
  sessionId: string;
  writeId: string | undefined;
}

/** A collection whatever its stamp, to be checked: its stamp, whether this server's matches, its records. */
export interface CheckedCollection {
  stamp: EmbeddingStamp;
  stampMatches: boolean;
  pages(size: number): AsyncGenerator<CheckedRecord[]>;
}

export { EMBEDDED_COLLECTIONS, type EmbeddedCollectionName };

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

  /** The collection as it is, damaged records and vectors too; undefined when it does not exist. */
  async check(workspace: string, collection: EmbeddedCollectionName): Promise<CheckedCollection | undefined> {
    const inspected = await this.store.inspect(workspace, collection);
    if (!inspected) return undefined;
    return {
      stamp: inspected.stamp,
      stampMatches: sameStamp(inspected.stamp, this.store.stamp),
      async *pages(size) {
        for await (const page of inspected.records.pages({ size, withEmbeddings: true })) yield page.map(checked);
      },
    };
  }

  /** Those of these records that are stored damaged, whole (their text and fields as stored), for quarantine. */
  async damaged(workspace: string, collection: EmbeddedCollectionName, ids: readonly string[]): Promise<StoredRecord[]> {
    const records = await this.store.collection(workspace, collection);
    return (await records.get({ ids: [...ids], withDocuments: true, withDamaged: true })).filter((r) => r.damage !== undefined);
  }

  /** Removes records, text and vectors. */
  async delete(workspace: string, collection: EmbeddedCollectionName, ids: readonly string[]): Promise<void> {
    await (await this.store.collection(workspace, collection)).delete(ids);
  }

  /** Which of these ids the collection holds. */
  async present(workspace: string, collection: EmbeddedCollectionName, ids: readonly string[]): Promise<Set<string>> {
    return (await this.store.collection(workspace, collection)).present(ids);
  }

  /** Those of these turns that are stored (damaged ones too when asked), each with the write id it holds (when it holds one). */
  async writeIds(
    workspace: string,
    ids: readonly string[],
    options: { withDamaged?: boolean } = {},
  ): Promise<Map<string, string | undefined>> {
    const found = await (await this.store.collection(workspace, "turns")).get({ ids: [...ids], withDamaged: options.withDamaged ?? false });
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

function checked(record: StoredRecord): CheckedRecord {
  const { agent, seq, session_id, write_id } = record.metadata;
  return {
    id: record.id,
    damage: record.damage,
    dimensions: record.embedding?.length,
    agent: String(agent ?? ""),
    seq: Number(seq ?? -1),
    sessionId: String(session_id ?? ""),
    writeId: typeof write_id === "string" ? write_id : undefined,
  };
}
