import { feedStream } from "../../memory-core/src/ledger/change-feed.js";
import { Ledger, leaseId as leaseSlotId, RECENCY_VECTOR } from "../../memory-core/src/ledger/ledger.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOpenAIStub, type OpenAIStub } from "../../../testing/openai-stub.js";
import { addTurns, chatEnv, http, makeToken, startCairn, storedSummary, summarizerOver, turn, uniqueWorkspace } from "./support.js";

let stub: OpenAIStub;
let cairn: Awaited<ReturnType<typeof startCairn>>;
const workspace = uniqueWorkspace("summ-worker");
const alice = makeToken(workspace, "alice");
const admin = makeToken(workspace, "root", "admin");

beforeAll(async () => {
  stub = await startOpenAIStub({ dimension: 8 });
  stub.chat.set({ kind: "structured" });
  cairn = await startCairn([alice, admin]);
});
afterAll(async () => {
  await cairn?.close();
  await stub?.close();
});

describe("which sessions the worker summarizes", () => {
  it("waits until a session has been idle for CAIRN_SUMMARY_IDLE_MS", async () => {
    await addTurns(cairn.url, alice.token, [turn("idle-1", 1)]);
    const hourMs = 3_600_000;
    const now = { shift: 0 };
    const summarizer = summarizerOver(cairn.runtime, workspace, chatEnv(stub.baseUrl, { CAIRN_SUMMARY_IDLE_MS: String(hourMs) }), {
      now: () => Date.now() + now.shift,
    });
    const before = stub.chat.calls;
    await summarizer.runOnce();
    expect(await storedSummary(cairn.url, alice.token, "idle-1")).toBeNull();
    expect(stub.chat.calls).toBe(before);

    now.shift = hourMs;
    await summarizer.runOnce();
    expect(await storedSummary(cairn.url, alice.token, "idle-1")).toMatchObject({ turn_count: 1, method: "model" });
    expect(stub.chat.calls).toBe(before + 1);
    await summarizer.stop();
  });

  it("never sends an unchanged session to the model again, and re-summarizes one that gains turns", async () => {
    await addTurns(cairn.url, alice.token, [turn("grow-1", 1), turn("grow-1", 2)]);
    const summarizer = summarizerOver(cairn.runtime, workspace, chatEnv(stub.baseUrl));
    await summarizer.runOnce();
    const first = await storedSummary(cairn.url, alice.token, "grow-1");
    expect(first).toMatchObject({ turn_count: 2 });

    // Unchanged: further rounds, and a fresh worker that rescans everything, call no model.
    const calls = stub.chat.calls;
    await summarizer.runOnce();
    const fresh = summarizerOver(cairn.runtime, workspace, chatEnv(stub.baseUrl));
    await fresh.runOnce();
    expect(stub.chat.calls).toBe(calls);
    expect(await storedSummary(cairn.url, alice.token, "grow-1")).toEqual(first);

    // New turns: the next round writes a summary covering them.
    const [third] = await addTurns(cairn.url, alice.token, [turn("grow-1", 3)]);
    const thirdTurn = await http(cairn.url, "GET", `/v1/memories/${third}`, { token: alice.token });
    await summarizer.runOnce();
    expect(stub.chat.calls).toBe(calls + 1);
    const second = await storedSummary(cairn.url, alice.token, "grow-1");
    expect(second).toMatchObject({ id: first!.id, turn_count: 3, covered_through: thirdTurn.body.recorded_at });
    expect(stub.chat.bodies.at(-1).messages.at(-1).content).toContain("Task 3 in grow-1");
    // The fresh worker learns of it from the change feed, finds it covered, and calls nothing.
    await fresh.runOnce();
    expect(stub.chat.calls).toBe(calls + 1);
    await summarizer.stop();
    await fresh.stop();
  });

  it("rewrites a summary without a forgotten turn", async () => {
    const [, secret] = await addTurns(cairn.url, alice.token, [
      turn("forget-1", 1),
      {
        session_id: "forget-1",
        prompt: "Configure the deploy key.",
        thought: "Pasted the key hunter2-SECRET by mistake.",
        response: "Deploy configured.",
      },
      turn("forget-keep", 1),
    ]);
    const summarizer = summarizerOver(cairn.runtime, workspace, {}, { now: () => Date.now() + 60_000 });
    await summarizer.runOnce();
    const before = await storedSummary(cairn.url, alice.token, "forget-1");
    expect(before).toMatchObject({ method: "extractive", turn_count: 2 });
    expect(JSON.stringify(before)).toContain("hunter2-SECRET");

    const forgot = await http(cairn.url, "POST", `/v1/memories/${secret}/forget`, { token: alice.token, body: { reason: "a secret" } });
    expect(forgot.status).toBe(200);
    await summarizer.runOnce();
    const after = await storedSummary(cairn.url, alice.token, "forget-1");
    expect(after).toMatchObject({ turn_count: 1 });
    expect(JSON.stringify(after)).not.toContain("hunter2-SECRET");
    expect(after!.title).toBe("Task 1 in forget-1");
    expect(after!.summary).toContain("Reasoning for step 1");

    // The last turn forgotten too: the summary goes, and the store still verifies healthy.
    const [last] = await http(cairn.url, "GET", "/v1/sessions/forget-1", { token: alice.token }).then((r) => r.body.turns);
    expect((await http(cairn.url, "POST", `/v1/memories/${last.id}/forget`, { token: alice.token, body: { reason: "done" } })).status).toBe(
      200,
    );
    await summarizer.runOnce();
    const gone = await http(cairn.url, "GET", "/v1/sessions/forget-1", { token: alice.token });
    expect(gone.status).toBe(404);
    const found = await http(cairn.url, "POST", "/v1/summaries/query", {
      token: alice.token,
      body: { query: "Task 1 in forget-1", limit: 20 },
    });
    const sessions = found.body.hits.map((h: { summary: { session_id: string } }) => h.summary.session_id);
    expect(sessions).not.toContain("forget-1");
    expect(sessions).toContain("forget-keep");
    const verified = await http(cairn.url, "GET", "/v1/admin/verify", { token: admin.token });
    expect(verified.status).toBe(200);
    expect(verified.body.problems).toEqual([]);
    expect(verified.body.healthy).toBe(true);
    await summarizer.stop();
  });
});

