import { describe, expect, it } from "vitest";
import { expectContractOutput } from "./support/contract-schemas.js";
import { AUDIT_STREAM } from "../src/ledger/audit-log.js";
import { feedStream } from "../src/ledger/change-feed.js";
import { itemsOf } from "../src/ledger/slot-items.js";
import { http, makeToken, mcpClient, startCairn, turn, uniqueWorkspace, useCairn, type TestToken } from "./support/harness.js";

/**
 * `add_memories`, the bulk write path of the importers, over both transports: each item keeps every guarantee
 * of `add_memory` (idempotency per item, recency order, audit entries, the lexical feed), one bad item fails
 * alone, and a body outside the contract is refused whole. Each test uses a workspace of its own.
 */

const ws = uniqueWorkspace("bulk");
const ops = makeToken(ws, "ops", "admin");
const dev = makeToken(ws, "dev");
const replayWs = uniqueWorkspace("bulkr");
const replayOps = makeToken(replayWs, "ops", "admin");
const mixedWs = uniqueWorkspace("bulkm");
const mixedOps = makeToken(mixedWs, "ops", "admin");
const limitWs = uniqueWorkspace("bulkl");
const limitOps = makeToken(limitWs, "ops", "admin");
const limitDev = makeToken(limitWs, "dev");
const mcpWs = uniqueWorkspace("bulkmcp");
const mcpOps = makeToken(mcpWs, "ops", "admin");
const mcpDev = makeToken(mcpWs, "dev");
const supersedeWs = uniqueWorkspace("bulks");
const supersedeOps = makeToken(supersedeWs, "ops", "admin");
const cairn = useCairn([ops, dev, replayOps, mixedOps, limitOps, limitDev, mcpOps, mcpDev, supersedeOps]);

const addMemories = (token: TestToken, memories: unknown[]) =>
  http(cairn.url, "POST", "/v1/memories/batch", { token: token.token, body: { memories } });

const recentIds = async (token: TestToken, extra = "") => {
  const res = await http(cairn.url, "GET", `/v1/memories/recent?limit=100${extra}`, { token: token.token });
  expect(res.status).toBe(200);
  return (res.body.turns as Array<{ id: string }>).map((t) => t.id);
};

const lexicalHits = async (token: TestToken, query: string) => {
  const res = await http(cairn.url, "POST", "/v1/memories/query", { token: token.token, body: { query, mode: "lexical", limit: 10 } });
  expect(res.status).toBe(200);
  return (res.body.hits as Array<{ memory: { id: string } }>).map((h) => h.memory.id);
};

const auditActions = async (token: TestToken, memoryId: string) => {
  const res = await http(cairn.url, "GET", `/v1/audit?memory_id=${memoryId}`, { token: token.token });
  expect(res.status).toBe(200);
  return (res.body.entries as Array<{ action: string; actor: string }>).map((e) => `${e.action} by ${e.actor}`);
};

const words = ["zirconium", "obsidian", "marzipan", "quokka", "tamarind", "bassoon"];
const batchOf = (session: string, count: number) =>
  Array.from({ length: count }, (_, i) =>
    turn(session, i + 1, {
      prompt: `Import step ${i + 1}: the ${words[i % words.length]} ledger`,
      idempotency_key: `${session}-${i + 1}`,
      author: "Ada Lovelace",
      source: "import",
      occurred_at: `2024-05-0${(i % 9) + 1}T10:00:00Z`,
    }),
  );

