import { setTimeout as sleep } from "node:timers/promises";
import {
  AdminClient,
  ChromaClient,
  ChromaConnectionError,
  ChromaServerError,
  ChromaNotFoundError,
  ChromaUniqueError,
  type Collection,
  type Metadata as ChromaMetadata,
} from "chromadb";
import { CairnError, internal, unavailable } from "../errors.js";
import type { Logger } from "../logger.js";
import { JsonClient, Rejected, Unreachable } from "../net/json-client.js";
import { FLAT_LAYOUT, type MetadataLayout, packedLayout } from "./metadata-layout.js";
import type { Metadata, Where } from "./record-types.js";
import { damageOf, describeDamage } from "@cairn/openapi";

/**
 * The one module that talks to Chroma. Everything above it sees plain records and Cairn errors: Chroma's
 * own errors (which name hosts and URLs) are logged here and never passed up.
 */

export type { Metadata, Scalar, Where } from "./record-types.js";

export interface StoredRecord {
  id: string;
  metadata: Metadata;
  /** Present when asked for. */
  document?: string;
  /** Present when asked for and stored. */
  embedding?: number[];
  /**
   * Set on a record whose stored fields fail the checks every reader relies on (openapi/src/stored-records.ts),
   * saying which and why. Such a record reaches only readers that ask for it (`withDamaged`, `inspect`).
   */
  damage?: string;
}

export interface Neighbour {
  id: string;
  /** Cosine distance: 0 identical, 2 opposite. */
  distance: number;
}

export interface NewRecord {
  id: string;
  embedding: number[];
  document: string;
  metadata: Metadata;
}

export interface EmbeddingStamp {
  model: string;
  dimension: number;
}

/** The collections whose vectors come from the embedder. */
export type EmbeddedCollectionName = "turns" | "summaries";
export const EMBEDDED_COLLECTIONS: readonly EmbeddedCollectionName[] = ["turns", "summaries"];
/**
 * The ledger's collections (see ledger/ledger.ts): no meaning to search, only records kept in order. `recency`
 * comes first: a store may hold every kind there (the one-collection layout, ledger.ts), and an id found there
 * and in another was written there first.
 */
export type LedgerCollectionName = "recency" | "ledger-slots" | "ledger-feed" | "ledger-audit" | "ledger-keyed" | "ledger-mail";
export const LEDGER_COLLECTIONS: readonly LedgerCollectionName[] = [
  "recency",
  "ledger-slots",
  "ledger-feed",
  "ledger-audit",
  "ledger-keyed",
  "ledger-mail",
];
export type CollectionName = EmbeddedCollectionName | LedgerCollectionName;
export const COLLECTIONS: readonly CollectionName[] = [...EMBEDDED_COLLECTIONS, ...LEDGER_COLLECTIONS];
const embedded = (name: CollectionName): name is EmbeddedCollectionName => name === "turns" || name === "summaries";

/**
 * The turn metadata keys Chroma filters on (the filters of `query_raw_memories`, a session's turns, supersession
 * candidates): a turn's other keys are packed into one (store/metadata-layout.ts).
 */
export const TURN_FILTER_KEYS = [
  "agent",
  "session_id",
  "kind",
  "recorded_at",
  "valid_from",
  "valid_until",
  "check_status",
  "review_state",
] as const;
const TURN_LAYOUT = packedLayout(TURN_FILTER_KEYS, { textInMetadata: true });
/** Re-embedding's staging collection is laid out as the collection it replaces. */
const layoutOf = (name: string): MetadataLayout => (name === "turns" || name === stagingName("turns") ? TURN_LAYOUT : FLAT_LAYOUT);

/** What is wrong with a record of this collection as read, if anything: turns and summaries are checked. */
type Screen = (metadata: Metadata) => string | undefined;
const screenOf = (name: string): Screen | undefined => {
  const kind =
    name === "turns" || name === stagingName("turns")
      ? "turns"
      : name === "summaries" || name === stagingName("summaries")
        ? "summaries"
        : undefined;
  if (!kind) return undefined;
  return (metadata) => {
    const damage = damageOf(kind, metadata);
    return damage.length > 0 ? describeDamage(damage) : undefined;
  };
};

