import { describe, expect, it } from "vitest";
import { Corrections } from "../src/domain/corrections.js";
import { LexicalIndexes } from "../src/lexical/indexes.js";
import { DEFAULT_TUNING } from "../src/retrieval/retrieval-tuning.js";
import { AUDIT_STREAM } from "../src/ledger/audit-log.js";
import { Sequences } from "../src/ledger/sequences.js";
import { batchPayload } from "../src/ledger/slot-items.js";
import { cursorTag } from "../src/records/cursor.js";
import { OPEN_VALIDITY } from "../src/records/turn-record.js";
import { expectContractOutput } from "./support/contract-schemas.js";
import { http, makeToken, mcpClient, turn, uniqueWorkspace, useCairn } from "./support/harness.js";
import { openStorage } from "../src/storage.js";
import { ChangeFeed } from "../src/ledger/change-feed.js";

const workspace = uniqueWorkspace("fix");
const alice = makeToken(workspace, "alice");
const bob = makeToken(workspace, "bob");
const admin = makeToken(workspace, "ops", "admin");
/** Alone in its workspace, so that which records are nearest to a query is known. */
const lone = makeToken(uniqueWorkspace("fix-lone"), "lone");
/** Alone in its workspace, so that its change feed holds only what its test writes. */
const racing = makeToken(uniqueWorkspace("fix-race"), "racer");
/** Admins of workspaces whose audit logs hold only what their tests seed, one log per transport. */
const batchOps = makeToken(uniqueWorkspace("fix-audit-batch"), "ops", "admin");
const batchMcpOps = makeToken(uniqueWorkspace("fix-audit-batch-mcp"), "ops", "admin");
/** A writer and an admin of a workspace where provisional entries in a batch slot are judged. */
const provisionalWriter = makeToken(uniqueWorkspace("fix-audit-prov"), "writer");
const provisionalOps = makeToken(provisionalWriter.workspace, "ops", "admin");
const cairn = useCairn([alice, bob, admin, lone, racing, batchOps, batchMcpOps, provisionalWriter, provisionalOps]);

const add = async (token: string, body: Record<string, unknown>) => {
  const res = await http(cairn.url, "POST", "/v1/memories", { token, body });
  expect(res.status).toBe(201);
  return res.body as { id: string; recorded_at: string };
};
const search = async (body: Record<string, unknown>) =>
  (await http(cairn.url, "POST", "/v1/memories/query", { token: alice.token, body })).body as {
    hits: Array<{ memory: { id: string; superseded_by?: string } }>;
  };
const ids = (result: { hits: Array<{ memory: { id: string } }> }) => result.hits.map((h) => h.memory.id);

describe("supersede_memory over REST", () => {
  it("closes the old memory's validity, links it, and keeps it in the log", async () => {
    const old = await add(alice.token, turn("fix-rest", 1, { prompt: "Which queue for refresh jobs? QUEUE-OLD" }));
    const next = await add(alice.token, turn("fix-rest", 2, { prompt: "Which queue for refresh jobs now? QUEUE-NEW" }));
    const res = await http(cairn.url, "POST", `/v1/memories/${old.id}/supersede`, {
      token: alice.token,
      body: { by: next.id, reason: "moved to Redis streams" },
    });
    expect(res.status).toBe(200);
    expectContractOutput("supersede_memory", res.body);
    expect(res.body).toMatchObject({ id: old.id, superseded_by: next.id, superseded_reason: "moved to Redis streams" });
    expect(res.body.corrections).toEqual([
      { kind: "superseded", reason: "moved to Redis streams", replaced_by: next.id, by: "alice", at: expect.any(String) },
    ]);
    expect(Date.parse(res.body.valid_until)).toBeGreaterThanOrEqual(Date.parse(old.recorded_at));
    const replacement = await http(cairn.url, "GET", `/v1/memories/${next.id}`, { token: alice.token });
    expect(replacement.body.supersedes).toEqual([old.id]);
    const again = await http(cairn.url, "POST", `/v1/memories/${old.id}/supersede`, { token: alice.token, body: { reason: "twice" } });
    expect([again.status, again.body.code]).toEqual([409, "already_superseded"]);
    // The log stays complete, with the correction marked.
    const recent = await http(cairn.url, "GET", "/v1/memories/recent?session_id=fix-rest&detail=full", { token: alice.token });
    expect(recent.body.turns.map((t: { id: string; superseded_by?: string }) => [t.id, t.superseded_by ?? null])).toEqual([
      [next.id, null],
      [old.id, next.id],
    ]);
  });

  it("only the author or an admin may supersede", async () => {
    const mine = await add(alice.token, turn("fix-auth", 1));
    const denied = await http(cairn.url, "POST", `/v1/memories/${mine.id}/supersede`, { token: bob.token, body: { reason: "not mine" } });
    expect([denied.status, denied.body.code]).toEqual([403, "forbidden"]);
    const byAdmin = await http(cairn.url, "POST", `/v1/memories/${mine.id}/supersede`, { token: admin.token, body: { reason: "cleanup" } });
    expect(byAdmin.status).toBe(200);
    const missing = await http(cairn.url, "POST", `/v1/memories/t_${"b".repeat(32)}/supersede`, {
      token: admin.token,
      body: { reason: "x" },
    });
    expect(missing.status).toBe(404);
  });
});