describe("add_memories over REST", () => {
  it("stores a batch in its order, found by recency, by words and in the audit log", async () => {
    const res = await addMemories(ops, batchOf("bulk-order", 5));
    expect(res.status).toBe(200);
    expectContractOutput("add_memories", res.body);
    expect(res.body).toMatchObject({ stored: 5, replayed: 0, failed: 0 });
    const ids = (res.body.results as Array<{ id: string; replayed: boolean }>).map((r) => {
      expect(r.replayed).toBe(false);
      return r.id;
    });
    expect(new Set(ids).size).toBe(5);

    // Newest first: the batch's last item is the agent's newest turn.
    expect(await recentIds(ops)).toEqual([...ids].reverse());
    // The change feed carried them to the lexical index: each word finds its own item, a word in none finds nothing.
    expect((await lexicalHits(ops, "marzipan"))[0]).toBe(ids[2]);
    expect((await lexicalHits(ops, "quokka"))[0]).toBe(ids[3]);
    expect(await lexicalHits(ops, "tungsten")).toEqual([]);

    const memory = await http(cairn.url, "GET", `/v1/memories/${ids[0]}`, { token: dev.token });
    expect(memory.status).toBe(200);
    expect(memory.body).toMatchObject({
      agent: "ops",
      author: "Ada Lovelace",
      source: "import",
      prompt: "Import step 1: the zirconium ledger",
      valid_from: "2024-05-01T10:00:00.000Z",
    });
    expect(await auditActions(ops, ids[0]!)).toEqual(["add by ops"]);
    expect(await auditActions(ops, ids[4]!)).toEqual(["add by ops"]);
  });

  it("takes one change-feed slot and one audit slot for a batch's turns, each entry with its own write", async () => {
    const batchWs = uniqueWorkspace("bulkslots");
    const batchOps = makeToken(batchWs, "ops", "admin");
    const local = await startCairn([batchOps]);
    try {
      const res = await http(local.url, "POST", "/v1/memories/batch", {
        token: batchOps.token,
        body: { memories: batchOf("bulk-slots", 6) },
      });
      expect(res.status).toBe(200);
      const ids = (res.body.results as Array<{ id: string }>).map((r) => r.id);
      const sequences = local.runtime.storage.sequences;
      // Six turns: six recency slots, but one feed slot and one audit slot holding six entries each.
      expect(await sequences.length(batchWs, "ops")).toBe(6);
      expect(await sequences.length(batchWs, feedStream("turns"))).toBe(1);
      expect(await sequences.length(batchWs, AUDIT_STREAM)).toBe(1);
      const turns = await (await local.runtime.store.collection(batchWs, "turns")).get({ ids });
      const writeOf = new Map(turns.map((t) => [t.id, t.metadata.write_id]));
      const feed = itemsOf((await sequences.read(batchWs, feedStream("turns"), [0])).get(0)!);
      expect(feed.map((e) => [e.record_id, e.write_id])).toEqual(ids.map((id) => [id, writeOf.get(id)]));
      const audit = itemsOf((await sequences.read(batchWs, AUDIT_STREAM, [0])).get(0)!);
      expect(audit.map((e) => [e.memory_id, e.write_id, e.provisional])).toEqual(ids.map((id) => [id, writeOf.get(id), true]));

      // Every reader finds them as it found a slot each: the lexical index, the audit log, verify.
      const hits = await http(local.url, "POST", "/v1/memories/query", {
        token: batchOps.token,
        body: { query: "tamarind", mode: "lexical", limit: 10 },
      });
      expect((hits.body.hits as Array<{ memory: { id: string } }>).map((h) => h.memory.id)[0]).toBe(ids[4]);
      const log = await http(local.url, "GET", "/v1/audit?limit=100", { token: batchOps.token });
      expect((log.body.entries as Array<{ action: string; memory_id: string }>).map((e) => [e.action, e.memory_id])).toEqual(
        ids.map((id) => ["add", id]),
      );
      const verify = await http(local.url, "GET", "/v1/admin/verify", { token: batchOps.token });
      expect(verify.body).toMatchObject({ healthy: true, problems: [] });
    } finally {
      await local.close();
    }
  });

  it("stores nothing twice when the whole batch is sent again", async () => {
    const batch = batchOf("bulk-replay", 4);
    const first = await addMemories(replayOps, batch);
    expect(first.body).toMatchObject({ stored: 4, replayed: 0, failed: 0 });
    const second = await addMemories(replayOps, batch);
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ stored: 0, replayed: 4, failed: 0 });
    expect(second.body.results).toEqual((first.body.results as Array<{ id: string }>).map((r) => ({ id: r.id, replayed: true })));
    const ids = (first.body.results as Array<{ id: string }>).map((r) => r.id);
    // Four turns, each once, with one audit entry each; a single add_memory of the same turn replays too.
    expect(await recentIds(replayOps)).toEqual([...ids].reverse());
    expect(await auditActions(replayOps, ids[1]!)).toEqual(["add by ops"]);
    const single = await http(cairn.url, "POST", "/v1/memories", { token: replayOps.token, body: batch[1] });
    expect(single.status).toBe(200);
    expect(single.body).toMatchObject({ id: ids[1], replayed: true });
    expect((await lexicalHits(replayOps, "obsidian"))[0]).toBe(ids[1]);
  });

  it("fails a conflicting or forgotten item alone, and answers a key repeated in the batch as its first use", async () => {
    const [kept, forgottenTurn] = (await addMemories(mixedOps, batchOf("bulk-mixed-old", 2))).body.results as Array<{ id: string }>;
    const forgot = await http(cairn.url, "POST", `/v1/memories/${forgottenTurn!.id}/forget`, {
      token: mixedOps.token,
      body: { reason: "held a secret" },
    });
    expect(forgot.status).toBe(200);
    const old = batchOf("bulk-mixed-old", 2);
    const a = turn("bulk-mixed", 1, { prompt: "The tamarind cache", idempotency_key: "mixed-a" });
    const b = turn("bulk-mixed", 2, { prompt: "The bassoon queue", idempotency_key: "mixed-b" });
    const plain = turn("bulk-mixed", 3, { prompt: "The quokka index" });
    const res = await addMemories(mixedOps, [
      a,
      { ...old[0], response: "A pelican outcome under the same key." }, // a conflict with what is stored
      b,
      old[1], // forgotten: never comes back
      a, // the same key and payload again: a replay of the first
      { ...b, response: "A pelican outcome under b's key." }, // a conflict with the first use of b's key
      plain,
      plain, // the same text in the same session without a key: a replay
      { ...plain, idempotency_key: "mixed-plain" }, // the same turn retried with a key: a replay of it
    ]);
    expect(res.status).toBe(200);
    expectContractOutput("add_memories", res.body);
    const results = res.body.results as Array<{ id?: string; replayed?: boolean; error?: { code: string } }>;
    expect(results.map((r) => r.error?.code ?? (r.replayed ? "replayed" : "stored"))).toEqual([
      "stored",
      "idempotency_conflict",
      "stored",
      "gone",
      "replayed",
      "idempotency_conflict",
      "stored",
      "replayed",
      "replayed",
    ]);
    expect(res.body).toMatchObject({ stored: 3, replayed: 3, failed: 3 });
    expect(results[4]!.id).toBe(results[0]!.id);
    expect(results[7]!.id).toBe(results[6]!.id);
    expect(results[8]!.id).toBe(results[6]!.id);

    // What was stored before is unchanged; the good items are stored once each, the bad ones not at all.
    const before = await http(cairn.url, "GET", `/v1/memories/${kept!.id}`, { token: mixedOps.token });
    expect(before.body.response).toBe(old[0]!.response);
    const stored = await http(cairn.url, "GET", `/v1/memories/${results[2]!.id}`, { token: mixedOps.token });
    expect(stored.body.response).toBe(b.response);
    const gone = await http(cairn.url, "GET", `/v1/memories/${forgottenTurn!.id}`, { token: mixedOps.token });
    expect(gone.status).toBe(410);
    expect(await recentIds(mixedOps, "&session_id=bulk-mixed")).toEqual([results[6]!.id, results[2]!.id, results[0]!.id]);
    expect(await lexicalHits(mixedOps, "pelican")).toEqual([]);
    expect((await lexicalHits(mixedOps, "tamarind"))[0]).toBe(results[0]!.id);
  });

  it("marks the memories an item supersedes as add_memory does, once, and fails an item naming a memory that is not there", async () => {
    const old = await http(cairn.url, "POST", "/v1/memories", { token: supersedeOps.token, body: turn("bulk-sup", 1) });
    expect(old.status).toBe(201);
    const missing = "t_00000000000000000000000000000000";
    const res = await addMemories(supersedeOps, [
      turn("bulk-sup", 2, { kind: "decision", supersedes: [old.body.id] }),
      turn("bulk-sup", 3, { supersedes: [missing] }),
      turn("bulk-sup", 4, { supersedes: [old.body.id] }), // superseded already by the first: left as the first marked it
    ]);
    expect(res.status).toBe(200);
    const results = res.body.results as Array<{ id?: string; error?: { code: string } }>;
    expect(results.map((r) => r.error?.code ?? "stored")).toEqual(["stored", "not_found", "stored"]);
    const replaced = await http(cairn.url, "GET", `/v1/memories/${old.body.id}`, { token: supersedeOps.token });
    expect(replaced.body).toMatchObject({ superseded_by: results[0]!.id, superseded_reason: `superseded by ${results[0]!.id}` });
    expect(replaced.body.corrections).toHaveLength(1);
    const replacement = await http(cairn.url, "GET", `/v1/memories/${results[0]!.id}`, { token: supersedeOps.token });
    expect(replacement.body).toMatchObject({ kind: "decision", supersedes: [old.body.id] });
    expect(await auditActions(supersedeOps, old.body.id)).toEqual(["add by ops", "supersede by ops"]);
    expect(await recentIds(supersedeOps)).toEqual([results[2]!.id, results[0]!.id, old.body.id]);
  });

  it("races add_memory of the same turns on one key: one record each, listed once, one add entry", async () => {
    const batch = batchOf("bulk-race", 3);
    const [bulk, ...singles] = await Promise.all([
      addMemories(supersedeOps, batch),
      ...batch.map((body) => http(cairn.url, "POST", "/v1/memories", { token: supersedeOps.token, body })),
    ]);
    expect(bulk.status).toBe(200);
    expect(bulk.body.failed).toBe(0);
    const ids = (bulk.body.results as Array<{ id: string; replayed: boolean }>).map((r) => r.id);
    expect(singles.map((r) => r.body.id)).toEqual(ids);
    // Each turn stored by exactly one of the two writers; the other replayed it.
    const replays = (bulk.body.results as Array<{ replayed: boolean }>).map(
      (r, i) => Number(r.replayed) + Number(singles[i]!.body.replayed),
    );
    expect(replays).toEqual([1, 1, 1]);
    // Which writer took each slot decides the order here; that each turn is listed once is what holds.
    expect((await recentIds(supersedeOps, "&session_id=bulk-race")).sort()).toEqual([...ids].sort());
    for (const id of ids) expect(await auditActions(supersedeOps, id)).toEqual(["add by ops"]);
  });

  it("refuses a body outside the contract whole, storing nothing; an agent token may not call it", async () => {
    const tooMany = Array.from({ length: 501 }, (_, i) => turn("bulk-limit", i));
    const over = await addMemories(limitOps, tooMany);
    expect(over.status).toBe(400);
    expect(over.body.code).toBe("validation_failed");
    const badItem = await addMemories(limitOps, [turn("bulk-limit", 1), { ...turn("bulk-limit", 2), prompt: "" }]);
    expect(badItem.status).toBe(400);
    expect(badItem.body.code).toBe("validation_failed");
    // Text that cannot be stored as it was sent is outside the contract too, wherever it is.
    for (const [field, value] of [
      ["prompt", "a lone \ud800 surrogate"],
      ["tags", ["ok", "\udc00"]],
      ["author", "\ud800"],
    ] as const) {
      const illFormed = await addMemories(limitOps, [turn("bulk-limit", 1), { ...turn("bulk-limit", 2), [field]: value }]);
      expect([illFormed.status, illFormed.body.code], field).toEqual([400, "validation_failed"]);
      expect(illFormed.body.errors.map((e: { path: string }) => e.path)).toEqual([
        field === "tags" ? "memories/1/tags/1" : `memories/1/${field}`,
      ]);
    }
    const empty = await addMemories(limitOps, []);
    expect(empty.status).toBe(400);
    expect(await recentIds(limitOps)).toEqual([]);

    const denied = await addMemories(limitDev, [turn("bulk-limit", 1)]);
    expect(denied.status).toBe(403);
    expect(denied.body.code).toBe("forbidden");
    expect(await recentIds(limitDev)).toEqual([]);

    // The same items within the limits, sent by the admin, are stored.
    const ok = await addMemories(limitOps, [turn("bulk-limit", 1), turn("bulk-limit", 2)]);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ stored: 2, failed: 0 });
    expect(await recentIds(limitOps)).toHaveLength(2);
  });
});