/** A collection as it is, whatever its stamp: what integrity checks, exports and re-embedding read. */
export interface InspectedCollection {
  stamp: EmbeddingStamp;
  records: RecordCollection;
}

export const sameStamp = (a: EmbeddingStamp, b: EmbeddingStamp) => a.model === b.model && a.dimension === b.dimension;

/**
 * Re-embedding writes the new vectors into `<name>-reembed`, then swaps it in. The swap is marked on the
 * staging collection first, so a swap cut short is finished by whoever opens the collection next.
 */
const stagingName = (name: EmbeddedCollectionName) => `${name}-reembed`;
const SWAP_MARK = "reembed_complete";

/**
 * The ledger's collections hold no meaning to search (see ledger/ledger.ts): their records carry a constant
 * one-dimensional vector, and they are stamped as such, whatever the embedder.
 */
export const RECENCY_STAMP: EmbeddingStamp = { model: "none", dimension: 1 };

const TENANT = "default_tenant";

/**
 * How many records Chroma 1.0 takes into a collection before it writes the collection's vector index back
 * (`sync_threshold`; Chroma's default is 1,000). Until then it keeps them in its log, and every `add` to the
 * collection reads all of them back out of that log, so an `add` costs in proportion to what is waiting there
 * (docs/benchmarks.md, "A store of N turns": "what waits in Chroma's log"). The change feed and the audit log
 * take one slot a write batch, of up to 16
 * entries: few records but large ones, and small collections whose index is cheap to write back. Turns and agents'
 * slots keep the default: their collections grow with every turn and the write-back rewrites a map of every id in
 * the collection, which costs more the larger it is. Chroma applies a changed value when it next loads the
 * collection's index (its next start).
 */
const WRITE_BACK_EVERY: Partial<Record<string, number>> = { "ledger-feed": 100, "ledger-audit": 100 };
/**
 * Chroma 1.0 refuses a change of a collection's configuration ("database is locked") whenever another write
 * commits while it runs, which under concurrent writes is often; each try is about as likely to pass as the first,
 * so it is tried again a few more times, a little later each time.
 */
const SET_WRITE_BACK_ATTEMPTS = 8;
const SET_WRITE_BACK_PAUSE_MS = 50;

/**
 * The graph Chroma builds over a ledger collection's vectors. Nothing searches them (their records carry one
 * constant vector), but Chroma inserts every record into its graph at every `add` and writes the graph back with
 * the collection: the smallest graph costs least (docs/benchmarks.md, "A store of N turns": "the ledger's records
 * cost Chroma less"). Chroma fixes a collection's graph when it creates it, so a ledger collection created with
 * Chroma's default graph keeps it, and reads and writes the same.
 */
const LEDGER_GRAPH = { max_neighbors: 2, ef_construction: 2 };
const isLedgerCollection = (name: string): boolean => (LEDGER_COLLECTIONS as readonly string[]).includes(name);

/**
 * A read of Chroma not answered by then answers 503 rather than holding the request open. Node's fetch waits up
 * to 300 s for headers; a filtered query over 100k records takes under a second (docs/benchmarks.md,
 * "memory-core latency").
 */
const READ_TIMEOUT_MS = 60_000;

/** The collection was embedded with another model than the one this server uses. */
export class StampMismatchError extends CairnError {
  override name = "StampMismatchError";
  constructor(workspace: string, collection: string, stored: EmbeddingStamp, expected: EmbeddingStamp) {
    super(
      "reembed_required",
      503,
      `Workspace ${workspace} (${collection}) was embedded with ${stored.model} (${stored.dimension} dimensions) ` +
        `but this server embeds with ${expected.model} (${expected.dimension} dimensions).`,
      "Ask the operator to re-embed the workspace (start memory-core with CAIRN_MAINTENANCE=1, then run `cairn reembed`) or to restore the previous CAIRN_EMBEDDINGS settings.",
    );
  }
}

export class ChromaStore {
  private readonly collections = new Map<string, Promise<RecordCollection>>();
  private readonly admin: AdminClient;
  private readonly connection: { host: string; port: number; ssl: boolean };
  /** Reads go over this rather than chromadb's client: see net/json-client.ts. */
  private readonly reads: JsonClient;