describe("recall over time", () => {
  it("finds the valid memory semantically when every nearest neighbour has been superseded", async () => {
    const text = "The export worker retries each failed batch three times with jittered backoff.";
    const post = async (n: number, prompt: string) =>
      (
        await http(cairn.url, "POST", "/v1/memories", {
          token: lone.token,
          body: { session_id: "fix-lone", prompt, thought: "Decided after the outage.", response: `Recorded ${n}.` },
        })
      ).body.id as string;
    // More superseded neighbours than either unfiltered over-fetch takes for one hit, so Chroma must filter.
    const superseded: string[] = [];
    for (let n = 0; n < 16; n++) superseded.push(await post(n, n === 0 ? text : `${text} Variant ${n}.`));
    const valid = await post(99, "Export batches are now retried by the queue itself; the worker no longer retries.");
    for (const id of superseded) {
      const res = await http(cairn.url, "POST", `/v1/memories/${id}/supersede`, {
        token: lone.token,
        body: { by: valid, reason: "queue retries now" },
      });
      expect(res.status).toBe(200);
    }
    const ask = async (extra: Record<string, unknown>) =>
      ids(
        (
          await http(cairn.url, "POST", "/v1/memories/query", {
            token: lone.token,
            body: { query: text, mode: "semantic", limit: 1, ...extra },
          })
        ).body,
      );
    expect(await ask({})).toEqual([valid]);
    // The same query over every record finds one of the superseded ones nearer.
    const [nearest] = await ask({ include_superseded: true });
    expect(superseded).toContain(nearest);
  });

  it('"next.js" then "now react": now recalls react and not next.js; as of before, next.js and not react', async () => {
    const before = await add(alice.token, {
      session_id: "fix-frontend",
      prompt: "Pick the front-end framework.",
      thought: "Server rendering matters for the docs site.",
      response: "I use next.js for the front end.",
    });
    const between = new Date(Date.parse(before.recorded_at) + 1).toISOString();
    await new Promise((r) => setTimeout(r, 20));
    const now = await add(alice.token, {
      session_id: "fix-frontend-2",
      prompt: "Revisit the front-end framework.",
      thought: "The docs site went static; a plain SPA is simpler.",
      response: "Now I use react for the front end.",
      supersedes: [before.id],
    });
    const query = { query: "which framework do I use for the front end", session_id: undefined };
    const current = await search({ ...query, limit: 5 });
    expect(ids(current)).toContain(now.id);
    expect(ids(current)).not.toContain(before.id);
    const then = await search({ ...query, limit: 5, as_of: between });
    expect(ids(then)).toContain(before.id);
    expect(ids(then)).not.toContain(now.id);
    expect((await http(cairn.url, "GET", `/v1/memories/${now.id}`, { token: alice.token })).body.supersedes).toEqual([before.id]);
    const everything = await search({ ...query, limit: 5, include_superseded: true, detail: "full" });
    expect(ids(everything)).toEqual(expect.arrayContaining([before.id, now.id]));
    expect(everything.hits.find((h) => h.memory.id === before.id)!.memory.superseded_by).toBe(now.id);
  });

  it("a superseded or forgotten record leaves the lexical results, beside a sibling that stays", async () => {
    const stays = await add(alice.token, turn("fix-lex", 1, { prompt: "Rotate key LEXKEY-41 monthly." }));
    const replaced = await add(alice.token, turn("fix-lex", 2, { prompt: "Rotate key LEXKEY-42 weekly." }));
    const erased = await add(alice.token, turn("fix-lex", 3, { prompt: "Rotate key LEXKEY-43 daily, secret hunter2." }));
    const lexical = (q: string) => search({ query: q, mode: "lexical", limit: 10 });
    expect(ids(await lexical("LEXKEY-41 LEXKEY-42 LEXKEY-43"))).toEqual(expect.arrayContaining([stays.id, replaced.id, erased.id]));
    await http(cairn.url, "POST", `/v1/memories/${replaced.id}/supersede`, {
      token: alice.token,
      body: { reason: "weekly was too often" },
    });
    const forgotten = await http(cairn.url, "POST", `/v1/memories/${erased.id}/forget`, {
      token: alice.token,
      body: { reason: "held a secret" },
    });
    expect(forgotten.status).toBe(200);
    const after = ids(await lexical("LEXKEY-41 LEXKEY-42 LEXKEY-43"));
    expect(after).toContain(stays.id);
    expect(after).not.toContain(replaced.id);
    expect(after).not.toContain(erased.id);
    expect(ids(await lexical("hunter2"))).toEqual([]);
    expect(ids(await search({ query: "LEXKEY-42", mode: "lexical", include_superseded: true }))).toContain(replaced.id);
  });
});

describe("a correction racing another replica's catch-up", () => {
  it("the replica's index ends with the correction even when it read the record between the feed entry and the update", async () => {
    const store = cairn.runtime.store;
    const corrected = await add(racing.token, turn("race", 1));
    const sibling = await add(racing.token, turn("race", 2));
    // The other replica's index, caught up with both turns.
    const replica = new LexicalIndexes(openStorage(store), DEFAULT_TUNING);
    await replica.snapshot(racing.workspace, "turns");
    // Its next catch-up runs right after each feed entry the correction appends, before the correction's next step.
    class CatchUpAfterEachAppend extends Sequences {
      override async append(...args: Parameters<Sequences["append"]>) {
        const appended = await super.append(...args);
        await replica.snapshot(racing.workspace, "turns");
        return appended;
      }
    }
    const storage = openStorage(store);
    const corrections = new Corrections({ ...storage, feed: new ChangeFeed(new CatchUpAfterEachAppend(storage.ledger)) });
    const principal = { workspace: racing.workspace, agent: racing.agent, role: "agent" as const };
    await corrections.supersede(principal, await corrections.existing(racing.workspace, corrected.id), undefined, "wrong");
    const index = await replica.snapshot(racing.workspace, "turns");
    expect(Number(index.metadata(corrected.id)?.valid_until)).toBeLessThan(OPEN_VALIDITY);
    expect(Number(index.metadata(sibling.id)?.valid_until)).toBe(OPEN_VALIDITY);
    await replica.close();
  });
});

