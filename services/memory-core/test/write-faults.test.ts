import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AUDIT_STREAM } from "../src/ledger/audit-log.js";
import { Ledger, slotId } from "../src/ledger/ledger.js";
import type { Metadata } from "../src/store/chroma-store.js";
import { ChromaFaults, type ChromaCall } from "./support/chroma-faults.js";
import { expectContractOutput } from "./support/contract-schemas.js";
import { chromaUrl, http, makeToken, mcpClient, startCairn, turn, uniqueWorkspace, type TestCairn } from "./support/harness.js";

/**
 * Writes cut off at each step of their way to Chroma (a proxy cuts the connection of one chosen call, as a
 * crash or a network fault would), retried with the same key, and raced on one key: each stored record has
 * exactly one audit `add` entry, no write that did not land costs its agent's recency anything after
 * `repair_store`, and `verify_store` sees what is left until then.
 */

const workspace = uniqueWorkspace("faults");
const alice = makeToken(workspace, "alice");
const admin = makeToken(workspace, "ops", "admin");
const bulkWorkspace = uniqueWorkspace("bulkfaults");
const bulkAdmin = makeToken(bulkWorkspace, "importer", "admin");
let faults: ChromaFaults;
let cairn: TestCairn;

beforeAll(async () => {
  faults = await ChromaFaults.start(chromaUrl());
  cairn = await startCairn([alice, admin, bulkAdmin], { chroma: faults.url });
});
afterAll(async () => {
  await cairn?.close();
  await faults?.stop();
});

const add = (body: object) => http(cairn.url, "POST", "/v1/memories", { token: alice.token, body });
const verify = async () => (await http(cairn.url, "GET", "/v1/admin/verify", { token: admin.token })).body;
const repair = async (apply: boolean) => {
  const res = await http(cairn.url, "POST", "/v1/admin/repair", { token: admin.token, body: { apply } });
  expect(res.status).toBe(200);
  expectContractOutput("repair_store", res.body);
  return res.body;
};
const auditOf = async (memoryId: string) => {
  const res = await http(cairn.url, "GET", `/v1/audit?memory_id=${memoryId}&limit=100`, { token: admin.token });
  expect(res.status).toBe(200);
  return res.body.entries as Array<{ action: string; actor: string; reason?: string }>;
};
const sessionTurns = async (sessionId: string) =>
  (await http(cairn.url, "GET", `/v1/memories/recent?session_id=${sessionId}&limit=100`, { token: alice.token })).body.turns as Array<{
    id: string;
  }>;
const isTurnAdd = (call: ChromaCall) => call.verb === "add" && call.ids.some((id) => id.startsWith("t_"));

/** Sends until the write is acknowledged; a cut-off attempt answers 503, never a 5xx of another kind. */
async function addUntilAcknowledged(body: object) {
  const statuses: number[] = [];
  for (let attempt = 0; attempt < 5; attempt++) {
    const res = await add(body);
    statuses.push(res.status);
    if (res.status === 200 || res.status === 201) return { res, statuses };
    expect(res.status).toBe(503);
    expect(res.body.code).toBe("unavailable");
  }
  throw new Error(`never acknowledged: ${statuses.join(", ")}`);
}

