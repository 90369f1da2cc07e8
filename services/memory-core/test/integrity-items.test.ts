import { describe, expect, it } from "vitest";
import { AUDIT_STREAM } from "../src/ledger/audit-log.js";
import { feedStream } from "../src/ledger/change-feed.js";
import { batchPayload, itemsOf } from "../src/ledger/slot-items.js";
import type { Metadata } from "../src/store/chroma-store.js";
import { expectContractOutput } from "./support/contract-schemas.js";
import { http, makeToken, turn, uniqueWorkspace, useCairn } from "./support/harness.js";

/**
 * verify_store and repair_store read the change feeds and the audit log entry by entry: a batch slot holds the
 * entries of several writes (slot-items.ts), so a finding names one entry of it and a repair retires or puts
 * back that entry alone, leaving the others of the slot to stand.
 */

const workspace = uniqueWorkspace("integrity-items");
const alice = makeToken(workspace, "alice");
const admin = makeToken(workspace, "ops", "admin");
const source = uniqueWorkspace("integrity-items-source");
const sourceAlice = makeToken(source, "alice");
const sourceOps = makeToken(source, "ops", "admin");
const target = uniqueWorkspace("integrity-items-target");
const targetOps = makeToken(target, "ops", "admin");
const cairn = useCairn([alice, admin, sourceAlice, sourceOps, targetOps]);

const verify = async (token = admin.token) => {
  const res = await http(cairn.url, "GET", "/v1/admin/verify", { token });
  expect(res.status).toBe(200);
  return res.body;
};
const repair = async (apply: boolean, token = admin.token) => {
  const res = await http(cairn.url, "POST", "/v1/admin/repair", { token, body: { apply } });
  expect(res.status).toBe(200);
  expectContractOutput("repair_store", res.body);
  return res.body;
};