describe("forget_memory over REST", () => {
  it("removes the content, keeps a tombstone, and refuses to bring it back", async () => {
    const body = turn("fix-forget", 1, { thought: "The token is sk-live-123; do not paste it again.", idempotency_key: "forget-1" });
    const sibling = await add(alice.token, turn("fix-forget", 2));
    const written = await add(alice.token, body);
    const denied = await http(cairn.url, "POST", `/v1/memories/${written.id}/forget`, { token: bob.token, body: { reason: "not mine" } });
    expect(denied.status).toBe(403);
    const res = await http(cairn.url, "POST", `/v1/memories/${written.id}/forget`, {
      token: alice.token,
      body: { reason: "pasted a secret" },
    });
    expect(res.status).toBe(200);
    expectContractOutput("forget_memory", res.body);
    expect(res.body).toMatchObject({ id: written.id, forgotten_by: "alice", reason: "pasted a secret" });
    expect(JSON.stringify(res.body)).not.toContain("sk-live-123");
    const twice = await http(cairn.url, "POST", `/v1/memories/${written.id}/forget`, { token: admin.token, body: { reason: "again" } });
    expect(twice.body).toEqual(res.body);
    const read = await http(cairn.url, "GET", `/v1/memories/${written.id}`, { token: alice.token });
    expect([read.status, read.body.code]).toEqual([410, "gone"]);
    const back = await http(cairn.url, "POST", "/v1/memories", { token: alice.token, body });
    expect([back.status, back.body.code]).toEqual([410, "gone"]);
    const session = await http(cairn.url, "GET", "/v1/sessions/fix-forget?detail=full", { token: alice.token });
    expect(session.body.turns.map((t: { id: string }) => t.id)).toEqual([sibling.id]);
    expect(JSON.stringify(session.body)).not.toContain("sk-live-123");
    const recent = await http(cairn.url, "GET", "/v1/memories/recent?limit=100&detail=full", { token: alice.token });
    expect(JSON.stringify(recent.body)).not.toContain("sk-live-123");
    expect(recent.body.turns.map((t: { id: string }) => t.id)).toContain(sibling.id);
  });
});

describe("mark_outdated over REST", () => {
  it("keeps the record as written, shows the correction wherever it is returned, and keeps every correction", async () => {
    const attempt = await add(alice.token, {
      ...turn("fix-outdated", 1),
      kind: "attempt",
      checks: [{ name: "integration", command: "npm test", status: "passed", commit: "abc1234" }],
    });
    const fresh = await add(alice.token, turn("fix-outdated", 2));
    const first = await http(cairn.url, "POST", `/v1/memories/${attempt.id}/outdated`, {
      token: alice.token,
      body: { reason: "the retry layer was rewritten", commit: "def5678" },
    });
    expect(first.status).toBe(200);
    expectContractOutput("mark_outdated", first.body);
    expect(first.body).toMatchObject({ outdated: true, prompt: turn("fix-outdated", 1).prompt, check_status: "passed" });
    const second = await http(cairn.url, "POST", `/v1/memories/${attempt.id}/outdated`, {
      token: admin.token,
      body: { reason: "flaky on CI too" },
    });
    expect(second.body.corrections.map((c: { reason: string; by: string; commit?: string }) => [c.reason, c.by, c.commit ?? null])).toEqual(
      [
        ["the retry layer was rewritten", "alice", "def5678"],
        ["flaky on CI too", "ops", null],
      ],
    );
    // Still returned where it was, marked; its sibling is not marked.
    const listed = await http(cairn.url, "GET", "/v1/memories/recent?session_id=fix-outdated&detail=full", { token: alice.token });
    expect(listed.body.turns.map((t: { id: string; outdated: boolean }) => [t.id, t.outdated])).toEqual([
      [fresh.id, false],
      [attempt.id, true],
    ]);
    const found = await search({ query: turn("fix-outdated", 1).prompt, session_id: "fix-outdated" });
    expect(found.hits.find((h) => h.memory.id === attempt.id)).toBeDefined();
    const denied = await http(cairn.url, "POST", `/v1/memories/${attempt.id}/outdated`, { token: bob.token, body: { reason: "x" } });
    expect(denied.status).toBe(403);
  });
});

describe("a correction sent again", () => {
  const auditOf = async (id: string) =>
    ((await http(cairn.url, "GET", `/v1/audit?memory_id=${id}`, { token: admin.token })).body.entries as Array<{ action: string }>).map(
      (e) => e.action,
    );

  it("mark_outdated with the same arguments adds nothing; with another reason it adds a correction", async () => {
    const memory = await add(alice.token, turn("fix-again", 1));
    const body = { reason: "the cache layer was replaced", commit: "aa11bb2" };
    const first = await http(cairn.url, "POST", `/v1/memories/${memory.id}/outdated`, { token: alice.token, body });
    const retry = await http(cairn.url, "POST", `/v1/memories/${memory.id}/outdated`, { token: alice.token, body });
    expect([first.status, retry.status]).toEqual([200, 200]);
    expect(retry.body).toEqual(first.body);
    expect(retry.body.corrections).toHaveLength(1);
    expect(await auditOf(memory.id)).toEqual(["add", "mark_outdated"]);
    const other = await http(cairn.url, "POST", `/v1/memories/${memory.id}/outdated`, {
      token: alice.token,
      body: { ...body, reason: "and the TTL moved" },
    });
    expect(other.body.corrections).toHaveLength(2);
    expect(await auditOf(memory.id)).toEqual(["add", "mark_outdated", "mark_outdated"]);
  });

  it("supersede_memory with the same arguments answers the memory as it stands; with another reason, 409", async () => {
    const old = await add(alice.token, turn("fix-again", 2));
    const next = await add(alice.token, turn("fix-again", 3));
    const body = { by: next.id, reason: "moved to the queue" };
    const first = await http(cairn.url, "POST", `/v1/memories/${old.id}/supersede`, { token: alice.token, body });
    const retry = await http(cairn.url, "POST", `/v1/memories/${old.id}/supersede`, { token: alice.token, body });
    expect([first.status, retry.status]).toEqual([200, 200]);
    expect(retry.body).toEqual(first.body);
    expect(await auditOf(old.id)).toEqual(["add", "supersede"]);
    const other = await http(cairn.url, "POST", `/v1/memories/${old.id}/supersede`, {
      token: alice.token,
      body: { ...body, reason: "another" },
    });
    expect([other.status, other.body.code]).toEqual([409, "already_superseded"]);
  });
});

describe("mark_outdated over MCP", () => {
  it("marks through a tool call", async () => {
    const client = await mcpClient(cairn.url, alice.token);
    try {
      const written = await add(alice.token, turn("fix-mcp-outdated", 1));
      const res = (await client.callTool({ name: "mark_outdated", arguments: { memory_id: written.id, reason: "new benchmark" } })) as any;
      expect(res.isError).toBeFalsy();
      expectContractOutput("mark_outdated", res.structuredContent);
      expect(res.structuredContent.outdated).toBe(true);
      const bad = (await client.callTool({ name: "mark_outdated", arguments: { memory_id: written.id } })) as any;
      expect(bad.isError).toBe(true);
    } finally {
      await client.close();
    }
  });
});