describe("a write cut off and retried with its key", () => {
  it("cut off once its turn is stored: the retry replays it, and its one add entry stands", async () => {
    const body = turn("cut-after-store", 1, { idempotency_key: "cut-after-store-1" });
    // As a crash right after the turn reached Chroma: nothing after it gets through (the read-back either).
    let stored = false;
    faults.set((call) => {
      if (stored) return "cut";
      if (isTurnAdd(call)) stored = true;
      return "pass";
    });
    const cut = await add(body);
    faults.set(() => "pass");
    expect(stored).toBe(true);
    expect([cut.status, cut.body.code]).toEqual([503, "unavailable"]);
    const res = await add(body);
    expect([res.status, res.body.replayed]).toEqual([200, true]);
    expect((await sessionTurns("cut-after-store")).map((t) => t.id)).toEqual([res.body.id]);
    expect((await auditOf(res.body.id)).filter((e) => e.action === "add")).toHaveLength(1);
  });

  it("cut off before its turn is stored: one record and one add entry; verify sees what the first attempt left, repair retires it", async () => {
    const body = turn("cut-before-store", 1, { idempotency_key: "cut-before-store-1" });
    const cut = faults.cutOnce(isTurnAdd);
    const { res, statuses } = await addUntilAcknowledged(body);
    expect(cut.fired).toBe(true);
    expect(statuses).toEqual([503, 201]);
    const id = res.body.id as string;
    expect((await sessionTurns("cut-before-store")).map((t) => t.id)).toEqual([id]);
    expect((await auditOf(id)).filter((e) => e.action === "add")).toHaveLength(1);

    const found = await verify();
    expect(found.healthy).toBe(false);
    expect(found.problem_counts).toMatchObject({ orphan_slot: 1, duplicate_feed_entry: 1 });
    expect(
      found.problems
        .filter((p: { id?: string }) => p.id === id)
        .map((p: { check: string }) => p.check)
        .sort(),
    ).toEqual(["duplicate_feed_entry", "orphan_slot"]);

    // A dry run changes nothing.
    const dry = await repair(false);
    expect(dry).toMatchObject({ applied: false, memories: 1, audit_entries_written: 0 });
    expect(dry.slots_retired).toBeGreaterThanOrEqual(2);
    expect((await verify()).problem_counts).toEqual(found.problem_counts);

    const applied = await repair(true);
    expect(applied).toMatchObject({ applied: true, memories: 1, slots_retired: dry.slots_retired });
    const after = await verify();
    expect(after).toMatchObject({ healthy: true, problem_counts: {} });
    expect((await auditOf(id)).map((e) => e.action)).toEqual(["add", "repair"]);
    // Idempotent: nothing is left to do, and the memory reads as before.
    expect(await repair(true)).toMatchObject({ slots_retired: 0, audit_entries_written: 0, memories: 0 });
    expect((await sessionTurns("cut-before-store")).map((t) => t.id)).toEqual([id]);
  });
});

describe("a write whose change-feed entry alone reached Chroma", () => {
  it("verify names the entry it left, repair retires it, and the feed announces the turn once", async () => {
    const body = turn("feed-only", 1, { idempotency_key: "feed-only-1" });
    // As Chroma killed between the ledger's collections: the feed's add lands, the recency slot's and the audit
    // entry's do not, so nothing but the feed entry is left of the first attempt.
    let cut = 0;
    faults.set((call) => {
      if (call.verb !== "add" || !call.ids.some((id) => id.startsWith("seq:alice:") || id.startsWith(`seq:${AUDIT_STREAM}:`)))
        return "pass";
      cut++;
      return "cut";
    });
    const first = await add(body);
    faults.set(() => "pass");
    expect(cut).toBeGreaterThan(0);
    expect([first.status, first.body.code]).toEqual([503, "unavailable"]);
    const { res } = await addUntilAcknowledged(body);
    const id = res.body.id as string;
    const puts = async () => {
      const sequences = cairn.runtime.storage.sequences;
      const length = await sequences.length(workspace, "@turns");
      const entries = await sequences.read(
        workspace,
        "@turns",
        Array.from({ length }, (_, i) => i),
      );
      return [...entries.values()].filter((e) => e.record_id === id && e.op === "put" && e.void !== true).length;
    };
    expect(await puts(), "the feed announces the turn twice: the lost attempt's entry and the write's").toBe(2);

    const found = await verify();
    expect(found.problems.filter((p: { id?: string }) => p.id === id).map((p: { check: string }) => p.check)).toEqual([
      "duplicate_feed_entry",
    ]);
    await repair(true);
    expect(await verify()).toMatchObject({ healthy: true });
    expect(await puts(), "after repair").toBe(1);
    expect((await sessionTurns("feed-only")).map((t) => t.id)).toEqual([id]);
  });
});

