import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOpenAIStub, type OpenAIStub } from "../../../testing/openai-stub.js";
import { createEmbedder } from "../src/embeddings/create.js";
import { silentLogger } from "../src/logger.js";
import { expectContractOutput } from "./support/contract-schemas.js";
import { expectNoLeak } from "./support/no-leak.js";
import { chromaClient, http, makeToken, mcpClient, startCairn, turn, uniqueWorkspace, useCairn } from "./support/harness.js";

/**
 * The operators' operations behind the `cairn` CLI, over both transports: export, import (restore),
 * integrity report, re-embedding. Each test uses workspaces of its own.
 */

const source = uniqueWorkspace("exp");
const target = uniqueWorkspace("imp");
const damaged = uniqueWorkspace("dmg");
const healthy = uniqueWorkspace("ok");
const mcpSource = uniqueWorkspace("mexp");
const mcpTarget = uniqueWorkspace("mimp");
const dev = makeToken(source, "dev");
const ops = makeToken(source, "ops", "admin");
const targetOps = makeToken(target, "ops", "admin");
const targetDev = makeToken(target, "dev");
const damagedDev = makeToken(damaged, "dev");
const damagedOps = makeToken(damaged, "ops", "admin");
const healthyDev = makeToken(healthy, "dev");
const healthyOps = makeToken(healthy, "ops", "admin");
const mcpDev = makeToken(mcpSource, "dev");
const mcpOps = makeToken(mcpSource, "ops", "admin");
const mcpTargetOps = makeToken(mcpTarget, "ops", "admin");
const mcpTargetDev = makeToken(mcpTarget, "dev");
const mailSource = uniqueWorkspace("mailexp");
const mailTarget = uniqueWorkspace("mailimp");
const mailCrew = (workspace: string) => ({
  alice: makeToken(workspace, "alice"),
  bob: makeToken(workspace, "bob"),
  ops: makeToken(workspace, "ops", "admin"),
});
const mailFrom = mailCrew(mailSource);
const mailTo = mailCrew(mailTarget);
const cairn = useCairn([
  ...Object.values(mailFrom),
  ...Object.values(mailTo),
  dev,
  ops,
  targetOps,
  targetDev,
  damagedDev,
  damagedOps,
  healthyDev,
  healthyOps,
  mcpDev,
  mcpOps,
  mcpTargetOps,
  mcpTargetDev,
]);

const add = async (token: string, body: Record<string, unknown>) => {
  const res = await http(cairn.url, "POST", "/v1/memories", { token, body });
  expect(res.status).toBe(201);
  return res.body.id as string;
};

async function exportAll(token: string, collection: string) {
  const records: any[] = [];
  let after: string | null = null;
  let stamp: unknown;
  do {
    const query: string = `collection=${collection}&limit=2${after ? `&after=${after}` : ""}`;
    const page = await http(cairn.url, "GET", `/v1/admin/records?${query}`, { token });
    expect(page.status).toBe(200);
    expectContractOutput("export_records", page.body);
    records.push(...page.body.records);
    stamp = page.body.stamp;
    after = page.body.next_cursor;
  } while (after);
  return { records, stamp };
}

const importRecords = (token: string, body: Record<string, unknown>) => http(cairn.url, "POST", "/v1/admin/records", { token, body });

