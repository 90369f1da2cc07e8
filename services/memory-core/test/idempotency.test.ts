import { describe, expect, it } from "vitest";
import { http, makeToken, startCairn, turn, uniqueWorkspace, useCairn } from "./support/harness.js";

const workspace = uniqueWorkspace("idem");
const alice = makeToken(workspace, "alice");
const bob = makeToken(workspace, "bob");
const cairn = useCairn([alice, bob]);

const add = (token: string, body: unknown, headers: Record<string, string> = {}) =>
  http(cairn.url, "POST", "/v1/memories", { token, body, headers });
const sessionTurns = async (session: string) =>
  (await http(cairn.url, "GET", `/v1/sessions/${session}?detail=full`, { token: alice.token })).body.turns as Array<{
    id: string;
    prompt: string;
    agent: string;
  }>;

describe("idempotent writes", () => {
  it("replays a retry without its key of a write first sent with one, and the other way round", async () => {
    const withoutKey = turn("idem-forms", 1);
    const keyed = await add(alice.token, { ...withoutKey, idempotency_key: "forms-1" });
    const blind = await add(alice.token, withoutKey);
    expect([keyed.status, blind.status]).toEqual([201, 200]);
    expect(blind.body).toEqual({ ...keyed.body, replayed: true });

    const plain = turn("idem-forms", 2);
    const first = await add(alice.token, plain);
    const withKey = await add(alice.token, { ...plain, idempotency_key: "forms-2" });
    expect([first.status, withKey.status]).toEqual([201, 200]);
    expect(withKey.body.id).toBe(first.body.id);
    expect((await sessionTurns("idem-forms")).map((t) => t.id)).toEqual([keyed.body.id, first.body.id]);

    // Keys still tell turns apart: the same text under another key is another turn, and a retry of that one
    // without a key replays the first of them.
    const again = await add(alice.token, { ...withoutKey, idempotency_key: "forms-3" });
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(keyed.body.id);
    expect((await add(alice.token, withoutKey)).body.id).toBe(keyed.body.id);
    expect(await sessionTurns("idem-forms")).toHaveLength(3);
  });

  it("a retry without its key of a keyed write that was forgotten answers gone; a keyed write of the same text with other fields is a turn of its own", async () => {
    const content = turn("idem-forms-edge", 1);
    const keyed = await add(alice.token, { ...content, idempotency_key: "forms-edge-1" });
    expect(keyed.status).toBe(201);
    expect((await add(alice.token, content)).body.id).toBe(keyed.body.id);
    const forgotten = await http(cairn.url, "POST", `/v1/memories/${keyed.body.id}/forget`, {
      token: alice.token,
      body: { reason: "pasted a secret" },
    });
    expect(forgotten.status).toBe(200);
    const blind = await add(alice.token, content);
    expect([blind.status, blind.body.code]).toEqual([410, "gone"]);
    expect((await http(cairn.url, "GET", "/v1/sessions/idem-forms-edge", { token: alice.token })).status).toBe(404);

    const plain = turn("idem-forms-edge", 2);
    const first = await add(alice.token, plain);
    const tagged = await add(alice.token, { ...plain, tags: ["ops"], idempotency_key: "forms-edge-2" });
    expect([first.status, tagged.status]).toEqual([201, 201]);
    expect(tagged.body.id).not.toBe(first.body.id);
    const same = await add(alice.token, { ...plain, idempotency_key: "forms-edge-3" });
    expect([same.status, same.body.id]).toEqual([200, first.body.id]);
  });

  it("replays the same key and payload with 200 and the original record", async () => {
    const body = turn("idem-replay", 1, { idempotency_key: "replay-1", tags: ["a", "b"] });
    const first = await add(alice.token, body);
    expect(first.status).toBe(201);
    const second = await add(alice.token, body);
    expect(second.status).toBe(200);
    expect(second.body).toEqual({ ...first.body, replayed: true });
    expect(await sessionTurns("idem-replay")).toHaveLength(1);
  });

  it("treats a retry that spells out a default as the same payload", async () => {
    const first = await add(alice.token, turn("idem-defaults", 1, { idempotency_key: "defaults-1" }));
    const spelled = await add(alice.token, turn("idem-defaults", 1, { idempotency_key: "defaults-1", kind: "turn", tags: [] }));
    expect(first.status).toBe(201);
    expect(spelled.status).toBe(200);
    expect(spelled.body.id).toBe(first.body.id);
  });

  it("answers the same key with another payload 409 idempotency_conflict and keeps the original", async () => {
    const original = await add(alice.token, turn("idem-conflict", 1, { idempotency_key: "conflict-1" }));
    expect(original.status).toBe(201);
    const other = await add(alice.token, turn("idem-conflict", 2, { idempotency_key: "conflict-1" }));
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ code: "idempotency_conflict", status: 409 });
    expect(other.body.hint).toMatch(/new idempotency_key/);
    const stored = await sessionTurns("idem-conflict");
    expect(stored.map((t) => t.prompt)).toEqual([turn("idem-conflict", 1).prompt]);
  });

  it("takes the key from the Idempotency-Key header, and refuses a header that contradicts the body", async () => {
    const first = await add(alice.token, turn("idem-header", 1), { "idempotency-key": "header-1" });
    expect(first.status).toBe(201);
    const viaBody = await add(alice.token, turn("idem-header", 1, { idempotency_key: "header-1" }));
    expect(viaBody.status).toBe(200);
    expect(viaBody.body.id).toBe(first.body.id);
    const contradiction = await add(alice.token, turn("idem-header", 1, { idempotency_key: "header-2" }), {
      "idempotency-key": "header-1",
    });
    expect(contradiction.status).toBe(400);
    expect(contradiction.body.errors[0].path).toBe("idempotency_key");
    expect(await sessionTurns("idem-header")).toHaveLength(1);
  });

  it("derives the key from the content when none is given, so a blind retry stores one copy", async () => {
    const body = turn("idem-derived", 1);
    const first = await add(alice.token, body);
    const retry = await add(alice.token, body);
    expect([first.status, retry.status]).toEqual([201, 200]);
    expect(retry.body.id).toBe(first.body.id);
    // Different content in the same session is a different turn.
    const next = await add(alice.token, turn("idem-derived", 2));
    expect(next.status).toBe(201);
    expect(next.body.id).not.toBe(first.body.id);
    expect(await sessionTurns("idem-derived")).toHaveLength(2);
  });

  it("keys are per agent: the same key from two agents stores two turns", async () => {
    const a = await add(alice.token, turn("idem-agents", 1, { idempotency_key: "shared-key" }));
    const b = await add(bob.token, turn("idem-agents", 1, { idempotency_key: "shared-key" }));
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.body.id).not.toBe(b.body.id);
    expect((await sessionTurns("idem-agents")).map((t) => t.agent).sort()).toEqual(["alice", "bob"]);
  });

  it("20 concurrent identical writes store one record: one 201, nineteen replays", async () => {
    const body = turn("idem-concurrent", 1, { idempotency_key: "concurrent-1" });
    const results = await Promise.all(Array.from({ length: 20 }, () => add(alice.token, body)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([...Array(19).fill(200), 201].sort());
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(new Set(results.map((r) => r.body.recorded_at)).size).toBe(1);
    expect(await sessionTurns("idem-concurrent")).toHaveLength(1);
  });

  it("two replicas racing on one key store one record", async () => {
    const replica = await startCairn([alice, bob]);
    try {
      const body = turn("idem-replicas", 1, { idempotency_key: "replicas-1" });
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => http(i % 2 ? replica.url : cairn.url, "POST", "/v1/memories", { token: alice.token, body })),
      );
      expect(results.filter((r) => r.status === 201)).toHaveLength(1);
      expect(results.filter((r) => r.status === 200)).toHaveLength(9);
      expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
      expect(await sessionTurns("idem-replicas")).toHaveLength(1);
    } finally {
      await replica.close();
    }
  });
});