  /** `observe` hears how long each request to Chroma took (for /metrics), named as the store's errors name it. */
  constructor(
    url: URL,
    readonly stamp: EmbeddingStamp,
    private readonly log: Logger,
    private readonly observe: (request: string, seconds: number) => void = () => undefined,
  ) {
    const ssl = url.protocol === "https:";
    this.connection = { host: url.hostname, port: url.port ? Number(url.port) : ssl ? 443 : 80, ssl };
    this.admin = new AdminClient(this.connection);
    this.reads = new JsonClient(new URL(url.origin), { timeoutMs: READ_TIMEOUT_MS });
  }

  /** Closes pooled connections; the store is not used after. */
  close(): void {
    this.reads.close();
  }

  /**
   * Has Chroma load the workspace's vector indexes, which it does at a collection's first search (seconds, in a
   * large store): one search of each, whose answer does not matter.
   */
  async loadVectorIndexes(workspace: string): Promise<void> {
    const probe = Array.from({ length: this.stamp.dimension }, (_, i) => (i === 0 ? 1 : 0));
    await Promise.all(EMBEDDED_COLLECTIONS.map(async (name) => (await this.collection(workspace, name)).query({ embedding: probe, n: 1 })));
  }

  async heartbeat(): Promise<void> {
    await this.guard("heartbeat", () => new ChromaClient(this.connection).heartbeat());
  }

  /** The workspace's collection, created (database, collection, stamp) on first use and checked against the stamp. */
  collection(workspace: string, name: CollectionName): Promise<RecordCollection> {
    const key = `${workspace}/${name}`;
    let pending = this.collections.get(key);
    if (!pending) {
      pending = this.open(workspace, name);
      this.collections.set(key, pending);
      pending.catch(() => this.collections.delete(key));
    }
    return pending;
  }

  private async open(workspace: string, name: CollectionName): Promise<RecordCollection> {
    const client = await this.client(workspace);
    if (embedded(name)) await this.finishSwap(workspace, client, name);
    const expected = embedded(name) ? this.stamp : RECENCY_STAMP;
    const collection = await this.openOrCreate(client, name, expected, "open collection");
    const stored = stampOf(collection);
    if (!sameStamp(stored, expected)) throw new StampMismatchError(workspace, name, stored, expected);
    return this.wrap(collection, name, false);
  }

  /**
   * The collection as stored, without the stamp check, damaged records included (marked `damage`); undefined when
   * it does not exist yet.
   */
  async inspect(workspace: string, name: CollectionName): Promise<InspectedCollection | undefined> {
    const client = await this.client(workspace);
    if (embedded(name)) await this.finishSwap(workspace, client, name);
    const collection = await this.existing(client, name);
    return collection ? { stamp: stampOf(collection), records: this.wrap(collection, name, true) } : undefined;
  }

  /** Where re-embedded records of `name` are gathered, stamped with this server's embedder. */
  async staging(workspace: string, name: EmbeddedCollectionName): Promise<RecordCollection> {
    const client = await this.client(workspace);
    const create = () => this.openOrCreate(client, stagingName(name), this.stamp, "open staging");
    let staging = await create();
    // Left over from a re-embedding towards another model: its vectors are of no use now.
    if (!sameStamp(stampOf(staging), this.stamp)) {
      await this.guard("drop staging", () => client.deleteCollection({ name: stagingName(name) }));
      staging = await create();
    }
    return this.wrap(staging, stagingName(name), true);
  }

  /** Replaces `name` by its complete staging collection, which takes the name and this server's stamp. */
  async swapInStaging(workspace: string, name: EmbeddedCollectionName): Promise<void> {
    const client = await this.client(workspace);
    const staging = await this.existing(client, stagingName(name));
    if (!staging) return;
    await this.guard("mark swap", () => staging.modify({ metadata: { ...stampMetadata(this.stamp), [SWAP_MARK]: true } }));
    await this.finishSwap(workspace, client, name);
  }

  private async finishSwap(workspace: string, client: ChromaClient, name: EmbeddedCollectionName): Promise<void> {
    const staging = await this.existing(client, stagingName(name));
    if (!staging || staging.metadata?.[SWAP_MARK] !== true) return;
    if (await this.existing(client, name)) await this.guard("drop replaced", () => client.deleteCollection({ name }));
    await this.guard("swap", () => staging.modify({ name, metadata: stampMetadata(stampOf(staging)) }));
    this.collections.delete(`${workspace}/${name}`);
    this.log.info("re-embedded collection swapped in", { collection: name });
  }