describe("supersede_memory over MCP", () => {
  it("supersedes through a tool call and answers a stranger's attempt with a forbidden tool error", async () => {
    const client = await mcpClient(cairn.url, alice.token);
    const stranger = await mcpClient(cairn.url, bob.token);
    try {
      const old = await add(alice.token, turn("fix-mcp", 1));
      const denied = (await stranger.callTool({ name: "supersede_memory", arguments: { memory_id: old.id, reason: "x" } })) as any;
      expect(denied.isError).toBe(true);
      expect(JSON.parse(denied.content[0].text).code).toBe("forbidden");
      const res = (await client.callTool({ name: "supersede_memory", arguments: { memory_id: old.id, reason: "outdated" } })) as any;
      expect(res.isError).toBeFalsy();
      expectContractOutput("supersede_memory", res.structuredContent);
      expect(res.structuredContent.superseded_reason).toBe("outdated");
    } finally {
      await client.close();
      await stranger.close();
    }
  });
});

describe("forget_memory over MCP", () => {
  it("forgets through a tool call, and get_memory then answers gone", async () => {
    const client = await mcpClient(cairn.url, alice.token);
    try {
      const written = await add(alice.token, turn("fix-mcp-forget", 1));
      const res = (await client.callTool({
        name: "forget_memory",
        arguments: { memory_id: written.id, reason: "wrong workspace" },
      })) as any;
      expect(res.isError).toBeFalsy();
      expectContractOutput("forget_memory", res.structuredContent);
      const read = (await client.callTool({ name: "get_memory", arguments: { memory_id: written.id } })) as any;
      expect(read.isError).toBe(true);
      expect(JSON.parse(read.content[0].text).code).toBe("gone");
    } finally {
      await client.close();
    }
  });
});

describe("validity at three instants", () => {
  it("one always valid, one superseded, one valid only later: each instant sees exactly the right ones", async () => {
    const t0 = Date.now();
    const later = new Date(t0 + 60 * 60 * 1000).toISOString(); // valid from an hour from now
    const always = await add(alice.token, {
      session_id: "fix-instants",
      prompt: "Deploys run from main INSTANT-A.",
      thought: "t",
      response: "r",
    });
    const replaced = await add(alice.token, {
      session_id: "fix-instants",
      prompt: "Deploys need two approvals INSTANT-B.",
      thought: "t",
      response: "r",
    });
    const future = await add(alice.token, {
      session_id: "fix-instants",
      prompt: "Deploys freeze for the holidays INSTANT-C.",
      thought: "t",
      response: "r",
      occurred_at: later,
    });
    const t1 = new Date(Date.now()).toISOString();
    await new Promise((r) => setTimeout(r, 10));
    await http(cairn.url, "POST", `/v1/memories/${replaced.id}/supersede`, { token: alice.token, body: { reason: "one approval now" } });
    await new Promise((r) => setTimeout(r, 10));
    const t2 = new Date(Date.now()).toISOString();
    const t3 = new Date(Date.parse(later) + 1000).toISOString();
    const at = async (as_of: string) =>
      ids(await search({ query: "INSTANT-A INSTANT-B INSTANT-C deploys", session_id: "fix-instants", mode: "lexical", as_of })).sort();
    expect(await at(t1)).toEqual([always.id, replaced.id].sort());
    expect(await at(t2)).toEqual([always.id]);
    expect(await at(t3)).toEqual([always.id, future.id].sort());
    const now = ids(await search({ query: "INSTANT-A INSTANT-B INSTANT-C deploys", session_id: "fix-instants", mode: "lexical" }));
    expect(now).toEqual([always.id]);
  });
});

describe("provenance and checks", () => {
  it("marks who wrote it and labels imported content untrusted", async () => {
    const byAgent = await add(alice.token, turn("fix-source", 1));
    const byPerson = await add(admin.token, turn("fix-source", 2));
    const imported = await add(alice.token, { ...turn("fix-source", 3), source: "import" });
    const claim = await http(cairn.url, "POST", "/v1/memories", {
      token: alice.token,
      body: { ...turn("fix-source", 4), source: "human" },
    });
    expect([claim.status, claim.body.code]).toEqual([403, "forbidden"]);
    const read = async (id: string) => (await http(cairn.url, "GET", `/v1/memories/${id}`, { token: alice.token })).body;
    expect(await read(byAgent.id)).toMatchObject({ source: "agent", trusted: true });
    expect(await read(byPerson.id)).toMatchObject({ source: "human", trusted: true });
    expect(await read(imported.id)).toMatchObject({ source: "import", trusted: false });
  });

  it("keeps the author of imported history apart from the writing agent, and counts it in what a retry must repeat", async () => {
    const body = {
      ...turn("fix-author", 1),
      source: "import",
      author: "Ada Lovelace <ada@example.com>",
      idempotency_key: "git:fix-author:1",
    };
    const written = await http(cairn.url, "POST", "/v1/memories", { token: alice.token, body });
    expect(written.status).toBe(201);
    const read = async (id: string) => (await http(cairn.url, "GET", `/v1/memories/${id}`, { token: alice.token })).body;
    expect(await read(written.body.id)).toMatchObject({ agent: "alice", author: "Ada Lovelace <ada@example.com>", source: "import" });
    const replay = await http(cairn.url, "POST", "/v1/memories", { token: alice.token, body });
    expect([replay.status, replay.body.replayed, replay.body.id]).toEqual([200, true, written.body.id]);
    const other = await http(cairn.url, "POST", "/v1/memories", { token: alice.token, body: { ...body, author: "Someone Else" } });
    expect([other.status, other.body.code]).toEqual([409, "idempotency_conflict"]);
    const plain = await add(alice.token, turn("fix-author", 2));
    expect(await read(plain.id)).toMatchObject({ agent: "alice" });
    expect(await read(plain.id)).not.toHaveProperty("author");
  });

  it("derives check status, filters on it, and says which commit a passed check speaks for", async () => {
    const passed = await add(alice.token, {
      ...turn("fix-checks", 1),
      kind: "attempt",
      checks: [{ name: "unit", status: "passed", commit: "c0ffee1" }],
    });
    const failed = await add(alice.token, {
      ...turn("fix-checks", 2),
      kind: "attempt",
      checks: [
        { name: "unit", status: "passed", commit: "c0ffee2" },
        { name: "e2e", status: "failed", commit: "c0ffee2" },
      ],
    });
    const none = await add(alice.token, { ...turn("fix-checks", 3), kind: "attempt" });
    const byStatus = async (check_status: string) =>
      ids(await search({ query: "task reasoning outcome step", session_id: "fix-checks", check_status, limit: 10 }));
    expect(await byStatus("passed")).toEqual([passed.id]);
    expect(await byStatus("failed")).toEqual([failed.id]);
    expect(await byStatus("unverified")).toEqual([none.id]);
    const memory = (await http(cairn.url, "GET", `/v1/memories/${passed.id}`, { token: alice.token })).body;
    expect(memory.check_note).toMatch(/speak for commit c0ffee1, not for the code as it is now/);
    expect((await http(cairn.url, "GET", `/v1/memories/${none.id}`, { token: alice.token })).body.check_note).toBeUndefined();
  });
});