describe("export_records over REST", () => {
  it("pages through turns with documents, metadata and vectors, and lists tombstones without content", async () => {
    const ids = [];
    for (let n = 1; n <= 5; n++) ids.push(await add(dev.token, turn("exp-1", n)));
    const forgotten = await add(dev.token, turn("exp-1", 6, { prompt: "the password is hunter2" }));
    await http(cairn.url, "POST", `/v1/memories/${forgotten}/forget`, { token: dev.token, body: { reason: "secret" } });

    const { records, stamp } = await exportAll(ops.token, "turns");
    expect(stamp).toEqual({ model: "use-lite-512", dimension: 512 });
    expect(records.map((r) => r.id)).toEqual(ids);
    expect(records[0].document).toContain(turn("exp-1", 1).prompt);
    expect(records[0].metadata).toMatchObject({ agent: "dev", session_id: "exp-1", seq: 0 });
    expect(records[0].embedding).toHaveLength(512);

    const tombstones = await exportAll(ops.token, "tombstones");
    expect(tombstones.stamp).toBeNull();
    expect(tombstones.records).toEqual([
      {
        id: forgotten,
        document: "",
        metadata: { forgotten_at: expect.any(Number), forgotten_by: "dev", reason: "secret", write_id: expect.any(String) },
      },
    ]);
    expect(JSON.stringify(tombstones.records)).not.toContain("hunter2");

    const lean = await http(cairn.url, "GET", "/v1/admin/records?collection=turns&include_embeddings=false&limit=1", { token: ops.token });
    expect(lean.body.records[0].embedding).toBeUndefined();
    expect(lean.body.records[0].id).toBe(ids[0]);
  });

  it("needs an admin token and refuses a cursor of another collection", async () => {
    const agent = await http(cairn.url, "GET", "/v1/admin/records?collection=turns", { token: dev.token });
    expect([agent.status, agent.body.code]).toEqual([403, "forbidden"]);
    const page = await http(cairn.url, "GET", "/v1/admin/records?collection=turns&limit=1", { token: ops.token });
    expect(page.body.next_cursor).toEqual(expect.any(String));
    const crossed = await http(cairn.url, "GET", `/v1/admin/records?collection=summaries&after=${page.body.next_cursor}`, {
      token: ops.token,
    });
    expect([crossed.status, crossed.body.code]).toEqual([400, "invalid_cursor"]);
    const missing = await http(cairn.url, "GET", "/v1/admin/records", { token: ops.token });
    expect([missing.status, missing.body.code]).toEqual([400, "validation_failed"]);
    expectNoLeak(missing.text, [ops.token]);
  });
});