describe("a bulk write cut off and sent again", () => {
  const addBatch = (memories: object[]) => http(cairn.url, "POST", "/v1/memories/batch", { token: bulkAdmin.token, body: { memories } });
  const newest = async (sessionId: string) =>
    (
      (await http(cairn.url, "GET", `/v1/memories/recent?session_id=${sessionId}&limit=100`, { token: bulkAdmin.token })).body
        .turns as Array<{
        id: string;
      }>
    ).map((t) => t.id);
  const addEntries = async (memoryId: string) =>
    (
      (await http(cairn.url, "GET", `/v1/audit?memory_id=${memoryId}`, { token: bulkAdmin.token })).body.entries as Array<{
        action: string;
      }>
    )
      .map((e) => e.action)
      .filter((a) => a === "add");
  const verifyBulk = async () => (await http(cairn.url, "GET", "/v1/admin/verify", { token: bulkAdmin.token })).body;

  it("cut off before its turns are stored: sent again, each turn once, in order, with one add entry; repair retires what was left", async () => {
    const batch = [1, 2, 3].map((n) => turn("bulk-cut-before", n, { idempotency_key: `bulk-cut-before-${n}` }));
    const cut = faults.cutOnce(isTurnAdd);
    const first = await addBatch(batch);
    expect(cut.fired).toBe(true);
    expect([first.status, first.body.code]).toEqual([503, "unavailable"]);
    const again = await addBatch(batch);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ stored: 3, replayed: 0, failed: 0 });
    const ids = (again.body.results as Array<{ id: string }>).map((r) => r.id);
    expect(await newest("bulk-cut-before")).toEqual([...ids].reverse());
    for (const id of ids) expect(await addEntries(id)).toEqual(["add"]);

    const found = await verifyBulk();
    expect(found.healthy).toBe(false);
    expect(found.problem_counts).toMatchObject({ orphan_slot: 3, duplicate_feed_entry: 3 });
    const repaired = await http(cairn.url, "POST", "/v1/admin/repair", { token: bulkAdmin.token, body: { apply: true } });
    expect(repaired.status).toBe(200);
    expect(await verifyBulk()).toMatchObject({ healthy: true, problem_counts: {} });
    expect(await newest("bulk-cut-before")).toEqual([...ids].reverse());
  });

  it("cut off once its turns are stored: sent again, every turn replays, with its one add entry", async () => {
    const batch = [1, 2, 3].map((n) => turn("bulk-cut-after", n, { idempotency_key: `bulk-cut-after-${n}` }));
    let stored = false;
    faults.set((call) => {
      if (stored) return "cut";
      if (isTurnAdd(call)) stored = true;
      return "pass";
    });
    const first = await addBatch(batch);
    faults.set(() => "pass");
    expect(stored).toBe(true);
    expect([first.status, first.body.code]).toEqual([503, "unavailable"]);
    const again = await addBatch(batch);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ stored: 0, replayed: 3, failed: 0 });
    const ids = (again.body.results as Array<{ id: string }>).map((r) => r.id);
    expect(await newest("bulk-cut-after")).toEqual([...ids].reverse());
    for (const id of ids) expect(await addEntries(id)).toEqual(["add"]);
    expect(await verifyBulk()).toMatchObject({ healthy: true });
  });
});