const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value), "utf8").toString("base64url");
/** The position an audit cursor carries (after its tag): the slot, and the entry of it to read next. */
const decoded = (cursor: string | null) =>
  cursor === null ? null : JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")).slice(1);
/** An unfiltered audit listing's cursor of the workspace, at any position a caller could spell. */
const auditCursor = (workspace: string, ...position: unknown[]) =>
  cursorOf([cursorTag({ name: "audit", workspace, scope: [undefined, undefined, undefined, undefined] }), ...position]);

/** A memory id of the contract's form that reads back as `label` (`labelOf`), so that a test's entries say whose they are. */
const memoryIdOf = (label: string) => `t_${Buffer.from(label, "utf8").toString("hex").padEnd(32, "0")}`;
const labelOf = (id: string) => Buffer.from(id.slice(2), "hex").toString("utf8").replace(/\0+$/, "");

/** A flat entry at slot 0, then a batch's five entries in slot 1, as a write batch is to leave them. */
async function seedBatchLog(workspace: string): Promise<string[]> {
  const sequences = cairn.runtime.storage.sequences;
  await sequences.append(
    workspace,
    AUDIT_STREAM,
    { action: "forget", actor: "ops", memory_id: memoryIdOf("m_flat"), reason: "flat" },
    "w_flat",
  );
  const entries = ["m_0", "m_1", "m_2", "m_3", "m_4"].map((id, i) => ({
    action: i % 2 === 0 ? "supersede" : "forget",
    actor: "ops",
    memory_id: memoryIdOf(id),
    reason: `batch ${i}`,
    write_id: `w_${i}`,
  }));
  const { seq } = await sequences.append(workspace, AUDIT_STREAM, batchPayload(entries), "w_batch");
  expect(seq).toBe(1);
  return ["m_flat", ...entries.map((e) => labelOf(e.memory_id))];
}

describe("get_audit_log over REST", () => {
  it("records every mutation exactly once, for admins only, and never the content", async () => {
    const written = await add(alice.token, turn("fix-audit", 1, { thought: "secret-ish content AUDIT-SECRET" }));
    const replacement = await add(alice.token, turn("fix-audit", 2));
    await http(cairn.url, "POST", "/v1/memories", { token: alice.token, body: turn("fix-audit", 2) }); // a replay: no entry
    await http(cairn.url, "POST", `/v1/memories/${written.id}/outdated`, { token: alice.token, body: { reason: "stale" } });
    await http(cairn.url, "POST", `/v1/memories/${written.id}/supersede`, {
      token: alice.token,
      body: { by: replacement.id, reason: "replaced" },
    });
    await http(cairn.url, "POST", `/v1/memories/${written.id}/forget`, { token: alice.token, body: { reason: "held a secret" } });
    await http(cairn.url, "POST", `/v1/memories/${written.id}/forget`, { token: alice.token, body: { reason: "again" } }); // no second entry
    const log = await http(cairn.url, "GET", `/v1/audit?memory_id=${written.id}`, { token: admin.token });
    expect(log.status).toBe(200);
    expectContractOutput("get_audit_log", log.body);
    expect(log.body.entries.map((e: { action: string; actor: string; reason?: string }) => [e.action, e.actor, e.reason ?? null])).toEqual([
      ["add", "alice", null],
      ["mark_outdated", "alice", "stale"],
      ["supersede", "alice", "replaced"],
      ["forget", "alice", "held a secret"],
    ]);
    expect(JSON.stringify(log.body)).not.toContain("AUDIT-SECRET");
    // The replacement's record changed too (its `supersedes` gained the memory): its history says so.
    const replacementLog = await http(cairn.url, "GET", `/v1/audit?memory_id=${replacement.id}`, { token: admin.token });
    expect(replacementLog.body.entries.map((e: { action: string; replaces?: string }) => [e.action, e.replaces ?? null])).toEqual([
      ["add", null],
      ["named_replacement", written.id],
    ]);
    const denied = await http(cairn.url, "GET", "/v1/audit", { token: alice.token });
    expect([denied.status, denied.body.code]).toEqual([403, "forbidden"]);
    // Paging through everything: no gaps or repeats.
    const all: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { entries: Array<{ action: string; memory_id: string; at: string }>; next_cursor: string | null } } = await http(
        cairn.url,
        "GET",
        `/v1/audit?limit=3${cursor ? `&after=${cursor}` : ""}`,
        { token: admin.token },
      );
      all.push(...page.body.entries.map((e) => `${e.action}:${e.memory_id}:${e.at}`));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(new Set(all).size).toBe(all.length);
    expect(all.filter((e) => e.includes(written.id))).toHaveLength(4);
    expect(all.filter((e) => e.includes(replacement.id))).toHaveLength(2);
  });
});