describe("import_records over REST", () => {
  it("restores turns into another workspace: same records, same order, found by the same queries; twice stores nothing twice", async () => {
    const ids = [];
    for (let n = 1; n <= 4; n++) {
      ids.push(await add(dev.token, turn("imp-1", n, { prompt: `Tune the zircon cache, step ${n}`, tags: ["cache"] })));
    }
    const { records, stamp } = await exportAll(ops.token, "turns");
    const tombstones = await exportAll(ops.token, "tombstones");
    const mine = records.filter((r) => r.metadata.session_id === "imp-1");
    expect(mine.map((r) => r.id)).toEqual(ids);

    const firstTombs = await importRecords(targetOps.token, { collection: "tombstones", records: tombstones.records });
    expect(firstTombs.status).toBe(200);
    expect(firstTombs.body).toMatchObject({ stored: tombstones.records.length, skipped: 0 });
    // Given newest first, restored oldest first all the same.
    const first = await importRecords(targetOps.token, { collection: "turns", stamp, records: [...mine].reverse() });
    expect(first.status).toBe(200);
    expectContractOutput("import_records", first.body);
    expect(first.body).toEqual({ workspace: target, collection: "turns", stored: 4, skipped: 0, forgotten: 0, reembedded: 0 });

    const recent = await http(cairn.url, "GET", "/v1/memories/recent?agent=dev&detail=full", { token: targetDev.token });
    expect(recent.body.turns.map((t: { id: string }) => t.id)).toEqual([...ids].reverse());
    const original = await http(cairn.url, "GET", `/v1/memories/${ids[0]}`, { token: dev.token });
    const restored = await http(cairn.url, "GET", `/v1/memories/${ids[0]}`, { token: targetDev.token });
    expect(restored.body).toEqual(original.body);
    const query = { query: "zircon cache step 3", limit: 3 };
    const there = await http(cairn.url, "POST", "/v1/memories/query", { token: dev.token, body: query });
    const here = await http(cairn.url, "POST", "/v1/memories/query", { token: targetDev.token, body: query });
    expect(here.body.hits[0].memory.id).toBe(ids[2]);
    expect(here.body.hits[0].matched_by).toEqual(there.body.hits[0].matched_by);
    expect(here.body.hits[0].matched_by).toContain("lexical");

    const again = await importRecords(targetOps.token, { collection: "turns", stamp, records: mine });
    expect(again.body).toMatchObject({ stored: 0, skipped: 4 });
    const after = await http(cairn.url, "GET", "/v1/memories/recent?agent=dev&limit=100", { token: targetDev.token });
    expect(after.body.turns).toHaveLength(4);
    const audit = await http(cairn.url, "GET", "/v1/audit?limit=500", { token: targetOps.token });
    expect(
      audit.body.entries
        .filter((e: { action: string }) => e.action === "restore")
        .map((e: { memory_id: string }) => e.memory_id)
        .sort(),
    ).toEqual([...ids].sort());
    const verify = await http(cairn.url, "GET", "/v1/admin/verify", { token: targetOps.token });
    expect(verify.body).toMatchObject({ healthy: true, problems: [] });
  });

  it("does not bring back a forgotten memory, and forgets a restored tombstone's record", async () => {
    const kept = await add(dev.token, turn("imp-forget", 1));
    const doomed = await add(dev.token, turn("imp-forget", 2, { prompt: "token sk-live-123" }));
    const { records, stamp } = await exportAll(ops.token, "turns");
    const backup = records.filter((r) => r.metadata.session_id === "imp-forget");
    // Restored first, then forgotten at the source: the backup is older than the forget.
    const first = await importRecords(targetOps.token, { collection: "turns", stamp, records: backup });
    expect(first.body).toMatchObject({ stored: 2 });
    await http(cairn.url, "POST", `/v1/memories/${doomed}/forget`, { token: dev.token, body: { reason: "leaked key" } });
    const tombstones = (await exportAll(ops.token, "tombstones")).records.filter((r) => r.id === doomed);
    expect(tombstones).toHaveLength(1);

    const restoredTomb = await importRecords(targetOps.token, { collection: "tombstones", records: tombstones });
    expect(restoredTomb.body).toMatchObject({ stored: 1, forgotten: 1 });
    expect((await http(cairn.url, "GET", `/v1/memories/${doomed}`, { token: targetDev.token })).status).toBe(410);
    expect((await http(cairn.url, "GET", `/v1/memories/${kept}`, { token: targetDev.token })).status).toBe(200);
    // The old backup again: the forgotten turn stays forgotten, the other one is there already.
    const again = await importRecords(targetOps.token, { collection: "turns", stamp, records: backup });
    expect(again.body).toMatchObject({ stored: 0, skipped: 1, forgotten: 1 });
    const hits = await http(cairn.url, "POST", "/v1/memories/query", {
      token: targetDev.token,
      body: { query: "Reasoning for step: weighed the options and chose the simplest", limit: 100 },
    });
    expect(hits.body.hits.map((h: { memory: { id: string } }) => h.memory.id)).not.toContain(doomed);
    expect(hits.body.hits.map((h: { memory: { id: string } }) => h.memory.id)).toContain(kept);
  });

  it("a tombstone restored over a memory written here keeps that memory's add entry in the audit log", async () => {
    const written = await add(dev.token, turn("imp-audit", 1));
    const { records, stamp } = await exportAll(ops.token, "turns");
    // Forgotten in the other workspace, whose backup then comes back here with its tombstone.
    await importRecords(targetOps.token, { collection: "turns", stamp, records: records.filter((r) => r.id === written) });
    expect(
      (await http(cairn.url, "POST", `/v1/memories/${written}/forget`, { token: targetDev.token, body: { reason: "leaked key" } })).status,
    ).toBe(200);
    const tombstones = (await exportAll(targetOps.token, "tombstones")).records.filter((r) => r.id === written);
    const actions = async () =>
      (
        (await http(cairn.url, "GET", `/v1/audit?memory_id=${written}`, { token: ops.token })).body.entries as Array<{ action: string }>
      ).map((e) => e.action);
    expect(await actions()).toEqual(["add"]);
    expect((await importRecords(ops.token, { collection: "tombstones", records: tombstones })).body).toMatchObject({ forgotten: 1 });
    expect((await http(cairn.url, "GET", `/v1/memories/${written}`, { token: dev.token })).status).toBe(410);
    expect(await actions()).toEqual(["add", "forget"]);
  });

  it("re-embeds records whose vectors came from another model, and refuses malformed records whole", async () => {
    const id = await add(dev.token, turn("imp-stamp", 1, { prompt: "quartz scheduler migration" }));
    const { records } = await exportAll(ops.token, "turns");
    const record = records.find((r) => r.id === id);
    const foreign = await importRecords(targetOps.token, {
      collection: "turns",
      stamp: { model: "another-model", dimension: 3 },
      records: [{ ...record, embedding: [0.1, 0.2, 0.3] }],
    });
    expect(foreign.body).toMatchObject({ stored: 1, reembedded: 1 });
    const found = await http(cairn.url, "POST", "/v1/memories/query", {
      token: targetDev.token,
      body: { query: "quartz scheduler migration", mode: "semantic" },
    });
    expect(found.body.hits[0].memory.id).toBe(id);

    const broken = { ...record, id: `t_${"c".repeat(32)}`, metadata: { ...record.metadata, agent: 7 } };
    const fine = { ...record, id: `t_${"d".repeat(32)}` };
    const refused = await importRecords(targetOps.token, { collection: "turns", records: [fine, broken] });
    expect([refused.status, refused.body.code]).toEqual([400, "validation_failed"]);
    expect(refused.body.errors[0].path).toBe("records/1/metadata/agent");
    expect((await http(cairn.url, "GET", `/v1/memories/${fine.id}`, { token: targetDev.token })).status).toBe(404);
    const agent = await importRecords(targetDev.token, { collection: "turns", records: [fine] });
    expect([agent.status, agent.body.code]).toEqual([403, "forbidden"]);
    const accepted = await importRecords(targetOps.token, { collection: "turns", records: [fine] });
    expect(accepted.body).toMatchObject({ stored: 1, reembedded: 1 });
  });
});

