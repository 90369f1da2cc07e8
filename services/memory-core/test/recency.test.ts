import { describe, expect, it } from "vitest";
import { RecencyIndex } from "../src/domain/recency.js";
import { LexicalIndexes } from "../src/lexical/indexes.js";
import { DEFAULT_TUNING } from "../src/retrieval/retrieval-tuning.js";
import { SessionTurns } from "../src/domain/session-turns.js";
import { FEED_PENDING_MS, feedStream } from "../src/ledger/change-feed.js";
import { summarizerPort } from "../src/domain/summarizer-port.js";
import { TokenRegistry } from "../src/auth/tokens.js";
import { AUDIT_STREAM } from "../src/ledger/audit-log.js";
import { keyedMarkerId, RECENCY_VECTOR, slotId } from "../src/ledger/ledger.js";
import { batchPayload, itemsOf } from "../src/ledger/slot-items.js";
import type { LedgerCollectionName, Metadata } from "../src/store/chroma-store.js";
import { http, makeToken, startCairn, turn, uniqueWorkspace, useCairn } from "./support/harness.js";
import { openStorage } from "../src/storage.js";

const workspace = uniqueWorkspace("recent");
const alice = makeToken(workspace, "alice");
const bob = makeToken(workspace, "bob");
const cairn = useCairn([alice, bob]);

type Listed = { id: string; agent: string; session_id: string; recorded_at: string };

async function pageAll(token: string, query: string, limit: number, base = cairn.url) {
  const turns: Listed[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res: { status: number; body: { turns: Listed[]; next_cursor: string | null } } = await http(
      base,
      "GET",
      `/v1/memories/recent?limit=${limit}${query}${cursor ? `&before=${cursor}` : ""}`,
      { token },
    );
    expect(res.status).toBe(200);
    expect(res.body.turns.length).toBeLessThanOrEqual(limit);
    turns.push(...res.body.turns);
    cursor = res.body.next_cursor;
    pages++;
  } while (cursor);
  return { turns, pages };
}

/** Newest first: recorded_at never rises along the listing; nothing repeats. */
function expectNewestFirstComplete(listed: Listed[], expectedIds: string[]) {
  const times = listed.map((t) => Date.parse(t.recorded_at));
  for (let i = 1; i < times.length; i++) expect(times[i]).toBeLessThanOrEqual(times[i - 1]!);
  expect(new Set(listed.map((t) => t.id)).size).toBe(listed.length);
  expect(listed.map((t) => t.id).sort()).toEqual([...expectedIds].sort());
}