describe("get_audit_log of batch slots over REST", () => {
  type Page = { entries: Array<{ action: string; memory_id: string; reason?: string }>; next_cursor: string | null };
  const get = async (query: string) => http(cairn.url, "GET", `/v1/audit?${query}`, { token: batchOps.token });
  const page = async (query: string) => {
    const res = await get(query);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expectContractOutput("get_audit_log", res.body);
    return res.body as Page;
  };

  it("reads a batch slot's entries one by one and pages within it, with cursors at a slot's start as they were", async () => {
    const ids = await seedBatchLog(batchOps.workspace);
    const whole = await page("limit=100");
    expect(whole.entries.map((e) => [labelOf(e.memory_id), e.action, e.reason])).toEqual([
      ["m_flat", "forget", "flat"],
      ["m_0", "supersede", "batch 0"],
      ["m_1", "forget", "batch 1"],
      ["m_2", "supersede", "batch 2"],
      ["m_3", "forget", "batch 3"],
      ["m_4", "supersede", "batch 4"],
    ]);
    expect(whole.next_cursor).toBeNull();

    // Ending at a slot's end issues the next slot's start.
    const first = await page("limit=1");
    expect(first.entries.map((e) => labelOf(e.memory_id))).toEqual(["m_flat"]);
    expect(decoded(first.next_cursor)).toEqual([1, 0]);

    // From that cursor, pages of two within the batch slot: 2, 2, 1, with nothing repeated or skipped.
    const seen: string[] = [];
    const cursors: unknown[] = [];
    let cursor: string | null = first.next_cursor;
    const sizes: number[] = [];
    while (cursor !== null) {
      const next: Page = await page(`limit=2&after=${cursor}`);
      sizes.push(next.entries.length);
      seen.push(...next.entries.map((e) => labelOf(e.memory_id)));
      cursors.push(decoded(next.next_cursor));
      cursor = next.next_cursor;
    }
    expect(sizes).toEqual([2, 2, 1]);
    expect(seen).toEqual(ids.slice(1));
    expect(cursors).toEqual([[1, 2], [1, 4], null]);

    // From the start, a page ends mid-slot and the next picks up at the entry after it.
    const fromStart = await page("limit=2");
    expect(decoded(fromStart.next_cursor)).toEqual([1, 1]);
    const rest = await page(`limit=100&after=${fromStart.next_cursor}`);
    expect([...fromStart.entries, ...rest.entries].map((e) => labelOf(e.memory_id))).toEqual(ids);
    // A filter applies to each entry of the slot.
    expect((await page(`memory_id=${memoryIdOf("m_3")}`)).entries.map((e) => e.reason)).toEqual(["batch 3"]);
  });

  it("refuses an entry cursor the server never issues, and one of another listing, with invalid_cursor", async () => {
    // The log of this workspace holds two slots once the test above has run; seed it when run alone.
    if ((await page("limit=100")).entries.length === 0) await seedBatchLog(batchOps.workspace);
    const ws = batchOps.workspace;
    for (const cursor of [
      auditCursor(ws, 1, "x"),
      auditCursor(ws, 1, -1),
      auditCursor(ws, 1, 1.5),
      auditCursor(ws, 1, Number.MAX_SAFE_INTEGER + 2),
      auditCursor(ws, -1, 0),
      auditCursor(ws, 1),
      auditCursor(ws, 1, 0, 0),
      auditCursor(ws, 2, 1),
      auditCursor(batchMcpOps.workspace, 1, 0),
      cursorOf([1, "audit"]),
      cursorOf([1, "audit:2"]),
    ]) {
      const res = await get(`limit=2&after=${cursor}`);
      expect([res.status, res.body.code], JSON.stringify(decoded(cursor))).toEqual([400, "invalid_cursor"]);
      expect(res.body.hint).toMatch(/next_cursor/);
    }
    // An entry past a slot's last is that slot's end; a slot's start at the log's end is an empty last page.
    expect(await page(`limit=2&after=${auditCursor(ws, 1, 9)}`)).toEqual({ entries: [], next_cursor: null });
    expect(await page(`limit=2&after=${auditCursor(ws, 2, 0)}`)).toEqual({ entries: [], next_cursor: null });
    // A position spelled right pages as the issued cursor does.
    expect((await page(`limit=100&after=${auditCursor(ws, 1, 3)}`)).entries.map((e) => labelOf(e.memory_id))).toEqual(["m_3", "m_4"]);
  });

  it("counts a provisional entry of a batch slot only when its memory holds that entry's own write id", async () => {
    const written = await add(provisionalWriter.token, turn("fix-audit-prov", 1));
    const turns = await cairn.runtime.store.collection(provisionalWriter.workspace, "turns");
    const [stored] = await turns.get({ ids: [written.id] });
    expect(stored!.metadata.write_id).toEqual(expect.any(String));
    const writeId = String(stored!.metadata.write_id);
    const entry = (actor: string, memoryId: string, write: string) => ({
      action: "add",
      actor,
      memory_id: memoryId,
      provisional: true,
      write_id: write,
    });
    // The slot's own write id is the memory's, so that only the entry's own decides.
    await cairn.runtime.storage.sequences.append(
      provisionalWriter.workspace,
      AUDIT_STREAM,
      batchPayload([
        entry("lost", written.id, "w_lost"),
        entry("landed", written.id, writeId),
        entry("never", memoryIdOf("never written"), writeId),
      ]),
      writeId,
    );
    const log = await http(cairn.url, "GET", "/v1/audit?limit=100", { token: provisionalOps.token });
    expect(log.status).toBe(200);
    expect(log.body.entries.map((e: { actor: string; memory_id: string }) => [e.actor, e.memory_id])).toEqual([
      ["writer", written.id],
      ["landed", written.id],
    ]);
  });
});