describe("repair_store over REST", () => {
  it("an add entry lost, and one written twice, are found by verify and mended by repair", async () => {
    const lost = await add(turn("audit-damage", 1));
    const doubled = await add(turn("audit-damage", 2));
    expect([lost.status, doubled.status]).toEqual([201, 201]);
    expect(await verify()).toMatchObject({ healthy: true });
    // What a crash between a write and its entry left behind before entries were written with the record, and
    // what a replay that wrote the entry again would leave.
    const sequences = cairn.runtime.storage.sequences;
    const length = await sequences.length(workspace, AUDIT_STREAM);
    const entries = await sequences.read(
      workspace,
      AUDIT_STREAM,
      Array.from({ length }, (_, i) => i),
    );
    const [seqOfLost, slotOfLost] = [...entries].find(([, e]) => e.memory_id === lost.body.id && e.action === "add")!;
    // The slot stays (sequences are dense) but names no memory any more: the turn has no entry at all.
    await new Ledger(cairn.runtime.store).update(workspace, [
      { id: slotId(AUDIT_STREAM, seqOfLost), metadata: { ...slotOfLost, memory_id: `t_${"0".repeat(32)}` } },
    ]);
    await sequences.append(workspace, AUDIT_STREAM, { action: "add", actor: "alice", memory_id: doubled.body.id }, "an-earlier-replay");
    expect((await auditOf(lost.body.id)).filter((e) => e.action === "add")).toHaveLength(0);
    expect((await auditOf(doubled.body.id)).filter((e) => e.action === "add")).toHaveLength(2);

    const found = await verify();
    expect(found.problem_counts).toEqual({ missing_audit_entry: 1, doubled_audit_entry: 1 });
    expect(await repair(true)).toMatchObject({ audit_entries_written: 1, slots_retired: 1, memories: 2 });
    expect(await verify()).toMatchObject({ healthy: true });
    expect((await auditOf(lost.body.id)).map((e) => e.action)).toEqual(["add", "repair"]);
    expect((await auditOf(doubled.body.id)).map((e) => e.action)).toEqual(["add", "repair"]);
  });

  it("puts back the slots of a write that landed after repair retired them as dead", async () => {
    const late = await add(turn("late-write", 1, { idempotency_key: "late-1" }));
    expect(late.status).toBe(201);
    const id = late.body.id as string;
    expect((await sessionTurns("late-write")).map((t) => t.id)).toEqual([id]);
    // What a repair run leaves when it comes while this write is still in flight past the time a write may
    // take: its recency slot, feed entry and audit entry retired, then its turn stored.
    const sequences = cairn.runtime.storage.sequences;
    const writeId = (await (await cairn.runtime.store.collection(workspace, "turns")).get({ ids: [id] }))[0]!.metadata.write_id;
    const mine: Metadata[] = [];
    for (const stream of [AUDIT_STREAM, "@turns", "alice"]) {
      const length = await sequences.length(workspace, stream);
      const slots = await sequences.read(
        workspace,
        stream,
        Array.from({ length }, (_, n) => n),
      );
      mine.push(...[...slots.values()].filter((slot) => slot.write_id === writeId));
    }
    expect(mine.map((m) => m.stream).sort()).toEqual(["@audit", "@turns", "alice"]);
    const newest = async () =>
      ((await http(cairn.url, "GET", "/v1/memories/recent?limit=100", { token: alice.token })).body.turns as Array<{ id: string }>).map(
        (t) => t.id,
      );
    expect(await newest()).toContain(id);
    for (const m of mine) await sequences.mark(workspace, String(m.stream), [Number(m.seq)], true);
    expect(await newest()).not.toContain(id);

    const found = await verify();
    expect(found.healthy).toBe(false);
    expect(found.problems).toContainEqual(expect.objectContaining({ check: "unreachable_turn", id }));
    expect(await repair(true)).toMatchObject({ slots_restored: 3, slots_retired: 0 });
    expect(await verify()).toMatchObject({ healthy: true });
    expect(await newest()).toContain(id);
    expect((await auditOf(id)).map((e) => e.action)).toEqual(["add", "repair"]);
    expect(await repair(true)).toMatchObject({ slots_restored: 0, slots_retired: 0, memories: 0 });
  });

  it("is for admins only, and an agent's call changes nothing", async () => {
    const refused = await http(cairn.url, "POST", "/v1/admin/repair", { token: alice.token, body: { apply: true } });
    expect([refused.status, refused.body.code]).toEqual([403, "forbidden"]);
    const allowed = await http(cairn.url, "POST", "/v1/admin/repair", { token: admin.token, body: {} });
    expect([allowed.status, allowed.body.applied]).toEqual([200, false]);
  });
});