describe("query_recent_turns order and paging", () => {
  it("lists sequential writes exactly in reverse order, paged with no gaps or repeats", async () => {
    const ids: string[] = [];
    for (let n = 0; n < 9; n++) {
      const session = ["seq-a", "seq-b", "seq-c"][n % 3]!;
      ids.push((await http(cairn.url, "POST", "/v1/memories", { token: bob.token, body: turn(session, n) })).body.id);
    }
    const paged = await pageAll(bob.token, "", 2);
    expect(paged.turns.map((t) => t.id)).toEqual([...ids].reverse());
    expect(paged.pages).toBe(5);
    const oneSession = await pageAll(bob.token, "&session_id=seq-b", 2);
    expect(oneSession.turns.map((t) => t.id)).toEqual([ids[7], ids[4], ids[1]]);
  });

  it("pages concurrent writes of two agents across sessions newest first, complete", async () => {
    const written: Array<{ id: string; agent: string; session: string }> = [];
    for (let round = 0; round < 6; round++) {
      const batch = await Promise.all(
        ["c-a", "c-b", "c-c"].flatMap((session) =>
          [alice, bob].map(async (who) => {
            const res = await http(cairn.url, "POST", "/v1/memories", { token: who.token, body: turn(session, round) });
            expect(res.status).toBe(201);
            return { id: res.body.id as string, agent: who.agent, session };
          }),
        ),
      );
      written.push(...batch);
    }
    const alices = written.filter((w) => w.agent === "alice");
    const paged = await pageAll(alice.token, "", 4);
    expectNewestFirstComplete(
      paged.turns,
      alices.map((w) => w.id),
    );
    expect(paged.pages).toBe(5);
    const oneSession = await pageAll(alice.token, "&session_id=c-b", 4);
    expectNewestFirstComplete(
      oneSession.turns,
      alices.filter((w) => w.session === "c-b").map((w) => w.id),
    );
    // Bob's listing, as read by Alice, holds only Bob's turns.
    const bobs = await pageAll(alice.token, "&agent=bob&session_id=c-a", 7);
    expectNewestFirstComplete(
      bobs.turns,
      written.filter((w) => w.agent === "bob" && w.session === "c-a").map((w) => w.id),
    );
  });

  it("two replicas writing for one agent keep one complete order", async () => {
    const carol = makeToken(workspace, "carol");
    const left = await startCairn([carol]);
    const right = await startCairn([carol]);
    try {
      const results = await Promise.all(
        Array.from({ length: 16 }, (_, n) =>
          http(n % 2 ? left.url : right.url, "POST", "/v1/memories", { token: carol.token, body: turn("replicas", n) }),
        ),
      );
      expect(results.every((r) => r.status === 201)).toBe(true);
      const throughLeft = await pageAll(carol.token, "", 5, left.url);
      const throughRight = await pageAll(carol.token, "", 5, right.url);
      expectNewestFirstComplete(
        throughLeft.turns,
        results.map((r) => r.body.id),
      );
      expect(throughRight.turns.map((t) => t.id)).toEqual(throughLeft.turns.map((t) => t.id));
    } finally {
      await left.close();
      await right.close();
    }
  });

  it("answers a cursor it did not issue, or one for another agent, with invalid_cursor", async () => {
    const page = await http(cairn.url, "GET", "/v1/memories/recent?limit=1&agent=bob", { token: alice.token });
    expect(page.body.next_cursor).toEqual(expect.any(String));
    const ok = await http(cairn.url, "GET", `/v1/memories/recent?limit=1&agent=bob&before=${page.body.next_cursor}`, {
      token: alice.token,
    });
    expect(ok.status).toBe(200);
    expect(ok.body.turns).toHaveLength(1);
    const otherAgent = await http(cairn.url, "GET", `/v1/memories/recent?limit=1&before=${page.body.next_cursor}`, { token: alice.token });
    expect([otherAgent.status, otherAgent.body.code]).toEqual([400, "invalid_cursor"]);
    expect(otherAgent.body.errors).toEqual([{ path: "before", message: "was issued by another listing, workspace or filters" }]);
    const forged = await http(cairn.url, "GET", "/v1/memories/recent?before=bm90LWEtY3Vyc29y", { token: alice.token });
    expect([forged.status, forged.body.code]).toEqual([400, "invalid_cursor"]);
    expect(forged.body.errors).toEqual([{ path: "before", message: "is not a cursor this server issued" }]);
  });
});