  /**
   * A stamp (and a ledger collection's graph) is written only when the collection is created; an existing one keeps
   * its own. An existing collection whose write-back interval is not this version's is given it.
   */
  private async openOrCreate(client: ChromaClient, name: string, stamp: EmbeddingStamp, what: string): Promise<Collection> {
    const writeBackEvery = WRITE_BACK_EVERY[name];
    const collection = await this.guard(what, () =>
      client.getOrCreateCollection({
        name,
        embeddingFunction: null,
        configuration: {
          hnsw: {
            space: "cosine",
            ...(isLedgerCollection(name) ? LEDGER_GRAPH : {}),
            ...(writeBackEvery ? { sync_threshold: writeBackEvery } : {}),
          },
        },
        metadata: stampMetadata(stamp),
      }),
    );
    if (writeBackEvery && collection.configuration?.hnsw?.sync_threshold !== writeBackEvery) {
      // Only a cost setting: Chroma failing to take it is tried again, then left to the next start rather than
      // failing the request that opened the collection.
      for (let attempt = 1; ; attempt++) {
        const started = performance.now();
        try {
          await collection.modify({ configuration: { hnsw: { sync_threshold: writeBackEvery } } });
          this.log.info("collection's index write-back interval set; Chroma applies it when it next starts", {
            collection: name,
            every: writeBackEvery,
          });
          break;
        } catch (error) {
          // Not through `guard`: a refusal here is expected now and then, and is no error of the request.
          if (attempt >= SET_WRITE_BACK_ATTEMPTS) {
            this.log.warn("collection's index write-back interval not set; tried again at the next start", {
              collection: name,
              error: String((error as Error)?.message ?? error),
            });
            break;
          }
          await sleep(SET_WRITE_BACK_PAUSE_MS * attempt);
        } finally {
          this.observe("set write-back", (performance.now() - started) / 1000);
        }
      }
    }
    return collection;
  }

  private existing(client: ChromaClient, name: string): Promise<Collection | undefined> {
    return this.guard("get collection", async () => {
      try {
        // Without an embedding function: getCollection's type has no `null` for that (createCollection's has). It reads
        // an absent one as it reads null, then takes the one the collection's configuration names: none, for a
        // collection created here.
        return await client.getCollection({ name });
      } catch (error) {
        if (error instanceof ChromaNotFoundError) return undefined;
        throw error;
      }
    });
  }

  /** A client for the workspace's database, created on first use. */
  private async client(workspace: string): Promise<ChromaClient> {
    await this.guard("create database", async () => {
      try {
        await this.admin.createDatabase({ name: workspace, tenant: TENANT });
      } catch (error) {
        if (!(error instanceof ChromaUniqueError)) throw error;
      }
    });
    return new ChromaClient({ ...this.connection, tenant: TENANT, database: workspace });
  }

  /**
   * A collection's records for the layers above. Damaged records (see StoredRecord.damage) are left out of every
   * read unless `keepDamaged` or the read asks for them, and each one left out is logged for the operator.
   */
  private wrap(collection: Collection, name: string, keepDamaged: boolean): RecordCollection {
    const path = collectionPath(collection);
    const reads: CollectionReads = {
      get: (body) => this.reads.post(`${path}/get`, body),
      query: (body) => this.reads.post(`${path}/query`, body),
    };
    const screen = screenOf(name);
    const screening: Screening | undefined = screen && {
      screen,
      keepDamaged,
      skipped: (id, damage) =>
        this.log.warn("damaged record left out of a read; verify_store reports it", { collection: name, id, damage }),
    };
    return new RecordCollection(collection, reads, (what, fn) => this.guard(`${name}.${what}`, fn), layoutOf(name), screening);
  }