describe("repair_store over MCP", () => {
  it("says what it would mend, then mends it", async () => {
    const cut = faults.cutOnce(isTurnAdd);
    const { statuses } = await addUntilAcknowledged(turn("mcp-repair", 1, { idempotency_key: "mcp-repair-1" }));
    expect([cut.fired, statuses]).toEqual([true, [503, 201]]);
    const client = await mcpClient(cairn.url, admin.token);
    try {
      const dry = (await client.callTool({ name: "repair_store", arguments: {} })) as any;
      expectContractOutput("repair_store", dry.structuredContent);
      expect(dry.structuredContent).toMatchObject({ applied: false, memories: 1 });
      expect(dry.structuredContent.before.problem_counts).toMatchObject({ orphan_slot: 1 });
      const applied = (await client.callTool({ name: "repair_store", arguments: { apply: true } })) as any;
      expect(applied.structuredContent).toMatchObject({ applied: true, memories: 1 });
      const verified = (await client.callTool({ name: "verify_store", arguments: {} })) as any;
      expect(verified.structuredContent).toMatchObject({ healthy: true });
    } finally {
      await client.close();
    }
  });
});

describe("writers racing on one key", () => {
  it("50 at once: one record, 49 replays, 409 for other payloads, and one recency slot", async () => {
    const racing = uniqueWorkspace("race");
    const carol = makeToken(racing, "carol");
    const ops = makeToken(racing, "ops", "admin");
    const replica = await startCairn([carol, ops], { chroma: faults.url });
    // Chroma slow to answer, as when it is loaded or restarting: the writes pile up while the first is in flight.
    faults.set((call) => (call.ids.some((id) => id.startsWith("tomb:")) ? { delayMs: 200 } : "pass"));
    try {
      const body = turn("race", 1, { idempotency_key: "race-1" });
      const results = await Promise.all(
        Array.from({ length: 50 }, () => http(replica.url, "POST", "/v1/memories", { token: carol.token, body })),
      );
      expect(results.map((r) => r.status).sort((a, b) => a - b)).toEqual([...Array(49).fill(200), 201]);
      expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
      const others = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          http(replica.url, "POST", "/v1/memories", { token: carol.token, body: { ...body, response: `another outcome ${i}` } }),
        ),
      );
      expect(others.map((r) => r.status)).toEqual(Array(10).fill(409));
      expect(others.every((r) => r.body.code === "idempotency_conflict")).toBe(true);

      // Recency costs what it costs for an agent that never raced: one slot for one turn, one feed entry.
      const ledger = new Ledger(replica.runtime.store);
      expect(
        [...(await ledger.present(racing, [slotId("carol", 0), slotId("carol", 1), slotId("@turns", 0), slotId("@turns", 1)]))].sort(),
      ).toEqual([slotId("@turns", 0), slotId("carol", 0)]);
      const recent = await http(replica.url, "GET", "/v1/memories/recent", { token: carol.token });
      expect(recent.body.turns.map((t: { id: string }) => t.id)).toEqual([results[0]!.body.id]);
      const audit = await http(replica.url, "GET", "/v1/audit", { token: ops.token });
      expect(audit.body.entries.map((e: { action: string }) => e.action)).toEqual(["add"]);
      expect((await http(replica.url, "GET", "/v1/admin/verify", { token: ops.token })).body).toMatchObject({ healthy: true });
    } finally {
      faults.set(() => "pass");
      await replica.close();
    }
  });
});

