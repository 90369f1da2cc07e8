import { AdminClient, ChromaClient, ChromaUniqueError } from "chromadb";
import { describe, expect, it } from "vitest";
import { silentLogger } from "../src/logger.js";
import { ChromaStore, HNSW_SYNC_THRESHOLD } from "../src/store/chroma-store.js";
import { chromaUrl, uniqueWorkspace } from "./support/harness.js";

const STAMP = { model: "openai:stub-embed", dimension: 8 };

/** The raw client of a workspace's database on the test Chroma, beside Cairn's store. */
async function rawClient(workspace: string): Promise<ChromaClient> {
  const url = chromaUrl();
  const connection = { host: url.hostname, port: Number(url.port), ssl: false };
  await new AdminClient(connection).createDatabase({ name: workspace, tenant: "default_tenant" }).catch((error: unknown) => {
    if (!(error instanceof ChromaUniqueError)) throw error;
  });
  return new ChromaClient({ ...connection, tenant: "default_tenant", database: workspace });
}

const persistsEvery = async (client: ChromaClient, name: string) =>
  (await client.getCollection({ name, embeddingFunction: null } as unknown as Parameters<ChromaClient["getCollection"]>[0])).configuration
    ?.hnsw?.sync_threshold;

describe("the store's collections", () => {
  it("write their vector index every HNSW_SYNC_THRESHOLD records: made so, and raised to it from Chroma's default", async () => {
    // A collection made before this setting, at Chroma's default.
    const older = uniqueWorkspace("sync");
    const raw = await rawClient(older);
    await raw.createCollection({
      name: "turns",
      embeddingFunction: null,
      configuration: { hnsw: { space: "cosine" } },
      metadata: { embedding_model: STAMP.model, embedding_dim: STAMP.dimension },
    });
    expect(await persistsEvery(raw, "turns")).toBe(1000);
    expect(HNSW_SYNC_THRESHOLD).toBeGreaterThan(1000);

    const store = new ChromaStore(chromaUrl(), STAMP, silentLogger);
    try {
      const turns = await store.collection(older, "turns");
      await turns.add([{ id: "t1", embedding: [1, 0, 0, 0, 0, 0, 0, 0], document: "kept as it was", metadata: { n: 1 } }]);
      expect(await persistsEvery(raw, "turns")).toBe(HNSW_SYNC_THRESHOLD);
      expect((await turns.get({ ids: ["t1"], withDocuments: true }))[0]?.document).toBe("kept as it was");

      // Collections the store makes are made so.
      const fresh = uniqueWorkspace("sync");
      await store.collection(fresh, "recency");
      await store.collection(fresh, "summaries");
      const made = await rawClient(fresh);
      expect(await persistsEvery(made, "recency")).toBe(HNSW_SYNC_THRESHOLD);
      expect(await persistsEvery(made, "summaries")).toBe(HNSW_SYNC_THRESHOLD);
    } finally {
      store.close();
    }
  });
});