describe("export_records and import_records of the mailbox over REST", () => {
  type Box = { messages: Array<{ id: string; read: boolean }>; unread: number };
  const box = async (token: string) => {
    const res = await http<Box>(cairn.url, "GET", "/v1/messages?limit=50&detail=full", { token });
    expect(res.status).toBe(200);
    return res.body;
  };

  it("lists messages and read marks page by page and restores them once: same boxes, same unread counts; a damaged record stores nothing", async () => {
    const sent: string[] = [];
    for (const [from, to, subject] of [
      [mailFrom.alice, "bob", "Rotate the keys"],
      [mailFrom.bob, "team", "Deploy at noon"],
      [mailFrom.alice, "bob", "Keys rotated"],
    ] as const) {
      const res = await http(cairn.url, "POST", "/v1/messages", { token: from.token, body: { to, subject, body: `${subject}.` } });
      expect(res.status).toBe(201);
      sent.push(res.body.id as string);
    }
    expect(
      (await http(cairn.url, "POST", "/v1/messages/ack", { token: mailFrom.bob.token, body: { message_ids: [sent[0]] } })).status,
    ).toBe(200);

    const { records, stamp } = await exportAll(mailFrom.ops.token, "messages");
    expect(stamp).toBeNull();
    const messages = records.filter((r) => r.metadata.kind === "message");
    const marks = records.filter((r) => r.metadata.kind === "read");
    expect(messages.map((r) => r.id)).toEqual(sent);
    expect(messages[2]).toMatchObject({ document: "Keys rotated.", metadata: { from: "alice", to: "bob", subject: "Keys rotated" } });
    // bob's mark of the first message, and his own of his team message.
    expect(marks.map((r) => [r.metadata.reader, r.metadata.message_id]).sort()).toEqual(
      [
        ["bob", sent[0]],
        ["bob", sent[1]],
      ].sort(),
    );
    expect(records.every((r) => r.embedding === undefined)).toBe(true);

    // One damaged record refuses the batch whole: nothing is stored, not even the sound ones.
    const brokenTime = { ...messages[2], metadata: { ...messages[2].metadata, sent_at: "yesterday" } };
    const refused = await importRecords(mailTo.ops.token, { collection: "messages", records: [messages[0], brokenTime] });
    expect([refused.status, refused.body.code]).toEqual([400, "validation_failed"]);
    expect(refused.body.errors[0].path).toBe("records/1/metadata/sent_at");
    const brokenMark = { ...marks[0], metadata: { ...marks[0].metadata, message_id: "not-a-message" } };
    const refusedMark = await importRecords(mailTo.ops.token, { collection: "messages", records: [messages[0], brokenMark] });
    expect([refusedMark.status, refusedMark.body.code]).toEqual([400, "validation_failed"]);
    expect(refusedMark.body.errors[0].path).toBe("records/1/metadata/message_id");
    const badReader = { ...marks[0], metadata: { ...marks[0].metadata, reader: "bob:x" } };
    const refusedReader = await importRecords(mailTo.ops.token, { collection: "messages", records: [messages[0], badReader] });
    expect([refusedReader.status, refusedReader.body.code]).toEqual([400, "validation_failed"]);
    expect(refusedReader.body.errors[0].path).toBe("records/1/metadata/reader");
    expect(await box(mailTo.bob.token)).toMatchObject({ messages: [], unread: 0 });
    expect((await exportAll(mailTo.ops.token, "messages")).records).toEqual([]);

    // A mark of a message not in its reader's inbox (alice's direct message to bob, marked by alice) would
    // take one off alice's unread count: it is skipped.
    const strayMark = { id: `m_${"e".repeat(32)}`, document: "", metadata: { kind: "read", reader: "alice", message_id: sent[0] } };
    const restored = await importRecords(mailTo.ops.token, { collection: "messages", records: [...records, strayMark] });
    expect(restored.status).toBe(200);
    expectContractOutput("import_records", restored.body);
    // bob's own mark of his team message comes back as it is posted again: present, so skipped.
    expect(restored.body).toMatchObject({ collection: "messages", stored: 4, skipped: 2 });
    for (const agent of ["alice", "bob"] as const) {
      const there = await box(mailFrom[agent].token);
      const here = await box(mailTo[agent].token);
      expect(here.messages.length).toBeGreaterThan(0);
      expect(here).toEqual(there);
    }
    expect((await box(mailTo.alice.token)).unread).toBe(1);
    const bobs = await box(mailTo.bob.token);
    expect(bobs.unread).toBe(1);
    expect(bobs.messages.map((m) => [m.id, m.read])).toEqual([
      [sent[2], false],
      [sent[1], true],
      [sent[0], true],
    ]);

    const again = await importRecords(mailTo.ops.token, { collection: "messages", records });
    expect(again.body).toMatchObject({ stored: 0, skipped: 5 });
    expect((await exportAll(mailTo.ops.token, "messages")).records.sort((a, b) => (a.id < b.id ? -1 : 1))).toEqual(
      [...records].sort((a, b) => (a.id < b.id ? -1 : 1)),
    );
    expect(await box(mailTo.bob.token)).toEqual(bobs);
  });
});