describe("add_memory calls that come together", () => {
  it("go to Chroma as one batch, each answered as its own write under its own agent, a refusal alone", async () => {
    const ws = uniqueWorkspace("together");
    const frank = makeToken(ws, "frank");
    const gina = makeToken(ws, "gina");
    const ops = makeToken(ws, "ops", "admin");
    const replica = await startCairn([frank, gina, ops], { chroma: faults.url });
    const send = (token: { token: string }, body: object) => http(replica.url, "POST", "/v1/memories", { token: token.token, body });
    try {
      const taken = turn("together", 0, { idempotency_key: "together-0" });
      const first = await send(frank, taken);
      expect(first.status).toBe(201);
      // Chroma slow on the next call's first lookup: the calls that come meanwhile wait for its batch, then go together.
      let held = false;
      faults.set((call) => {
        if (held || !call.ids.some((id) => id.startsWith("tomb:"))) return "pass";
        held = true;
        return { delayMs: 500 };
      });
      const before = faults.calls.length;
      const writes = Array.from({ length: 12 }, (_, i) => ({
        writer: i % 2 === 0 ? frank : gina,
        body: turn("together", i + 1, { idempotency_key: `together-${i + 1}` }),
      }));
      const results = await Promise.all([
        ...writes.map(({ writer, body }) => send(writer, body)),
        send(frank, { ...taken, response: "another outcome" }),
      ]);
      const calls = faults.calls.slice(before);
      faults.set(() => "pass");
      expect(held).toBe(true);

      // Each is its own write: created, under the agent that sent it; the payload that conflicts is refused alone.
      const stored = results.slice(0, 12);
      expect(stored.map((r) => r.status)).toEqual(Array(12).fill(201));
      expect(stored.map((r) => r.body.agent)).toEqual(writes.map((w) => w.writer.agent));
      expect(new Set([first.body.id, ...stored.map((r) => r.body.id)]).size).toBe(13);
      expect([results[12]!.status, results[12]!.body.code]).toEqual([409, "idempotency_conflict"]);
      // Together: a few turn adds for the thirteen calls, where each call took one of its own before.
      const turnAdds = calls.filter(isTurnAdd).length;
      expect(turnAdds).toBeGreaterThan(0);
      expect(turnAdds).toBeLessThan(6);

      // Each agent's recency lists its own turns, newest first; one audit add entry per stored turn.
      const recent = async (writer: { token: string }) =>
        (await http(replica.url, "GET", "/v1/memories/recent?limit=20", { token: writer.token })).body.turns.map(
          (t: { id: string }) => t.id,
        );
      const idsOf = (writer: typeof frank) => stored.filter((_, i) => writes[i]!.writer === writer).map((r) => r.body.id as string);
      expect(new Set(await recent(frank))).toEqual(new Set([first.body.id, ...idsOf(frank)]));
      expect(new Set(await recent(gina))).toEqual(new Set(idsOf(gina)));
      const audit = await http(replica.url, "GET", "/v1/audit?limit=100", { token: ops.token });
      expect(audit.body.entries.filter((e: { action: string }) => e.action === "add")).toHaveLength(13);
      expect((await http(replica.url, "GET", "/v1/admin/verify", { token: ops.token })).body).toMatchObject({ healthy: true });
    } finally {
      faults.set(() => "pass");
      await replica.close();
    }
  });
});