describe("get_audit_log over MCP", () => {
  it("pages within a batch slot as REST does", async () => {
    const ids = await seedBatchLog(batchMcpOps.workspace);
    const client = await mcpClient(cairn.url, batchMcpOps.token);
    try {
      const seen: string[] = [];
      const cursors: unknown[] = [];
      let after: string | undefined;
      do {
        const res = (await client.callTool({ name: "get_audit_log", arguments: { limit: 2, ...(after ? { after } : {}) } })) as any;
        expect(res.isError).toBeFalsy();
        expectContractOutput("get_audit_log", res.structuredContent);
        seen.push(...res.structuredContent.entries.map((e: { memory_id: string }) => labelOf(e.memory_id)));
        cursors.push(decoded(res.structuredContent.next_cursor));
        after = res.structuredContent.next_cursor ?? undefined;
      } while (after);
      expect(seen).toEqual(ids);
      expect(cursors).toEqual([[1, 1], [1, 3], null]);
      const refused = (await client.callTool({
        name: "get_audit_log",
        arguments: { after: auditCursor(batchMcpOps.workspace, 1, "0") },
      })) as any;
      expect(refused.isError).toBe(true);
      expect(JSON.parse(refused.content[0].text).code).toBe("invalid_cursor");
    } finally {
      await client.close();
    }
  });

  it("serves admins and refuses agents with a forbidden tool error", async () => {
    const adminClient = await mcpClient(cairn.url, admin.token);
    const agentClient = await mcpClient(cairn.url, alice.token);
    try {
      const written = await add(alice.token, turn("fix-audit-mcp", 1));
      const res = (await adminClient.callTool({ name: "get_audit_log", arguments: { memory_id: written.id } })) as any;
      expect(res.isError).toBeFalsy();
      expectContractOutput("get_audit_log", res.structuredContent);
      expect(res.structuredContent.entries.map((e: { action: string }) => e.action)).toEqual(["add"]);
      const denied = (await agentClient.callTool({ name: "get_audit_log", arguments: {} })) as any;
      expect(denied.isError).toBe(true);
      expect(JSON.parse(denied.content[0].text).code).toBe("forbidden");
    } finally {
      await adminClient.close();
      await agentClient.close();
    }
  });
});

/** Text with nothing a reader can see: the same rule refuses it in a reason as in a prompt. */
const MEANINGLESS: Array<[string, string]> = [
  ["a lone surrogate", "\ud800"],
  ["a lone surrogate beside words", "moved \udc00 to streams"],
  ["only NUL", "\u0000"],
  ["only zero-width characters", "\u200b\u200c\u200d"],
  ["only invisible formatting and spaces", " \ufeff\u2060 \u200e\t"],
];
/** Reasons that carry meaning, in more than ASCII. */
const MEANINGFUL = ["moved to Redis streams", "キャッシュを再設計した 🪨🧭 — ça marche, naïve café"];

describe("free text that carries nothing a reader can see", () => {
  const reasonRoutes = [
    { operation: "supersede_memory", route: "supersede", token: () => alice.token },
    { operation: "mark_outdated", route: "outdated", token: () => alice.token },
    { operation: "forget_memory", route: "forget", token: () => alice.token },
    { operation: "review_memory", route: "review", token: () => admin.token, extra: { decision: "approve" } },
  ];

  it("is refused in every correction reason over REST as in a prompt, with nothing changed; real reasons in any script are kept", async () => {
    const target = await add(alice.token, turn("fix-text", 1, { source: "import" }));
    const untouched = JSON.stringify((await http(cairn.url, "GET", `/v1/memories/${target.id}`, { token: alice.token })).body);
    for (const { operation, route, token, extra } of reasonRoutes) {
      for (const [label, reason] of MEANINGLESS) {
        const res = await http(cairn.url, "POST", `/v1/memories/${target.id}/${route}`, { token: token(), body: { ...extra, reason } });
        expect([res.status, res.body.code], `${operation}: ${label}`).toEqual([400, "validation_failed"]);
        expect(
          res.body.errors.map((e: { path: string }) => e.path),
          `${operation}: ${label}`,
        ).toEqual(["reason"]);
        expect(res.body.hint).toMatch(/errors/);
      }
    }
    for (const [label, prompt] of MEANINGLESS) {
      const res = await http(cairn.url, "POST", "/v1/memories", { token: alice.token, body: turn("fix-text", 2, { prompt }) });
      expect([res.status, res.body.code, res.body.errors?.[0]?.path], `prompt: ${label}`).toEqual([400, "validation_failed", "prompt"]);
    }
    expect(JSON.stringify((await http(cairn.url, "GET", `/v1/memories/${target.id}`, { token: alice.token })).body)).toBe(untouched);
    const audit = await http(cairn.url, "GET", `/v1/audit?memory_id=${target.id}`, { token: admin.token });
    expect(audit.body.entries.map((e: { action: string }) => e.action)).toEqual(["add"]);

    // The same memory takes each correction with a real reason, ASCII or not, and keeps it as written.
    for (const reason of MEANINGFUL) {
      const outdated = await http(cairn.url, "POST", `/v1/memories/${target.id}/outdated`, { token: alice.token, body: { reason } });
      expect(outdated.status).toBe(200);
      expect(outdated.body.corrections.at(-1).reason).toBe(reason);
      const reviewed = await http(cairn.url, "POST", `/v1/memories/${target.id}/review`, {
        token: admin.token,
        body: { decision: "approve", reason },
      });
      expect([reviewed.status, reviewed.body.review?.reason]).toEqual([200, reason]);
    }
    const superseded = await http(cairn.url, "POST", `/v1/memories/${target.id}/supersede`, {
      token: alice.token,
      body: { reason: MEANINGFUL[1] },
    });
    expect([superseded.status, superseded.body.superseded_reason]).toEqual([200, MEANINGFUL[1]]);
    const forgotten = await http(cairn.url, "POST", `/v1/memories/${target.id}/forget`, {
      token: alice.token,
      body: { reason: MEANINGFUL[1] },
    });
    expect([forgotten.status, forgotten.body.reason]).toEqual([200, MEANINGFUL[1]]);
    const written = await http(cairn.url, "POST", "/v1/memories", {
      token: alice.token,
      body: turn("fix-text", 3, { prompt: MEANINGFUL[1] }),
    });
    expect(written.status).toBe(201);
  });

  it("is refused in every correction reason over MCP with a tool error naming the field; real reasons are kept", async () => {
    const target = await add(alice.token, turn("fix-text-mcp", 1, { source: "import" }));
    const agentClient = await mcpClient(cairn.url, alice.token);
    const adminClient = await mcpClient(cairn.url, admin.token);
    try {
      for (const { operation, extra } of reasonRoutes) {
        const client = operation === "review_memory" ? adminClient : agentClient;
        for (const [label, reason] of MEANINGLESS) {
          const res = (await client.callTool({ name: operation, arguments: { memory_id: target.id, ...extra, reason } })) as any;
          expect(res.isError, `${operation}: ${label}`).toBe(true);
          const problem = JSON.parse(res.content[0].text);
          expect([problem.code, problem.errors?.map((e: { path: string }) => e.path)], `${operation}: ${label}`).toEqual([
            "validation_failed",
            ["reason"],
          ]);
          expect(problem.hint).toEqual(expect.any(String));
        }
      }
      const memory = (await http(cairn.url, "GET", `/v1/memories/${target.id}`, { token: alice.token })).body;
      expect([memory.corrections, memory.review.state]).toEqual([[], "pending"]);
      const outdated = (await agentClient.callTool({
        name: "mark_outdated",
        arguments: { memory_id: target.id, reason: MEANINGFUL[1] },
      })) as any;
      expect(outdated.isError).toBeFalsy();
      expect(outdated.structuredContent.corrections.at(-1).reason).toBe(MEANINGFUL[1]);
      const reviewed = (await adminClient.callTool({
        name: "review_memory",
        arguments: { memory_id: target.id, decision: "reject", reason: MEANINGFUL[0] },
      })) as any;
      expect([reviewed.isError ?? false, reviewed.structuredContent.review.reason]).toEqual([false, MEANINGFUL[0]]);
    } finally {
      await agentClient.close();
      await adminClient.close();
    }
  });
});