describe("turns in flight", () => {
  it("keeps re-checking a session whose feed announced a turn not in Chroma yet, until the writer is taken for dead", async () => {
    const clock = { shift: 0 };
    const summarizer = summarizerOver(cairn.runtime, workspace, {}, { now: () => Date.now() + clock.shift });
    // A running worker (its first round read the workspace), which then follows the change feed.
    await summarizer.runOnce();
    await addTurns(cairn.url, alice.token, [turn("flight-1", 1), turn("settled-1", 1)]);
    // A writer that appended the feed entry and has not stored its turn (yet, or ever).
    await cairn.runtime.storage.sequences.append(
      workspace,
      feedStream("turns"),
      { record_id: "t_in_flight", op: "put", session_id: "flight-1" },
      "w-flight",
    );
    const recency = await cairn.runtime.store.collection(workspace, "recency");
    const leases = async (session: string) =>
      (await recency.get({ ids: Array.from({ length: 8 }, (_, n) => leaseSlotId(session, n)) })).length;

    await summarizer.runOnce();
    expect(await storedSummary(cairn.url, alice.token, "flight-1")).toMatchObject({ turn_count: 1 });
    expect(await storedSummary(cairn.url, alice.token, "settled-1")).toMatchObject({ turn_count: 1 });
    const [flight, settled] = [await leases("flight-1"), await leases("settled-1")];

    await summarizer.runOnce();
    expect(await leases("flight-1")).toBe(flight + 1);
    expect(await leases("settled-1")).toBe(settled);

    clock.shift = 31_000;
    await summarizer.runOnce();
    await summarizer.runOnce();
    expect(await leases("flight-1")).toBe(flight + 2);
    await summarizer.stop();
  });
});

describe("the session lease", () => {
  it("goes to exactly one of many workers taking it at once, and to the next once released", async () => {
    const workers = Array.from({ length: 6 }, (_, i) => cairn.runtime.storage.sessionLeases({ ttlMs: 60_000, holder: `worker-${i}` }));
    const taken = await Promise.all(workers.map((w) => w.acquire(workspace, "lease-race")));
    const winners = taken.filter((lease) => lease !== undefined);
    expect(winners).toHaveLength(1);
    expect(await workers[0]!.acquire(workspace, "lease-race")).toBeUndefined();
    await winners[0]!.release();
    const next = await workers[1]!.acquire(workspace, "lease-race");
    expect(next).toBeDefined();
    expect(await next!.stillHeld()).toBe(true);
    await next!.release();
  });

  it("lets two workers over one Chroma write one summary with one model call", async () => {
    stub.chat.set({ kind: "slow", ms: 400 });
    await addTurns(cairn.url, alice.token, [turn("race-1", 1), turn("race-1", 2)]);
    const one = summarizerOver(cairn.runtime, workspace, chatEnv(stub.baseUrl));
    const two = summarizerOver(cairn.runtime, workspace, chatEnv(stub.baseUrl));
    const before = stub.chat.calls;
    await Promise.all([one.runOnce(), two.runOnce()]);
    await Promise.all([one.runOnce(), two.runOnce()]);
    expect(stub.chat.calls - before).toBe(1);
    expect(await storedSummary(cairn.url, alice.token, "race-1")).toMatchObject({ method: "model", turn_count: 2 });
    stub.chat.set({ kind: "structured" });
    await one.stop();
    await two.stop();
  });

  it("leaves a session alone while a live lease holds it, and takes over a crashed worker's lease when it expires", async () => {
    await addTurns(cairn.url, alice.token, [turn("crashed-1", 1)]);
    const recency = await cairn.runtime.store.collection(workspace, "recency");
    const leaseMs = 120_000;
    // A worker that took the lease and died: it never renews or releases it.
    await recency.add([
      {
        id: leaseSlotId("crashed-1", 0),
        embedding: RECENCY_VECTOR,
        document: "",
        metadata: { session_id: "crashed-1", n: 0, holder: "dead-worker/1", expires_at: Date.now() + leaseMs, released: false },
      },
    ]);
    const clock = { shift: 0 };
    const summarizer = summarizerOver(cairn.runtime, workspace, chatEnv(stub.baseUrl, { CAIRN_SUMMARY_LEASE_MS: String(leaseMs) }), {
      now: () => Date.now() + clock.shift,
    });
    const before = stub.chat.calls;
    await summarizer.runOnce();
    expect(await storedSummary(cairn.url, alice.token, "crashed-1")).toBeNull();
    expect(stub.chat.calls).toBe(before);

    clock.shift = leaseMs + 1_000;
    await summarizer.runOnce();
    expect(await storedSummary(cairn.url, alice.token, "crashed-1")).toMatchObject({ turn_count: 1 });
    expect(stub.chat.calls).toBe(before + 1);
    const [takeover] = await new Ledger(cairn.runtime.store).get(workspace, [leaseSlotId("crashed-1", 1)]);
    expect(takeover?.metadata).toMatchObject({ released: true });
    await summarizer.stop();
  });
});