  private async guard<T>(what: string, fn: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await fn();
    } catch (error) {
      if (error instanceof CairnError) throw error;
      if (error instanceof ChromaConnectionError || error instanceof Unreachable) {
        this.log.warn("chroma unreachable", { operation: what });
        throw unavailable("The memory store cannot be reached right now.", { cause: error });
      }
      // Chroma's own words, for the operator: its errors are about requests (filters, ids), not memory text.
      const detail = error instanceof Rejected ? `${error.message}: ${error.detail}` : String((error as Error)?.message ?? error);
      this.log.error("chroma request failed", { operation: what, error: detail });
      // Chroma failing on its side (a segment not loaded yet after a restart, say) is Chroma unavailable for now:
      // the caller may retry. Chroma refusing the request is a fault of ours.
      if ((error instanceof Rejected && error.status >= 500) || error instanceof ChromaServerError) {
        throw unavailable("The memory store failed to answer; it usually recovers within seconds.", { cause: error });
      }
      throw internal({ cause: error });
    } finally {
      this.observe(what, (performance.now() - started) / 1000);
    }
  }
}

type Guard = <T>(what: string, fn: () => Promise<T>) => Promise<T>;

/** Chroma's answers to a get and a query, as its REST API sends them. */
interface GetReply {
  ids: string[];
  documents?: Array<string | null> | null;
  embeddings?: number[][] | null;
  metadatas?: Array<ChromaMetadata | null> | null;
}
interface QueryReply {
  ids: string[][];
  distances?: Array<Array<number | null>> | null;
}

/** The reads of one collection, sent over a JsonClient rather than chromadb's client. */
interface CollectionReads {
  get(body: Record<string, unknown>): Promise<GetReply>;
  query(body: Record<string, unknown>): Promise<QueryReply>;
}

/** How a collection's reads check their records: what is wrong with one, and whether the damaged are kept. */
interface Screening {
  screen: Screen;
  keepDamaged: boolean;
  skipped: (id: string, damage: string) => void;
}

export class RecordCollection {
  constructor(
    private readonly collection: Collection,
    private readonly reads: CollectionReads,
    private readonly guard: Guard,
    private readonly layout: MetadataLayout = FLAT_LAYOUT,
    private readonly screening?: Screening,
  ) {}

  /** Chroma's id of the collection: a collection dropped and made again (restore, re-embedding) has another. */
  get chromaId(): string {
    return this.collection.id;
  }

  /** Adds records; an id that already exists is left as it was (Chroma ignores it). */
  async add(records: readonly NewRecord[]): Promise<void> {
    if (records.length === 0) return;
    await this.guard("add", () => this.collection.add(this.columns(records)));
  }

  async upsert(records: readonly NewRecord[]): Promise<void> {
    if (records.length === 0) return;
    await this.guard("upsert", () => this.collection.upsert(this.columns(records)));
  }

  /** Every record of the collection, a page at a time, in the order they were added. */
  async *pages(options: { size: number; withDocuments?: boolean; withEmbeddings?: boolean }): AsyncGenerator<StoredRecord[]> {
    const { size, ...include } = options;
    for (let offset = 0; ; offset += size) {
      // Damaged records come too: a page left short by one would end the walk early.
      const page = await this.get({ limit: size, offset, ...include, withDamaged: true });
      yield this.screening?.keepDamaged === false ? page.filter((r) => r.damage === undefined) : page;
      if (page.length < size) return;
    }
  }

  /** Without ids or where, records come in the order they were added, so `offset` pages through all of them. */
  async get(options: {
    ids?: string[];
    where?: Where;
    limit?: number;
    offset?: number;
    withDocuments?: boolean;
    withEmbeddings?: boolean;
    /** Damaged records too, marked `damage` (always so for a collection from `inspect`). */
    withDamaged?: boolean;
  }): Promise<StoredRecord[]> {
    if (options.ids && options.ids.length === 0) return [];
    if (options.where) this.layout.check(options.where);
    const result = await this.guard("get", () =>
      this.reads.get({
        ...(options.ids ? { ids: options.ids } : {}),
        ...(options.where ? { where: options.where } : {}),
        ...(options.limit !== undefined ? { limit: options.limit } : {}),
        ...(options.offset !== undefined ? { offset: options.offset } : {}),
        include: ["metadatas", ...(options.withDocuments ? ["documents"] : []), ...(options.withEmbeddings ? ["embeddings"] : [])],
      }),
    );
    const { screening } = this;
    const keepDamaged = options.withDamaged === true || screening?.keepDamaged === true;
    return result.ids.flatMap((id, i) => {
      const embedding = options.withEmbeddings ? result.embeddings?.[i] : undefined;
      const stored = cleanMetadata(result.metadatas?.[i]);
      const metadata = this.layout.read(stored);
      const damage = screening?.screen(metadata);
      if (damage !== undefined && !keepDamaged) {
        screening?.skipped(id, damage);
        return [];
      }
      return [
        {
          id,
          metadata,
          ...(options.withDocuments ? { document: this.layout.textOf(stored) ?? result.documents?.[i] ?? "" } : {}),
          ...(embedding && embedding.length > 0 ? { embedding } : {}),
          ...(damage !== undefined ? { damage } : {}),
        },
      ];
    });
  }