describe("add_memories over MCP", () => {
  it("stores a batch once for an admin, and is not a tool of an agent", async () => {
    const client = await mcpClient(cairn.url, mcpOps.token);
    const agent = await mcpClient(cairn.url, mcpDev.token);
    try {
      const memories = batchOf("bulk-mcp", 3);
      const first = (await client.callTool({ name: "add_memories", arguments: { memories } })) as any;
      expect(first.isError).toBeFalsy();
      expectContractOutput("add_memories", first.structuredContent);
      expect(first.structuredContent).toMatchObject({ stored: 3, replayed: 0, failed: 0 });
      const second = (await client.callTool({ name: "add_memories", arguments: { memories } })) as any;
      expect(second.structuredContent).toMatchObject({ stored: 0, replayed: 3, failed: 0 });
      const ids = (first.structuredContent.results as Array<{ id: string }>).map((r) => r.id);
      expect(await recentIds(mcpOps)).toEqual([...ids].reverse());

      const adminTools = (await client.listTools()).tools.map((t) => t.name);
      const agentTools = (await agent.listTools()).tools.map((t) => t.name);
      expect(adminTools).toContain("add_memories");
      expect(agentTools).toContain("add_memory");
      expect(agentTools).not.toContain("add_memories");
      const denied = (await agent.callTool({ name: "add_memories", arguments: { memories } })) as any;
      expect(denied.isError).toBe(true);
      expect(await recentIds(mcpDev)).toEqual([]);
    } finally {
      await client.close();
      await agent.close();
    }
  });
});