describe("the recency sequence over real Chroma", () => {
  it("finds its length from a cold start at any size", async () => {
    const ws = uniqueWorkspace("seqlen");
    const recencyIndex = () => {
      const storage = openStorage(cairn.runtime.store);
      return new RecencyIndex(
        storage.turns,
        storage.sequences,
        new SessionTurns(storage.turns, new LexicalIndexes(storage, DEFAULT_TUNING)),
      );
    };
    const warm = recencyIndex();
    for (const target of [0, 1, 2, 63, 64, 65, 200]) {
      const agent = `len-${target}`;
      for (let n = 0; n < target; n++) {
        const { seq } = await warm.allocate(ws, agent, `turn-${n}`, `write-${n}`);
        expect(seq).toBe(n);
      }
      // A fresh index knows nothing of this agent: the next slot must still be `target`.
      const cold = recencyIndex();
      expect((await cold.allocate(ws, agent, "next", `cold-${target}`)).seq).toBe(target);
    }
  });

  it("keeps each kind of ledger entry in a collection of its own, its fields in one metadata key", async () => {
    const ws = uniqueWorkspace("kinds");
    const store = cairn.runtime.store;
    const sequences = openStorage(store).sequences;
    await sequences.appendAcross(
      ws,
      [
        { stream: "ann", payload: { turn_id: "t_1" } },
        { stream: feedStream("turns"), payload: { record_id: "t_1", op: "put" } },
        { stream: AUDIT_STREAM, payload: { action: "add", actor: "ann", memory_id: "t_1" } },
      ],
      "w1",
    );
    await openStorage(store).markers.leaveMany(ws, [{ contentId: "t_content", turnId: "t_1" }]);
    const idsIn = async (name: LedgerCollectionName) => (await (await store.collection(ws, name)).get({})).map((r) => r.id);
    expect(await idsIn("ledger-slots")).toEqual([slotId("ann", 0)]);
    expect(await idsIn("ledger-feed")).toEqual([slotId("@turns", 0)]);
    expect(await idsIn("ledger-audit")).toEqual([slotId("@audit", 0)]);
    expect(await idsIn("ledger-keyed")).toEqual([keyedMarkerId("t_content")]);
    expect(await idsIn("recency")).toEqual([]);
    const [slot] = await (await store.collection(ws, "ledger-slots")).get({ ids: [slotId("ann", 0)] });
    expect(Object.keys(slot!.metadata)).toEqual(["fields"]);
    expect((await sequences.read(ws, "ann", [0])).get(0)).toMatchObject({ turn_id: "t_1", write_id: "w1" });
  });

  it("reads and marks a ledger kept all in recency, one key per field, and goes on past it", async () => {
    const ws = uniqueWorkspace("recency-only");
    const store = cairn.runtime.store;
    const recency = await store.collection(ws, "recency");
    // Entries laid out in one collection: all in `recency`, one metadata key per field.
    const before = (id: string, metadata: Metadata) => ({ id, embedding: RECENCY_VECTOR, document: "", metadata });
    await recency.add([
      before(slotId("old", 0), { stream: "old", seq: 0, turn_id: "t_before", write_id: "w0", recorded_at: 1 }),
      before(slotId("@turns", 0), { stream: "@turns", seq: 0, record_id: "t_before", op: "put", write_id: "w0", recorded_at: 1 }),
      before(keyedMarkerId("c_before"), { turn_id: "t_before" }),
    ]);
    const sequences = openStorage(store).sequences;
    expect((await sequences.append(ws, "old", { turn_id: "t_after" }, "w1")).seq).toBe(1);
    expect((await sequences.append(ws, feedStream("turns"), { record_id: "t_after", op: "put" }, "w1")).seq).toBe(1);
    expect(await recency.present([slotId("old", 1), slotId("@turns", 1)])).toEqual(new Set());
    expect(await (await store.collection(ws, "ledger-slots")).present([slotId("old", 1)])).toEqual(new Set([slotId("old", 1)]));

    const turnsOf = async () =>
      [...(await sequences.read(ws, "old", [0, 1]))].map(([seq, slot]) => [seq, slot.turn_id, slot.void ?? false]);
    expect(await turnsOf()).toEqual([
      [0, "t_before", false],
      [1, "t_after", false],
    ]);
    await sequences.mark(ws, "old", [0, 1], true);
    expect(await turnsOf()).toEqual([
      [0, "t_before", true],
      [1, "t_after", true],
    ]);
    expect([...(await sequences.read(ws, feedStream("turns"), [0, 1]))].map(([, e]) => e.record_id)).toEqual(["t_before", "t_after"]);

    // A keyed marker in `recency` is found, and stays the first of its content id; a new one is found beside it.
    const markers = openStorage(store).markers;
    await markers.leaveMany(ws, [
      { contentId: "c_before", turnId: "t_later" },
      { contentId: "c_new", turnId: "t_new" },
    ]);
    const { keyedTurns } = await markers.beforeWrites(ws, [], ["c_before", "c_new", "c_none"]);
    expect([...keyedTurns]).toEqual([
      ["c_before", "t_before"],
      ["c_new", "t_new"],
    ]);
  });

  it("reads a batch slot's entries one by one, each with its own write id, and retires or puts back one of them alone", async () => {
    const ws = uniqueWorkspace("batch-slot");
    const sequences = cairn.runtime.storage.sequences;
    const stream = feedStream("turns");
    // A flat entry, then a batch's three in one slot, as a write batch is to take them (slot-items.ts).
    await sequences.append(ws, stream, { record_id: "t_flat", op: "put" }, "w_flat");
    const entries = ["t_a", "t_b", "t_c"].map((id, i) => ({ record_id: id, op: "put", session_id: "s", write_id: `w_${i}` }));
    const { seq } = await sequences.append(ws, stream, batchPayload(entries), "w_attempt");
    expect(seq).toBe(1);
    expect(await sequences.length(ws, stream)).toBe(2);

    const read = async () =>
      [...(await sequences.read(ws, stream, [0, 1]))].flatMap(([, slot]) =>
        itemsOf(slot).map((e) => [e.seq, e.item, e.record_id, e.write_id, e.void ?? false]),
      );
    expect(await read()).toEqual([
      [0, 0, "t_flat", "w_flat", false],
      [1, 0, "t_a", "w_0", false],
      [1, 1, "t_b", "w_1", false],
      [1, 2, "t_c", "w_2", false],
    ]);
    await sequences.markItems(ws, stream, [{ seq: 1, item: 1 }], true);
    expect((await read()).map((e) => e[4])).toEqual([false, false, true, false]);
    // A batch slot retired whole (as `mark` retires a slot) puts back one entry alone; a flat slot's entry is the slot.
    await sequences.mark(ws, stream, [1], true);
    expect((await read()).map((e) => e[4])).toEqual([false, true, true, true]);
    await sequences.markItems(
      ws,
      stream,
      [
        { seq: 1, item: 2 },
        { seq: 0, item: 0 },
      ],
      false,
    );
    expect((await read()).map((e) => e[4])).toEqual([false, true, true, false]);
    await sequences.markItems(ws, stream, [{ seq: 0, item: 0 }], true);
    expect((await read()).map((e) => e[4])).toEqual([true, true, true, false]);
  });

  it("catches the lexical index up through a batch slot's entries, waiting at one in flight without taking those before it again", async () => {
    // Real turns, written through REST elsewhere and copied into a workspace whose change feed is only the slots
    // below, so that the index can find them through those slots alone.
    const writer = makeToken(uniqueWorkspace("batch-lexical-src"), "writer");
    const source = await startCairn([writer]);
    const ws = uniqueWorkspace("batch-lexical");
    const words = ["QUOKKA", "NARWHAL", "AXOLOTL", "PANGOLIN"];
    // The index's clock runs with the real one, moved on below to take the writer in flight for dead.
    let skew = 0;
    const indexes = new LexicalIndexes(cairn.runtime.storage, DEFAULT_TUNING, {
      now: () => Date.now() + skew,
    });
    try {
      const ids: string[] = [];
      for (const [n, word] of words.entries()) {
        const res = await http(source.url, "POST", "/v1/memories", {
          token: writer.token,
          body: turn("batch-lexical", n, { thought: `Fed the ${word} at noon.` }),
        });
        expect(res.status).toBe(201);
        ids.push(res.body.id as string);
      }
      const index = await indexes.snapshot(ws, "turns");
      expect(index.size).toBe(0);
      const puts = new Map<string, number>();
      const put = index.put.bind(index);
      index.put = (document) => {
        puts.set(document.id, (puts.get(document.id) ?? 0) + 1);
        put(document);
      };
      const copies = await (
        await cairn.runtime.store.collection(writer.workspace, "turns")
      ).get({ ids, withDocuments: true, withEmbeddings: true });
      await (
        await cairn.runtime.store.collection(ws, "turns")
      ).add(copies.map((r) => ({ id: r.id, embedding: r.embedding!, document: r.document!, metadata: r.metadata })));
      // One batch slot whose third entry names a turn that is not there (recorded now: a write in flight), then a
      // flat slot.
      const sequences = cairn.runtime.storage.sequences;
      const entry = (id: string, i: number) => ({ record_id: id, op: "put", session_id: "batch-lexical", write_id: `w_${i}` });
      await sequences.append(ws, feedStream("turns"), batchPayload([ids[0]!, ids[1]!, "t_never_written", ids[2]!].map(entry)), "w_batch");
      await sequences.append(ws, feedStream("turns"), { record_id: ids[3]!, op: "put", session_id: "batch-lexical" }, "w_flat");

      const found = async () => {
        const caughtUp = await indexes.snapshot(ws, "turns");
        const hits = await Promise.all(words.map(async (w) => (await caughtUp.query(w, 5, [])).map((h) => h.id)));
        return hits.map((h, n) => h.includes(ids[n]!));
      };
      expect(await found()).toEqual([true, true, false, false]);
      expect(await indexes.snapshot(ws, "turns", "complete")).toBeUndefined();
      // Asked again while the entry is still in flight: the entries before it are not taken a second time.
      expect(await found()).toEqual([true, true, false, false]);
      expect(Object.fromEntries(puts)).toEqual({ [ids[0]!]: 1, [ids[1]!]: 1 });

      // Once the writer is taken for dead, the entries after it are taken, each once.
      skew = FEED_PENDING_MS + 1;
      expect(await found()).toEqual([true, true, true, true]);
      expect(await indexes.snapshot(ws, "turns", "complete")).toBeDefined();
      expect(Object.fromEntries(puts)).toEqual(Object.fromEntries(ids.map((id) => [id, 1])));
    } finally {
      await indexes.close();
      await source.close();
    }
  });

  it("tells each entry of a batch slot to the summarizer as a change under the slot's number", async () => {
    const ws = uniqueWorkspace("batch-summarizer");
    const sequences = cairn.runtime.storage.sequences;
    const stream = feedStream("turns");
    await sequences.append(ws, stream, { record_id: "t_flat", op: "put", session_id: "s_flat" }, "w_flat");
    const entries = [
      { record_id: "t_a", op: "put", session_id: "s_one", write_id: "w_a" },
      { record_id: "t_b", op: "put", session_id: "s_two", write_id: "w_b" },
      { record_id: "t_c", op: "remove", session_id: "s_one", write_id: "w_c" },
    ];
    await sequences.append(ws, stream, batchPayload(entries), "w_batch");
    await sequences.append(ws, stream, { record_id: "t_last", op: "put", session_id: "s_two" }, "w_last");
    const port = summarizerPort({
      storage: cairn.runtime.storage,
      writes: cairn.runtime.services.writes,
      embedder: cairn.runtime.embedder,
      tokens: new TokenRegistry([]),
    });
    expect(await port.changesEnd(ws)).toBe(3);
    const told = async (from: number, count: number) => {
      const { changes, next } = await port.sessionChanges(ws, from, count);
      return { changes: changes.map((c) => [c.turnId, c.sessionId, c.forgotten]), next };
    };
    expect(await told(0, 3)).toEqual({
      changes: [
        ["t_flat", "s_flat", false],
        ["t_a", "s_one", false],
        ["t_b", "s_two", false],
        ["t_c", "s_one", true],
        ["t_last", "s_two", false],
      ],
      next: 3,
    });
    // The slot's number carries its entries: read from it, they are all told; read past it, none is.
    expect(await told(1, 1)).toEqual({
      changes: [
        ["t_a", "s_one", false],
        ["t_b", "s_two", false],
        ["t_c", "s_one", true],
      ],
      next: 2,
    });
    expect(await told(2, 1)).toEqual({ changes: [["t_last", "s_two", false]], next: 3 });
  });

  it("skips a slot whose turn never arrived and lists a raced turn once", async () => {
    const dave = makeToken(workspace, "dave");
    const daves = await startCairn([dave]);
    const write = async (n: number) => {
      const res = await http(daves.url, "POST", "/v1/memories", { token: dave.token, body: turn("holes", n) });
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    const ids: string[] = [];
    for (let n = 0; n < 3; n++) ids.push(await write(n));
    const slots = await cairn.runtime.store.collection(workspace, "ledger-slots");
    // Slot 3: a writer that died before storing its turn. Slot 4: a loser of a race that names turn 1.
    await slots.add([
      {
        id: slotId("dave", 3),
        embedding: RECENCY_VECTOR,
        document: "",
        metadata: { stream: "dave", seq: 3, turn_id: "t_never_written", write_id: "w3", recorded_at: Date.now() },
      },
      {
        id: slotId("dave", 4),
        embedding: RECENCY_VECTOR,
        document: "",
        metadata: { stream: "dave", seq: 4, turn_id: ids[1]!, write_id: "w4", recorded_at: Date.now() },
      },
    ]);
    ids.push(await write(3));
    try {
      for (const limit of [1, 2, 10]) {
        const paged = await pageAll(dave.token, "", limit, daves.url);
        expect(paged.turns.map((t) => t.id)).toEqual([...ids].reverse());
      }
    } finally {
      await daves.close();
    }
  });
});

describe("session listings", () => {
  it("get_session and query_recent_turns by session list every turn, also while a write in flight holds the lexical index back", async () => {
    // Sessions are listed from the caught-up lexical index; a writer that took its change-feed slot and died
    // holds every catch-up back for a while, and then Chroma must answer, or the later turns would be missing.
    const stalled = makeToken(uniqueWorkspace("stalled-session"), "writer");
    const replica = await startCairn([stalled]);
    try {
      const write = async (n: number) => {
        const res = await http(replica.url, "POST", "/v1/memories", { token: stalled.token, body: turn("listed", n) });
        expect(res.status).toBe(201);
        return res.body.id as string;
      };
      const listed = async () => {
        const session = await http(replica.url, "GET", "/v1/sessions/listed?limit=50", { token: stalled.token });
        const recent = await http(replica.url, "GET", "/v1/memories/recent?session_id=listed&limit=50", { token: stalled.token });
        expect(session.status).toBe(200);
        expect(recent.status).toBe(200);
        return { session: session.body.turns.map((t: { id: string }) => t.id), recent: recent.body.turns.map((t: { id: string }) => t.id) };
      };
      const before = [await write(1), await write(2)];
      expect(await listed()).toEqual({ session: before, recent: [...before].reverse() });
      await replica.runtime.storage.sequences.append(
        stalled.workspace,
        feedStream("turns"),
        { record_id: "t_never_written", op: "put", session_id: "listed" },
        "w-dead",
      );
      const after = [await write(3), await write(4)];
      const lexical = await http(replica.url, "POST", "/v1/memories/query", {
        token: stalled.token,
        body: { query: "Task 3 in listed", mode: "lexical", session_id: "listed" },
      });
      // The index is held back (the new turns are not found lexically) and the listings still have them.
      expect(lexical.body.hits.map((h: { memory: { id: string } }) => h.memory.id)).not.toContain(after[0]);
      expect(await listed()).toEqual({ session: [...before, ...after], recent: [...before, ...after].reverse() });
    } finally {
      await replica.close();
    }
  });
});