  /**
   * Which of these ids are stored. Ids alone cost Chroma much less CPU than the same get with metadata
   * (docs/benchmarks.md, "memory-core latency": "cheaper feed probe"): the change feed's length is probed this
   * way on every query.
   */
  async present(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const result = await this.guard("present", () => this.reads.get({ ids: [...ids], include: [] }));
    return new Set(result.ids);
  }

  /** Replaces the metadata of existing records (their documents and vectors stay). */
  async updateMetadata(records: ReadonlyArray<{ id: string; metadata: Metadata }>): Promise<void> {
    if (records.length === 0) return;
    await this.guard("update", () =>
      this.collection.update({
        ids: records.map((r) => r.id),
        metadatas: records.map((r) => this.layout.stored(r.metadata) as ChromaMetadata),
      }),
    );
  }

  /** Removes records, documents and vectors. */
  async delete(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.guard("delete", () => this.collection.delete({ ids: [...ids] }));
  }

  /**
   * Nearest neighbours by cosine distance, closest first: ids and distances only. A record's metadata and
   * document cost Chroma more to send than the search itself (docs/benchmarks.md, "memory-core latency":
   * "ids-only dense side"), and the caller
   * holds them already (the lexical index).
   */
  async query(options: { embedding: number[]; n: number; where?: Where }): Promise<Neighbour[]> {
    if (options.where) this.layout.check(options.where);
    const result = await this.guard("query", () =>
      this.reads.query({
        query_embeddings: [options.embedding],
        n_results: options.n,
        ...(options.where ? { where: options.where } : {}),
        include: ["distances"],
      }),
    );
    const ids = result.ids[0] ?? [];
    return ids.map((id, i) => ({ id, distance: result.distances?.[0]?.[i] ?? 2 }));
  }

  async count(): Promise<number> {
    return this.guard("count", () => this.collection.count());
  }

  private columns(records: readonly NewRecord[]) {
    const { layout } = this;
    // Records without text (the ledger's) go without a document: Chroma keeps a document as a metadata row and in
    // its full-text index too, empty or not, and a missing one reads back as empty (docs/benchmarks.md, "A store
    // of N turns": "the ledger's records cost Chroma less").
    const documents = !layout.textInMetadata && records.some((r) => r.document !== "");
    return {
      ids: records.map((r) => r.id),
      embeddings: records.map((r) => r.embedding),
      ...(documents ? { documents: records.map((r) => r.document) } : {}),
      metadatas: records.map((r) => {
        const metadata = layout.stored(r.metadata);
        return (layout.textInMetadata ? layout.withText(metadata, r.document) : metadata) as ChromaMetadata;
      }),
    };
  }
}

/** Where Chroma's REST API (v2) serves a collection's records: its reads append `/get` or `/query`. */
export function collectionPath(collection: Pick<Collection, "tenant" | "database" | "id">): string {
  const segments = [collection.tenant, collection.database, collection.id].map(encodeURIComponent);
  return `/api/v2/tenants/${segments[0]}/databases/${segments[1]}/collections/${segments[2]}`;
}

function stampMetadata(stamp: EmbeddingStamp): ChromaMetadata {
  return { embedding_model: stamp.model, embedding_dim: stamp.dimension };
}

function stampOf(collection: Collection): EmbeddingStamp {
  return { model: String(collection.metadata?.embedding_model ?? ""), dimension: Number(collection.metadata?.embedding_dim ?? 0) };
}

function cleanMetadata(raw: ChromaMetadata | null | undefined): Metadata {
  const out: Metadata = {};
  for (const [key, value] of Object.entries(raw ?? {})) {
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") out[key] = value;
  }
  return out;
}