describe("writers joined to a write that fails", () => {
  it("the first of them takes over and the others join it: one more slot, not one each", async () => {
    const ws = uniqueWorkspace("takeover");
    const erin = makeToken(ws, "erin");
    const replica = await startCairn([erin], { chroma: faults.url });
    try {
      const body = turn("takeover", 1, { idempotency_key: "takeover-1" });
      // Chroma slow to answer, so that all ten wait on the first write; its turn's add is cut off.
      let cut = false;
      faults.set((call) => {
        if (call.ids.some((id) => id.startsWith("tomb:"))) return { delayMs: 200 };
        if (!cut && isTurnAdd(call)) {
          cut = true;
          return "cut";
        }
        return "pass";
      });
      const results = await Promise.all(
        Array.from({ length: 10 }, () => http(replica.url, "POST", "/v1/memories", { token: erin.token, body })),
      );
      faults.set(() => "pass");
      expect(cut).toBe(true);
      expect(results.map((r) => r.status).sort((a, b) => a - b)).toEqual([...Array(8).fill(200), 201, 503]);
      // The failed write's slot, and the one of the write that took over.
      const slots = await new Ledger(replica.runtime.store).present(
        ws,
        Array.from({ length: 10 }, (_, n) => slotId("erin", n)),
      );
      expect([...slots].sort()).toEqual([slotId("erin", 0), slotId("erin", 1)]);
    } finally {
      faults.set(() => "pass");
      await replica.close();
    }
  });
});

describe("recency after writes that did not land", () => {
  it("reads an agent's newest turns in about the round trips of an agent that never lost a write", async () => {
    const ws = uniqueWorkspace("lost");
    const dana = makeToken(ws, "dana");
    const erin = makeToken(ws, "erin");
    const replica = await startCairn([dana, erin], { chroma: faults.url });
    try {
      for (let n = 1; n <= 12; n++) {
        // Every write of dana's is cut off once before its turn is stored, then retried: half her slots are left behind.
        const body = turn("lost", n, { idempotency_key: `lost-${n}` });
        const cut = faults.cutOnce(isTurnAdd);
        expect((await http(replica.url, "POST", "/v1/memories", { token: dana.token, body })).status).toBe(503);
        expect(cut.fired).toBe(true);
        expect((await http(replica.url, "POST", "/v1/memories", { token: dana.token, body })).status).toBe(201);
        expect((await http(replica.url, "POST", "/v1/memories", { token: erin.token, body })).status).toBe(201);
      }
      faults.set(() => "pass");
      const callsFor = async (token: string) => {
        const from = faults.calls.length;
        const res = await http(replica.url, "GET", "/v1/memories/recent?limit=5&detail=full", { token });
        expect(res.body.turns.map((t: { prompt: string }) => t.prompt)).toEqual([12, 11, 10, 9, 8].map((n) => `Task ${n} in lost`));
        return faults.calls.length - from;
      };
      const clean = await callsFor(erin.token);
      const damaged = await callsFor(dana.token);
      expect(clean).toBeGreaterThan(0);
      expect(damaged).toBeLessThanOrEqual(2 * clean);
    } finally {
      await replica.close();
    }
  });
});

describe("Chroma failing on its side", () => {
  it("answers 503 with Retry-After, not 500, and the same query works once Chroma answers again", async () => {
    const written = await add(turn("chroma-500", 1, { prompt: "Pin the OpenSSL build to 3.0.13 for FIPS." }));
    expect(written.status).toBe(201);
    // What Chroma 1.0 answered for a while after a SIGKILL and restart.
    faults.set((call) =>
      call.verb === "query"
        ? {
            status: 500,
            body: JSON.stringify({ error: "InternalError", message: "Error creating hnsw segment reader: Nothing found on disk" }),
          }
        : "pass",
    );
    const body = { query: "OpenSSL FIPS build pin", mode: "semantic" };
    const failing = await http(cairn.url, "POST", "/v1/memories/query", { token: alice.token, body });
    faults.set(() => "pass");
    expect([failing.status, failing.body.code, failing.headers.get("retry-after")]).toEqual([503, "unavailable", "2"]);
    expect(failing.text).not.toContain("hnsw");
    const answered = await http(cairn.url, "POST", "/v1/memories/query", { token: alice.token, body });
    expect(answered.status).toBe(200);
    expect(answered.body.hits[0].memory.id).toBe(written.body.id);
  });
});
