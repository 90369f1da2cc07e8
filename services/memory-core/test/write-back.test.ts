import { describe, expect, it } from "vitest";
import { chromaClient, http, makeToken, startCairn, storeTurnsAndStop, turn, uniqueWorkspace, useCairn } from "./support/harness.js";

/**
 * How often Chroma writes a collection's vector index back (its `sync_threshold`): every `add` to a collection
 * reads back what waits in Chroma's log until then, so the change feed and the audit log (few, large records) are
 * written back often, and turns and agents' slots (whose write-back grows with the collection) keep Chroma's default.
 */

const created = uniqueWorkspace("writeback");
const existing = uniqueWorkspace("writeback-old");
const olderGraph = uniqueWorkspace("writeback-graph");
const tokens = { [created]: makeToken(created, "dev"), [existing]: makeToken(existing, "dev"), [olderGraph]: makeToken(olderGraph, "dev") };
const cairn = useCairn([tokens[created]!]);

const syncThreshold = async (workspace: string, name: string) => {
  const collection = await chromaClient(workspace).getCollection({ name, embeddingFunction: null } as never);
  return collection.configuration?.hnsw?.sync_threshold;
};
const graph = async (workspace: string, name: string) => {
  const collection = await chromaClient(workspace).getCollection({ name, embeddingFunction: null } as never);
  return { max_neighbors: collection.configuration?.hnsw?.max_neighbors, ef_construction: collection.configuration?.hnsw?.ef_construction };
};
const write = async (workspace: string, n: number) => {
  const res = await http(cairn.url, "POST", "/v1/memories", { token: tokens[workspace]!.token, body: turn(`${workspace}-s`, n) });
  expect(res.status).toBe(201);
};

describe("how often Chroma writes a collection's index back", () => {
  it("is every 100 records for the change feed and the audit log, Chroma's default for turns and agents' slots", async () => {
    await write(created, 1);
    expect(await syncThreshold(created, "ledger-feed")).toBe(100);
    expect(await syncThreshold(created, "ledger-audit")).toBe(100);
    expect(await syncThreshold(created, "ledger-slots")).toBe(1000);
    expect(await syncThreshold(created, "turns")).toBe(1000);
  });

  it("builds the smallest graph over the ledger's constant vectors, and Chroma's usual one over turns and summaries", async () => {
    await write(created, 2);
    const smallest = { max_neighbors: 2, ef_construction: 2 };
    for (const name of ["recency", "ledger-slots", "ledger-feed", "ledger-audit", "ledger-keyed"])
      expect(await graph(created, name)).toEqual(smallest);
    const usual = { max_neighbors: 16, ef_construction: 100 };
    expect(await graph(created, "turns")).toEqual(usual);
    expect(await graph(created, "summaries")).toEqual(usual);
    // The ledger's records are found by id as before.
    const recent = await http(cairn.url, "GET", "/v1/memories/recent?limit=10", { token: tokens[created]!.token });
    expect(recent.status).toBe(200);
    expect(recent.body.turns.length).toBeGreaterThanOrEqual(2);
  });

  it("is set on a change feed an earlier version created with Chroma's default, and the feed keeps its entries", async () => {
    const token = tokens[existing]!;
    await storeTurnsAndStop(token, "writeback-old", 3);
    // As an earlier version left it.
    const feed = await chromaClient(existing).getCollection({ name: "ledger-feed", embeddingFunction: null } as never);
    await feed.modify({ configuration: { hnsw: { sync_threshold: 1000 } } });
    expect(await syncThreshold(existing, "ledger-feed")).toBe(1000);
    const entriesBefore = await feed.count();
    expect(entriesBefore).toBeGreaterThan(0);

    // The version now, started over that store.
    const later = await startCairn([token]);
    try {
      const res = await http(later.url, "POST", "/v1/memories", { token: token.token, body: turn("writeback-old", 4) });
      expect(res.status).toBe(201);
      expect(await syncThreshold(existing, "ledger-feed")).toBe(100);
      expect(await feed.count()).toBeGreaterThan(entriesBefore);
      const recent = await http(later.url, "GET", "/v1/memories/recent?limit=10", { token: token.token });
      expect(recent.status).toBe(200);
      expect(recent.body.turns).toHaveLength(4);
    } finally {
      await later.close();
    }
  });

  it("keeps the graph of a ledger collection an earlier version created, and writes and replays through it", async () => {
    const token = tokens[olderGraph]!;
    await storeTurnsAndStop(token, "writeback-graph", 1);
    // Keyed markers as an earlier version created their collection: Chroma's default graph.
    const client = chromaClient(olderGraph);
    await client.deleteCollection({ name: "ledger-keyed" });
    await client.createCollection({
      name: "ledger-keyed",
      embeddingFunction: null,
      configuration: { hnsw: { space: "cosine" } },
      metadata: { embedding_model: "none", embedding_dim: 1 },
    } as never);
    const later = await startCairn([token]);
    try {
      const body = { ...turn("writeback-graph", 2), idempotency_key: "graph-2" };
      const first = await http(later.url, "POST", "/v1/memories", { token: token.token, body });
      expect(first.status).toBe(201);
      const again = await http(later.url, "POST", "/v1/memories", { token: token.token, body: turn("writeback-graph", 2) });
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ id: first.body.id, replayed: true });
      expect(await graph(olderGraph, "ledger-keyed")).toEqual({ max_neighbors: 16, ef_construction: 100 });
      expect(await graph(olderGraph, "ledger-slots")).toEqual({ max_neighbors: 2, ef_construction: 2 });
      const keyed = await client.getCollection({ name: "ledger-keyed", embeddingFunction: null } as never);
      expect(await keyed.count()).toBe(1);
    } finally {
      await later.close();
    }
  });
});