describe("import_records beside other writers", () => {
  it("two imports and new writes of the same agents at once: every turn stored once and reachable in order", async () => {
    const ws = uniqueWorkspace("race");
    const writer = makeToken(ws, "dev");
    const admin = makeToken(ws, "ops", "admin");
    const other = await startCairn([writer, admin]);
    const replica = await startCairn([writer, admin]);
    try {
      for (let n = 1; n <= 10; n++) await add(dev.token, turn("race-old", n));
      const { records, stamp } = await exportAll(ops.token, "turns");
      const fromDev = records.filter((r) => r.metadata.session_id === "race-old");
      expect(fromDev).toHaveLength(10);
      const half = Math.floor(fromDev.length / 2);
      const post = (url: URL, batch: unknown[]) =>
        http(url, "POST", "/v1/admin/records", { token: admin.token, body: { collection: "turns", stamp, records: batch } });
      const results = await Promise.all([
        post(other.url, fromDev.slice(0, half)),
        post(replica.url, fromDev.slice(half)),
        post(replica.url, fromDev),
        ...[1, 2, 3].map((n) => http(other.url, "POST", "/v1/memories", { token: writer.token, body: turn("race-new", n) })),
      ]);
      expect(results.slice(3).map((r) => r.status)).toEqual([201, 201, 201]);
      const imports = results.slice(0, 3).map((r) => r.body as { stored: number; skipped: number });
      expect(imports.reduce((n, r) => n + r.stored, 0)).toBe(fromDev.length);
      expect(imports.reduce((n, r) => n + r.stored + r.skipped, 0)).toBe(fromDev.length * 2);
      const recent = await http(other.url, "GET", "/v1/memories/recent?limit=100", { token: writer.token });
      expect(recent.body.turns).toHaveLength(fromDev.length + 3);
      expect(new Set(recent.body.turns.map((t: { id: string }) => t.id)).size).toBe(fromDev.length + 3);
      // Overlapping imports race on the same ids: the losers' slots and feed entries are what verify reports,
      // and all that repair_store has to retire.
      const imported = new Set(fromDev.map((r) => r.id));
      const found = await http(replica.url, "GET", "/v1/admin/verify", { token: admin.token });
      expect(Object.keys(found.body.problem_counts).filter((c) => c !== "orphan_slot" && c !== "duplicate_feed_entry")).toEqual([]);
      expect(found.body.problems.every((p: { id: string }) => imported.has(p.id))).toBe(true);
      const repaired = await http(replica.url, "POST", "/v1/admin/repair", { token: admin.token, body: { apply: true } });
      expect(repaired.body.memories).toBe(new Set(found.body.problems.map((p: { id: string }) => p.id)).size);
      const verify = await http(replica.url, "GET", "/v1/admin/verify", { token: admin.token });
      expect(verify.body).toMatchObject({ healthy: true, problems: [] });
      expect(verify.body.collections[0].count).toBe(fromDev.length + 3);
      const after = await http(other.url, "GET", "/v1/memories/recent?limit=100", { token: writer.token });
      expect(after.body.turns.map((t: { id: string }) => t.id)).toEqual(recent.body.turns.map((t: { id: string }) => t.id));
    } finally {
      await other.close();
      await replica.close();
    }
  });
});