/** A memory's audit trail as [action, actor, replaces, reason]. */
const trail = async (memoryId: string) =>
  (await http(cairn.url, "GET", `/v1/audit?memory_id=${memoryId}`, { token: admin.token })).body.entries.map(
    (e: { action: string; actor: string; replaces?: string; reason?: string }) => [e.action, e.actor, e.replaces ?? null, e.reason ?? null],
  );

describe("superseding by another agent's memory", () => {
  it("over REST links both ways and records the change under each memory, once, whoever wrote the replacement", async () => {
    const theirs = await add(bob.token, turn("fix-cross", 1, { kind: "decision", prompt: "Sessions live in Redis now" }));
    const mine = await add(alice.token, turn("fix-cross", 2, { kind: "decision", prompt: "Sessions live in Postgres" }));
    const res = await http(cairn.url, "POST", `/v1/memories/${mine.id}/supersede`, {
      token: alice.token,
      body: { by: theirs.id, reason: "bob's decision replaces mine" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: mine.id, superseded_by: theirs.id });
    const replacement = await http(cairn.url, "GET", `/v1/memories/${theirs.id}`, { token: bob.token });
    expect([replacement.body.agent, replacement.body.supersedes]).toEqual(["bob", [mine.id]]);
    expect(await trail(mine.id)).toEqual([
      ["add", "alice", null, null],
      ["supersede", "alice", null, "bob's decision replaces mine"],
    ]);
    expect(await trail(theirs.id)).toEqual([
      ["add", "bob", null, null],
      ["named_replacement", "alice", mine.id, "bob's decision replaces mine"],
    ]);
    // A retry records nothing more under either.
    const again = await http(cairn.url, "POST", `/v1/memories/${mine.id}/supersede`, {
      token: alice.token,
      body: { by: theirs.id, reason: "bob's decision replaces mine" },
    });
    expect(again.status).toBe(200);
    expect(await trail(theirs.id)).toHaveLength(2);
    expect(await trail(mine.id)).toHaveLength(2);
    // Bob still may not correct alice's memory, nor she his.
    const denied = await http(cairn.url, "POST", `/v1/memories/${theirs.id}/outdated`, {
      token: alice.token,
      body: { reason: "not mine" },
    });
    expect([denied.status, denied.body.code]).toEqual([403, "forbidden"]);
  });

  it("over REST, superseding by one's own memory is audited under both the same way", async () => {
    const older = await add(alice.token, turn("fix-own", 1, { kind: "decision" }));
    const newer = await add(alice.token, turn("fix-own", 2, { kind: "decision" }));
    const res = await http(cairn.url, "POST", `/v1/memories/${older.id}/supersede`, {
      token: alice.token,
      body: { by: newer.id, reason: "revised" },
    });
    expect([res.status, res.body.superseded_by]).toEqual([200, newer.id]);
    expect(await trail(older.id)).toEqual([
      ["add", "alice", null, null],
      ["supersede", "alice", null, "revised"],
    ]);
    expect(await trail(newer.id)).toEqual([
      ["add", "alice", null, null],
      ["named_replacement", "alice", older.id, "revised"],
    ]);
    // Without `by`, only the memory superseded changes, and only it has an entry.
    const plain = await add(alice.token, turn("fix-own", 3));
    expect(
      (await http(cairn.url, "POST", `/v1/memories/${plain.id}/supersede`, { token: alice.token, body: { reason: "dropped" } })).status,
    ).toBe(200);
    expect(await trail(plain.id)).toEqual([
      ["add", "alice", null, null],
      ["supersede", "alice", null, "dropped"],
    ]);
    expect(await trail(newer.id)).toHaveLength(2);
  });

  it("over MCP records the change under the other agent's memory as REST does", async () => {
    const theirs = await add(bob.token, turn("fix-cross-mcp", 1, { kind: "decision" }));
    const mine = await add(alice.token, turn("fix-cross-mcp", 2, { kind: "decision" }));
    const client = await mcpClient(cairn.url, alice.token);
    try {
      const res = (await client.callTool({
        name: "supersede_memory",
        arguments: { memory_id: mine.id, by: theirs.id, reason: "his is newer" },
      })) as any;
      expect(res.isError).toBeFalsy();
      expectContractOutput("supersede_memory", res.structuredContent);
    } finally {
      await client.close();
    }
    expect(await trail(theirs.id)).toEqual([
      ["add", "bob", null, null],
      ["named_replacement", "alice", mine.id, "his is newer"],
    ]);
    const adminClient = await mcpClient(cairn.url, admin.token);
    try {
      const log = (await adminClient.callTool({ name: "get_audit_log", arguments: { memory_id: theirs.id } })) as any;
      expectContractOutput("get_audit_log", log.structuredContent);
      expect(log.structuredContent.entries.at(-1)).toMatchObject({ action: "named_replacement", actor: "alice", replaces: mine.id });
    } finally {
      await adminClient.close();
    }
  });
});