describe("integrity of batch slots, entry by entry", () => {
  it("reports, retires and puts back one entry of a feed or audit batch slot alone", async () => {
    const ids: string[] = [];
    for (let n = 0; n < 3; n++) {
      const res = await http(cairn.url, "POST", "/v1/memories", { token: alice.token, body: turn("batched", n) });
      expect(res.status).toBe(201);
      ids.push(res.body.id as string);
    }
    const [lost, doubled, sole] = ids as [string, string, string];
    const stored = await (await cairn.runtime.store.collection(workspace, "turns")).get({ ids });
    const writeOf = new Map(stored.map((t) => [t.id, t.metadata.write_id]));
    expect(writeOf.size).toBe(3);
    expect((await verify()).healthy).toBe(true);

    const sequences = cairn.runtime.storage.sequences;
    const feed = feedStream("turns");
    const slotsOf = async (stream: string) => {
      const length = await sequences.length(workspace, stream);
      const read = await sequences.read(
        workspace,
        stream,
        Array.from({ length }, (_, i) => i),
      );
      return new Map([...read].sort(([a], [b]) => a - b));
    };
    const entriesAt = async (stream: string, seq: number) =>
      itemsOf((await sequences.read(workspace, stream, [seq])).get(seq)!).map((e) => [e.memory_id ?? e.record_id, e.void ?? false]);
    // The first turn's batch entries are a first attempt's, which lost to the write stored; the others' are the writes stored.
    const writeIdOf = (id: string) => (id === lost ? "w_lost_attempt" : writeOf.get(id)!);
    const { seq: feedSeq } = await sequences.append(
      workspace,
      feed,
      batchPayload(ids.map((id) => ({ record_id: id, op: "put", session_id: "batched", write_id: writeIdOf(id) }))),
      "w_feed_slot",
    );
    const { seq: auditSeq } = await sequences.append(
      workspace,
      AUDIT_STREAM,
      batchPayload(ids.map((id) => ({ action: "add", actor: "alice", memory_id: id, provisional: true, write_id: writeIdOf(id) }))),
      "w_audit_slot",
    );
    // The last turn's own flat audit entry retired: its entry in the batch slot is then the one that stands.
    const flatAudit = (slots: Map<number, Metadata>, id: string) =>
      [...slots].filter(([seq, s]) => seq !== auditSeq && s.memory_id === id && s.action === "add").map(([seq]) => seq);
    const auditBefore = await slotsOf(AUDIT_STREAM);
    expect(flatAudit(auditBefore, sole)).toHaveLength(1);
    await sequences.mark(workspace, AUDIT_STREAM, flatAudit(auditBefore, sole), true);

    const before = await verify();
    expect(before.healthy).toBe(false);
    expect(before.problem_counts).toEqual({ duplicate_feed_entry: 1, doubled_audit_entry: 1 });
    expect(before.problems).toEqual([
      {
        check: "duplicate_feed_entry",
        collection: "ledger-feed",
        detail: `change feed of turns #${feedSeq}.0 is left by a write that did not land`,
        id: lost,
      },
      {
        check: "doubled_audit_entry",
        collection: "ledger-audit",
        detail: `audit entry #${auditSeq}.1 records the writing of this memory again`,
        id: doubled,
      },
    ]);

    // The lost attempt's feed and audit entries, and the doubled audit entry: each alone, not their slots.
    const planned = await repair(false);
    expect(planned).toMatchObject({ applied: false, slots_retired: 3, slots_restored: 0, audit_entries_written: 0, memories: 2 });
    expect(await entriesAt(feed, feedSeq)).toEqual(ids.map((id) => [id, false]));
    const applied = await repair(true);
    expect(applied).toMatchObject({ applied: true, slots_retired: 3, slots_restored: 0, audit_entries_written: 0, memories: 2 });
    expect(await entriesAt(feed, feedSeq)).toEqual([
      [lost, true],
      [doubled, false],
      [sole, false],
    ]);
    expect(await entriesAt(AUDIT_STREAM, auditSeq)).toEqual([
      [lost, true],
      [doubled, true],
      [sole, false],
    ]);
    // The flat entries of the writes stored stand as they were.
    const auditAfter = await slotsOf(AUDIT_STREAM);
    for (const id of [lost, doubled]) {
      expect(flatAudit(auditAfter, id).map((seq) => auditAfter.get(seq)!.void ?? false)).toEqual([false]);
    }
    const feedAfter = await slotsOf(feed);
    const flatFeed = [...feedAfter].filter(([seq]) => seq !== feedSeq).map(([, s]) => [s.record_id, s.void ?? false]);
    expect(flatFeed).toEqual(ids.map((id) => [id, false]));

    expect(await verify()).toMatchObject({ healthy: true, problem_counts: {} });
    expect(await repair(true)).toMatchObject({ slots_retired: 0, slots_restored: 0, audit_entries_written: 0, memories: 0 });

    // Entries of a write stored, retired by hand as a repair would while their write was in flight: the feed's
    // comes back alone; of the audit entries of that write the first in order comes back (the flat one retired
    // above), and none of the batch slot's. The entries retired for good stay retired.
    await sequences.markItems(workspace, feed, [{ seq: feedSeq, item: 2 }], true);
    await sequences.markItems(workspace, AUDIT_STREAM, [{ seq: auditSeq, item: 2 }], true);
    expect(await entriesAt(feed, feedSeq)).toEqual([
      [lost, true],
      [doubled, false],
      [sole, true],
    ]);
    expect(await repair(true)).toMatchObject({ slots_retired: 0, slots_restored: 2, audit_entries_written: 0, memories: 1 });
    expect(await entriesAt(feed, feedSeq)).toEqual([
      [lost, true],
      [doubled, false],
      [sole, false],
    ]);
    expect(await entriesAt(AUDIT_STREAM, auditSeq)).toEqual([
      [lost, true],
      [doubled, true],
      [sole, true],
    ]);
    const auditPutBack = await slotsOf(AUDIT_STREAM);
    expect(flatAudit(auditPutBack, sole).map((seq) => auditPutBack.get(seq)!.void)).toEqual([false]);
    expect(await verify()).toMatchObject({ healthy: true, problem_counts: {} });
    expect(await repair(true)).toMatchObject({ slots_retired: 0, slots_restored: 0, memories: 0 });
  });

  it("puts back a retired audit entry of a batch slot alone when its turn has no other", async () => {
    for (let n = 0; n < 2; n++) {
      const res = await http(cairn.url, "POST", "/v1/memories", { token: sourceAlice.token, body: turn("restored", n) });
      expect(res.status).toBe(201);
    }
    const exported = await http(cairn.url, "GET", "/v1/admin/records?collection=turns&limit=10", { token: sourceOps.token });
    expect(exported.status).toBe(200);
    const { records, stamp } = exported.body as { records: Array<{ id: string }>; stamp: unknown };
    const imported = await http(cairn.url, "POST", "/v1/admin/records", {
      token: targetOps.token,
      body: { collection: "turns", stamp, records: [...records].reverse() },
    });
    expect(imported.status).toBe(200);
    const ids = records.map((r) => r.id);
    const stored = await (await cairn.runtime.store.collection(target, "turns")).get({ ids });
    expect(stored).toHaveLength(2);

    // An import's `restore` entries are not provisional, so once retired they never come back: the batch slot's
    // entries are then the only ones that can record these turns' writing.
    const sequences = cairn.runtime.storage.sequences;
    const length = await sequences.length(target, AUDIT_STREAM);
    const flat = await sequences.read(
      target,
      AUDIT_STREAM,
      Array.from({ length }, (_, i) => i),
    );
    // However the import took them (a slot each, or one batch slot), each entry is retired on its own.
    const restores = [...flat].flatMap(([, s]) => itemsOf(s)).filter((e) => e.action === "restore");
    expect(restores).toHaveLength(2);
    await sequences.markItems(
      target,
      AUDIT_STREAM,
      restores.map((e) => ({ seq: Number(e.seq), item: e.item })),
      true,
    );
    const { seq } = await sequences.append(
      target,
      AUDIT_STREAM,
      batchPayload(
        stored.map((t) => ({ action: "add", actor: "alice", memory_id: t.id, provisional: true, write_id: t.metadata.write_id! })),
      ),
      "w_audit_slot",
    );
    await sequences.markItems(target, AUDIT_STREAM, [{ seq, item: 0 }], true);
    const entries = async () =>
      itemsOf((await sequences.read(target, AUDIT_STREAM, [seq])).get(seq)!).map((e) => [e.memory_id, e.void ?? false]);
    expect(await entries()).toEqual([
      [stored[0]!.id, true],
      [stored[1]!.id, false],
    ]);

    // The retired entry is of the write its turn holds: not a problem, only something to put back.
    expect(await verify(targetOps.token)).toMatchObject({ healthy: true, problems: [] });
    expect(await repair(true, targetOps.token)).toMatchObject({
      slots_retired: 0,
      slots_restored: 1,
      audit_entries_written: 0,
      memories: 1,
    });
    expect(await entries()).toEqual([
      [stored[0]!.id, false],
      [stored[1]!.id, false],
    ]);
    const after = await sequences.read(
      target,
      AUDIT_STREAM,
      restores.map((e) => Number(e.seq)),
    );
    expect(restores.map((e) => itemsOf(after.get(Number(e.seq))!)[e.item]!.void)).toEqual([true, true]);
    expect(await verify(targetOps.token)).toMatchObject({ healthy: true, problems: [] });
    expect(await repair(true, targetOps.token)).toMatchObject({
      slots_retired: 0,
      slots_restored: 0,
      audit_entries_written: 0,
      memories: 0,
    });
  });
});