describe("verify_store over REST", () => {
  it("passes a healthy store and catches one damaged behind memory-core's back", async () => {
    for (const [token, ws] of [
      [healthyDev, healthy],
      [damagedDev, damaged],
    ] as const) {
      for (let n = 1; n <= 3; n++) await add(token.token, turn(`${ws}-s`, n));
      await cairn.runtime.services.writes.putSummary(ws, {
        session_id: `${ws}-s`,
        agents: ["dev"],
        title: "t",
        summary: "s",
        decisions: [],
        open_questions: [],
        next_steps: [],
        turn_count: 3,
        first_turn_at: new Date().toISOString(),
        last_turn_at: new Date().toISOString(),
        method: "extractive",
        generated_at: new Date().toISOString(),
      });
    }
    const good = await http(cairn.url, "GET", "/v1/admin/verify", { token: healthyOps.token });
    expect(good.status).toBe(200);
    expectContractOutput("verify_store", good.body);
    expect(good.body).toMatchObject({ workspace: healthy, healthy: true, problems: [], problem_counts: {}, tombstones: 0 });
    expect(good.body.collections.map((c: { collection: string; count: number }) => [c.collection, c.count]).slice(0, 2)).toEqual([
      ["turns", 3],
      ["summaries", 1],
    ]);
    expect(good.body.slots_checked).toBeGreaterThan(6);

    // Damage: a turn deleted directly in Chroma, and a collection stamped with another model.
    const recent = await http(cairn.url, "GET", "/v1/memories/recent", { token: damagedDev.token });
    const victim = recent.body.turns[1].id;
    await (await cairn.runtime.store.collection(damaged, "turns")).delete([victim]);
    const chroma = chromaClient(damaged);
    const summaries = await chroma.getCollection({ name: "summaries", embeddingFunction: null } as never);
    await summaries.modify({ metadata: { embedding_model: "old-model", embedding_dim: 512 } });

    const bad = await http(cairn.url, "GET", "/v1/admin/verify", { token: damagedOps.token });
    expectContractOutput("verify_store", bad.body);
    expect(bad.body.healthy).toBe(false);
    expect(bad.body.problem_counts).toEqual({ dangling_slot: 2, stamp_mismatch: 1 });
    expect(bad.body.problems.filter((p: { check: string }) => p.check === "dangling_slot").map((p: { id: string }) => p.id)).toEqual([
      victim,
      victim,
    ]);
    expect(bad.body.problems.find((p: { check: string }) => p.check === "stamp_mismatch").collection).toBe("summaries");
    // The healthy one still passes beside it.
    expect((await http(cairn.url, "GET", "/v1/admin/verify", { token: healthyOps.token })).body.healthy).toBe(true);
    const agent = await http(cairn.url, "GET", "/v1/admin/verify", { token: damagedDev.token });
    expect(agent.status).toBe(403);
  });
});

describe("reembed_records over REST", () => {
  let stub: OpenAIStub;
  beforeAll(async () => {
    stub = await startOpenAIStub({ dimension: 24 });
  });
  afterAll(() => stub?.close());

  it("moves a workspace to a new embedding model batch by batch; queries answer reembed_required until it is done", async () => {
    const ws = uniqueWorkspace("reemb");
    const writer = makeToken(ws, "dev");
    const admin = makeToken(ws, "ops", "admin");
    const local = await startCairn([writer, admin]);
    const ids: string[] = [];
    try {
      for (let n = 1; n <= 5; n++) {
        const res = await http(local.url, "POST", "/v1/memories", {
          token: writer.token,
          body: turn("reemb", n, { prompt: `basalt pipeline stage ${n}` }),
        });
        ids.push(res.body.id);
      }
      const current = await http(local.url, "POST", "/v1/admin/reembed", { token: admin.token, body: {} });
      expect(current.body).toMatchObject({ done: true, processed: 0 });
    } finally {
      await local.close();
    }
    const embedder = await createEmbedder({ kind: "openai", baseUrl: stub.baseUrl, model: "stub-24", apiKey: undefined }, silentLogger);
    await expect(startCairn([writer, admin], { embedder })).rejects.toMatchObject({ code: "reembed_required" });
    const maintenance = await startCairn([writer, admin], { embedder, maintenance: true });
    try {
      const refused = await http(maintenance.url, "POST", "/v1/memories/query", {
        token: writer.token,
        body: { query: "basalt pipeline" },
      });
      expect([refused.status, refused.body.code]).toEqual([503, "reembed_required"]);
      expect(refused.body.hint).toContain("cairn reembed");
      expect((await http(maintenance.url, "GET", "/readyz")).status).toBe(503);

      const first = await http(maintenance.url, "POST", "/v1/admin/reembed", { token: admin.token, body: { limit: 2 } });
      expect(first.status).toBe(200);
      expectContractOutput("reembed_records", first.body);
      expect(first.body).toMatchObject({ done: false, processed: 2, embedder: { model: "openai:stub-24", dimension: 24 } });
      expect(first.body.collections[0]).toEqual({ collection: "turns", state: "reembedding", reembedded: 2, total: 5 });
      let progress = first.body;
      while (!progress.done)
        progress = (await http(maintenance.url, "POST", "/v1/admin/reembed", { token: admin.token, body: { limit: 2 } })).body;
      expect(progress.collections[0]).toEqual({ collection: "turns", state: "current", reembedded: 5, total: 5 });

      const hit = await http(maintenance.url, "POST", "/v1/memories/query", {
        token: writer.token,
        body: { query: "basalt pipeline stage 4" },
      });
      expect(hit.status).toBe(200);
      expect(hit.body.hits[0].memory.id).toBe(ids[3]);
      const recent = await http(maintenance.url, "GET", "/v1/memories/recent", { token: writer.token });
      expect(recent.body.turns.map((t: { id: string }) => t.id)).toEqual([...ids].reverse());
      expect((await http(maintenance.url, "GET", "/readyz")).status).toBe(200);
      const verify = await http(maintenance.url, "GET", "/v1/admin/verify", { token: admin.token });
      expect(verify.body).toMatchObject({ healthy: true, embedder: { model: "openai:stub-24", dimension: 24 } });
      // The staging collection took the name: a plain start with the new model accepts the workspace.
      const plain = await startCairn([writer, admin], { embedder });
      await plain.close();
    } finally {
      await maintenance.close();
    }
  });
});

describe("a re-embedding swap cut short", () => {
  it("is finished by the next start: the complete staging collection replaces the old one", async () => {
    const ws = uniqueWorkspace("swap");
    const writer = makeToken(ws, "dev");
    const first = await startCairn([writer]);
    const ids: string[] = [];
    try {
      for (let n = 1; n <= 3; n++)
        ids.push((await http(first.url, "POST", "/v1/memories", { token: writer.token, body: turn("swap", n) })).body.id);
    } finally {
      await first.close();
    }
    // The state a crash between marking the staging collection complete and renaming it leaves behind.
    const chroma = chromaClient(ws);
    const turns = await chroma.getCollection({ name: "turns", embeddingFunction: null } as never);
    // A turn's text is one of its metadata keys (store/metadata-layout.ts): it has no Chroma document to copy.
    const all = await turns.get({ include: ["embeddings", "metadatas"] as never });
    const staging = await chroma.createCollection({
      name: "turns-reembed",
      embeddingFunction: null,
      configuration: { hnsw: { space: "cosine" } },
      metadata: { embedding_model: "use-lite-512", embedding_dim: 512, reembed_complete: true },
    } as never);
    await staging.add({
      ids: all.ids,
      embeddings: all.embeddings as number[][],
      metadatas: all.metadatas as never,
    });
    await turns.modify({ metadata: { embedding_model: "old-model", embedding_dim: 512 } });

    const next = await startCairn([writer]);
    try {
      const recent = await http(next.url, "GET", "/v1/memories/recent", { token: writer.token });
      expect(recent.status).toBe(200);
      expect(recent.body.turns.map((t: { id: string }) => t.id)).toEqual([...ids].reverse());
      const names = (await chroma.listCollections()).map((c) => c.name).sort();
      expect(names).toContain("turns");
      expect(names).not.toContain("turns-reembed");
    } finally {
      await next.close();
    }
  });
});

describe("export_records over MCP", () => {
  it("pages through the workspace's turns", async () => {
    const client = await mcpClient(cairn.url, mcpOps.token);
    try {
      const id = await add(mcpDev.token, turn("mcp-exp", 1));
      const result = (await client.callTool({
        name: "export_records",
        arguments: { collection: "turns", include_embeddings: false },
      })) as any;
      expect(result.isError).toBeFalsy();
      expectContractOutput("export_records", result.structuredContent);
      expect(result.structuredContent.records.map((r: { id: string }) => r.id)).toContain(id);
      const agent = await mcpClient(cairn.url, mcpDev.token);
      const denied = (await agent.callTool({ name: "export_records", arguments: { collection: "turns" } })) as any;
      expect(denied.isError).toBe(true);
      expect(JSON.parse(denied.content[0].text).code).toBe("forbidden");
      await agent.close();
    } finally {
      await client.close();
    }
  });
});

describe("import_records over MCP", () => {
  it("stores exported records once", async () => {
    const id = await add(mcpDev.token, turn("mcp-imp", 1, { prompt: "obsidian build cache" }));
    const { records, stamp } = await exportAll(mcpOps.token, "turns");
    const client = await mcpClient(cairn.url, mcpTargetOps.token);
    try {
      const batch = records.filter((r) => r.id === id);
      const first = (await client.callTool({ name: "import_records", arguments: { collection: "turns", stamp, records: batch } })) as any;
      expectContractOutput("import_records", first.structuredContent);
      expect(first.structuredContent).toMatchObject({ stored: 1, skipped: 0 });
      const second = (await client.callTool({ name: "import_records", arguments: { collection: "turns", stamp, records: batch } })) as any;
      expect(second.structuredContent).toMatchObject({ stored: 0, skipped: 1 });
      const got = await http(cairn.url, "GET", `/v1/memories/${id}`, { token: mcpTargetDev.token });
      expect(got.body.prompt).toBe("obsidian build cache");
    } finally {
      await client.close();
    }
  });
});

describe("verify_store over MCP", () => {
  it("reports a healthy workspace", async () => {
    await add(mcpDev.token, turn("mcp-verify", 1));
    const client = await mcpClient(cairn.url, mcpOps.token);
    try {
      const result = (await client.callTool({ name: "verify_store", arguments: {} })) as any;
      expectContractOutput("verify_store", result.structuredContent);
      expect(result.structuredContent).toMatchObject({ workspace: mcpSource, healthy: true });
      expect(result.structuredContent.collections[0].count).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });
});

describe("reembed_records over MCP", () => {
  it("has nothing to do when the stamps match the embedder", async () => {
    await add(mcpDev.token, turn("mcp-reembed", 1));
    const client = await mcpClient(cairn.url, mcpOps.token);
    try {
      const result = (await client.callTool({ name: "reembed_records", arguments: { limit: 10 } })) as any;
      expectContractOutput("reembed_records", result.structuredContent);
      expect(result.structuredContent).toMatchObject({ done: true, processed: 0 });
      expect(result.structuredContent.collections[0].state).toBe("current");
      expect(result.structuredContent.collections[0].total).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });
});
