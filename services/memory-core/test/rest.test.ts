import { describe, expect, it } from "vitest";
import { expectContractOutput } from "./support/contract-schemas.js";
import { http, makeToken, startCairn, turn, uniqueWorkspace, useCairn } from "./support/harness.js";

const workspace = uniqueWorkspace("rest");
const alice = makeToken(workspace, "alice");
const bob = makeToken(workspace, "bob");
const cairn = useCairn([alice, bob]);

describe("add_memory over REST", () => {
  it("stores a turn attributed to the token's agent and answers 201", async () => {
    const res = await http(cairn.url, "POST", "/v1/memories", {
      token: alice.token,
      body: turn("rest-add", 1, {
        kind: "decision",
        tags: ["auth"],
        refs: ["AUTH-1"],
        checks: [{ name: "unit", status: "passed", commit: "abc1234" }],
      }),
    });
    expect(res.status).toBe(201);
    expectContractOutput("add_memory", res.body);
    expect(res.body).toMatchObject({ session_id: "rest-add", agent: "alice", replayed: false });
    expect(Date.parse(res.body.recorded_at)).toBeGreaterThan(Date.now() - 60_000);

    const stored = await http(cairn.url, "GET", "/v1/sessions/rest-add?detail=full", { token: alice.token });
    expect(stored.body.turns).toHaveLength(1);
    expect(stored.body.turns[0]).toMatchObject({
      id: res.body.id,
      agent: "alice",
      kind: "decision",
      tags: ["auth"],
      refs: ["AUTH-1"],
      check_status: "passed",
      prompt: turn("rest-add", 1).prompt,
    });
  });
});

describe("query_recent_turns over REST", () => {
  it("returns the caller's newest turns first, and a teammate's when asked", async () => {
    for (let n = 1; n <= 3; n++) {
      expect((await http(cairn.url, "POST", "/v1/memories", { token: bob.token, body: turn("rest-recent", n) })).status).toBe(201);
    }
    const own = await http(cairn.url, "GET", "/v1/memories/recent?limit=2&detail=full", { token: bob.token });
    expect(own.status).toBe(200);
    expectContractOutput("query_recent_turns", own.body);
    expect(own.body.turns.map((t: { prompt: string }) => t.prompt)).toEqual([turn("rest-recent", 3).prompt, turn("rest-recent", 2).prompt]);
    expect(own.body.next_cursor).toEqual(expect.any(String));

    // Alice asks for Bob's turns: team memory within the workspace.
    const team = await http(cairn.url, "GET", "/v1/memories/recent?agent=bob&limit=10", { token: alice.token });
    expect(team.body.turns).toHaveLength(3);
    expect(team.body.turns.every((t: { agent: string }) => t.agent === "bob")).toBe(true);
    // Alice's own default does not include Bob's turns.
    const alicesOwn = await http(cairn.url, "GET", "/v1/memories/recent?limit=100", { token: alice.token });
    expect(alicesOwn.body.turns.length).toBeGreaterThan(0);
    expect(alicesOwn.body.turns.every((t: { agent: string }) => t.agent === "alice")).toBe(true);
  });

  it("shortens long fields under detail=summary and returns them whole under detail=full", async () => {
    const long = "x".repeat(1000);
    await http(cairn.url, "POST", "/v1/memories", { token: alice.token, body: turn("rest-detail", 1, { thought: long }) });
    const summary = await http(cairn.url, "GET", "/v1/memories/recent?session_id=rest-detail&detail=summary", { token: alice.token });
    expect(summary.body.turns[0].truncated).toBe(true);
    expect(summary.body.turns[0].thought.length).toBeLessThanOrEqual(280);
    const full = await http(cairn.url, "GET", "/v1/memories/recent?session_id=rest-detail&detail=full", { token: alice.token });
    expect(full.body.turns[0].truncated).toBe(false);
    expect(full.body.turns[0].thought).toBe(long);
  });
});

describe("query_raw_memories over REST", () => {
  it("finds a turn by meaning and narrows by agent and kind", async () => {
    await http(cairn.url, "POST", "/v1/memories", {
      token: alice.token,
      body: {
        session_id: "rest-search",
        kind: "decision",
        prompt: "Choose a cache for session tokens.",
        thought: "Redis beat memcached on persistence; we need tokens to survive restarts.",
        response: "Adopted Redis for the session token cache.",
      },
    });
    await http(cairn.url, "POST", "/v1/memories", {
      token: bob.token,
      body: {
        session_id: "rest-search",
        prompt: "Size the session token cache.",
        thought: "Ten thousand sessions fit in 64 MB of cache; eviction by least recent use.",
        response: "Set the token cache to 64 MB.",
      },
    });
    const res = await http(cairn.url, "POST", "/v1/memories/query", {
      token: bob.token,
      body: { query: "which cache stores the session tokens", limit: 3, detail: "full" },
    });
    expect(res.status).toBe(200);
    expectContractOutput("query_raw_memories", res.body);
    expect(res.body.hits[0].memory.response).toBe("Adopted Redis for the session token cache.");
    expect(res.body.hits[0].matched_by).toEqual(["lexical", "semantic"]);
    expect(res.body.hits[0].score).toBeGreaterThan(res.body.hits.at(-1).score - 1e-9);

    const onlyBob = await http(cairn.url, "POST", "/v1/memories/query", {
      token: bob.token,
      body: { query: "which cache stores the session tokens", agent: "bob", session_id: "rest-search" },
    });
    expect(onlyBob.body.hits.length).toBeGreaterThan(0);
    expect(onlyBob.body.hits.every((h: { memory: { agent: string } }) => h.memory.agent === "bob")).toBe(true);

    const decisions = await http(cairn.url, "POST", "/v1/memories/query", {
      token: bob.token,
      body: { query: "which cache stores the session tokens", kind: "decision", session_id: "rest-search" },
    });
    expect(decisions.body.hits.map((h: { memory: { kind: string } }) => h.memory.kind)).toEqual(["decision"]);
  });

  it("filters by time: since excludes what came before, until what came after", async () => {
    const first = await http(cairn.url, "POST", "/v1/memories", { token: alice.token, body: turn("rest-time", 1) });
    await new Promise((r) => setTimeout(r, 20));
    const second = await http(cairn.url, "POST", "/v1/memories", { token: alice.token, body: turn("rest-time", 2) });
    const query = { query: "reasoning for the step", session_id: "rest-time" };
    const since = await http(cairn.url, "POST", "/v1/memories/query", {
      token: alice.token,
      body: { ...query, since: second.body.recorded_at },
    });
    expect(since.body.hits.map((h: { memory: { id: string } }) => h.memory.id)).toEqual([second.body.id]);
    const until = await http(cairn.url, "POST", "/v1/memories/query", {
      token: alice.token,
      body: { ...query, until: second.body.recorded_at },
    });
    expect(until.body.hits.map((h: { memory: { id: string } }) => h.memory.id)).toEqual([first.body.id]);
  });
});

describe("query_summaries over REST", () => {
  it("finds a session's summary by meaning and filters by agent", async () => {
    await cairn.runtime.services.writes.putSummary(workspace, {
      session_id: "rest-summary",
      agents: ["alice"],
      title: "Moved token refresh to a Redis stream",
      summary: "Token refresh now survives restarts of the auth service through a Redis stream.",
      decisions: [{ decision: "Use a Redis stream for refresh", evidence: "p95 38 ms on staging" }],
      open_questions: [],
      next_steps: ["Add a dead-letter queue"],
      turn_count: 4,
      first_turn_at: "2026-11-01T10:00:00.000Z",
      last_turn_at: "2026-11-01T11:00:00.000Z",
      method: "extractive",
      generated_at: new Date().toISOString(),
    });
    const res = await http(cairn.url, "POST", "/v1/summaries/query", {
      token: bob.token,
      body: { query: "token refresh redis stream" },
    });
    expect(res.status).toBe(200);
    expectContractOutput("query_summaries", res.body);
    expect(res.body.hits[0].summary).toMatchObject({ session_id: "rest-summary", agents: ["alice"], turn_count: 4 });

    const alices = await http(cairn.url, "POST", "/v1/summaries/query", {
      token: bob.token,
      body: { query: "token refresh redis stream", agent: "alice" },
    });
    expect(alices.body.hits).toHaveLength(1);
    const bobs = await http(cairn.url, "POST", "/v1/summaries/query", {
      token: bob.token,
      body: { query: "token refresh redis stream", agent: "bob" },
    });
    expect(bobs.body.hits).toEqual([]);
  });
});

describe("get_session over REST", () => {
  it("returns a session's turns from every agent, oldest first, paged without gaps", async () => {
    const ids: string[] = [];
    for (let n = 1; n <= 5; n++) {
      const res = await http(cairn.url, "POST", "/v1/memories", { token: n % 2 ? alice.token : bob.token, body: turn("rest-session", n) });
      ids.push(res.body.id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `/v1/sessions/rest-session?limit=2${cursor ? `&after=${cursor}` : ""}`;
      const page = await http(cairn.url, "GET", query, { token: bob.token });
      expect(page.status).toBe(200);
      expectContractOutput("get_session", page.body);
      seen.push(...page.body.turns.map((t: { id: string }) => t.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(ids);
  });

  it("answers 404 not_found for a session that does not exist, beside one that does", async () => {
    await http(cairn.url, "POST", "/v1/memories", { token: alice.token, body: turn("rest-exists", 1) });
    expect((await http(cairn.url, "GET", "/v1/sessions/rest-exists", { token: alice.token })).status).toBe(200);
    const missing = await http(cairn.url, "GET", "/v1/sessions/rest-missing", { token: alice.token });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe("not_found");
    expect(missing.headers.get("content-type")).toContain("application/problem+json");
  });
});

describe("get_memory over REST", () => {
  it("opens a memory by id, whole, and answers not_found for an id that names nothing", async () => {
    const long = "z".repeat(500);
    const written = await http(cairn.url, "POST", "/v1/memories", { token: alice.token, body: turn("rest-get", 1, { thought: long }) });
    const res = await http(cairn.url, "GET", `/v1/memories/${written.body.id}`, { token: bob.token });
    expect(res.status).toBe(200);
    expectContractOutput("get_memory", res.body);
    expect(res.body).toMatchObject({ id: written.body.id, agent: "alice", thought: long, truncated: false });
    const missing = await http(cairn.url, "GET", `/v1/memories/t_${"0".repeat(32)}`, { token: bob.token });
    expect([missing.status, missing.body.code]).toEqual([404, "not_found"]);
    const malformed = await http(cairn.url, "GET", "/v1/memories/not-an-id", { token: bob.token });
    expect([malformed.status, malformed.body.code]).toEqual([400, "validation_failed"]);
  });
});

describe("get_caller over REST", () => {
  it("names the token's workspace, agent and role, and answers 401 without a token", async () => {
    const res = await http(cairn.url, "GET", "/v1/caller", { token: bob.token });
    expect(res.status).toBe(200);
    expectContractOutput("get_caller", res.body);
    expect(res.body).toEqual({ workspace, agent: "bob", role: "agent" });
    const anonymous = await http(cairn.url, "GET", "/v1/caller");
    expect([anonymous.status, anonymous.body.code]).toEqual([401, "unauthorized"]);
  });
});

describe("service routes", () => {
  it("serves health, readiness, the contract, and metrics to admins only", async () => {
    expect((await http(cairn.url, "GET", "/healthz")).body).toEqual({ status: "ok" });
    const ready = await http(cairn.url, "GET", "/readyz");
    expect(ready.status).toBe(200);
    expect(ready.body.checks).toEqual({ chroma: "ok", embedder: "ok", stamps: "ok" });
    const spec = await http(cairn.url, "GET", "/openapi.json");
    expect(spec.body.openapi).toBe("3.1.0");
    expect(Object.keys(spec.body.paths)).toContain("/v1/memories");

    const admin = makeToken(workspace, "ops", "admin");
    const withAdmin = await startCairn([admin, alice]);
    try {
      await http(withAdmin.url, "POST", "/v1/memories", { token: alice.token, body: turn("rest-metrics", 1) });
      const metrics = await http(withAdmin.url, "GET", "/metrics", { token: admin.token });
      expect(metrics.status).toBe(200);
      expect(metrics.text).toMatch(/cairn_operations_total\{operation="add_memory",transport="rest",outcome="ok"\} 1/);
      // Chroma's share, request by request: the write's add of its turn is counted; nothing asked for a summary yet.
      const chromaCount = (request: string) =>
        Number(new RegExp(`cairn_chroma_request_duration_seconds_count\\{request="${request}"\\} (\\d+)`).exec(metrics.text)?.[1] ?? 0);
      expect(chromaCount("turns.add")).toBe(1);
      expect(chromaCount("ledger-slots.add")).toBeGreaterThanOrEqual(1);
      expect(chromaCount("summaries.add")).toBe(0);
      const asAgent = await http(withAdmin.url, "GET", "/metrics", { token: alice.token });
      expect(asAgent.status).toBe(403);
      expect(asAgent.body.code).toBe("forbidden");
      expect((await http(withAdmin.url, "GET", "/metrics")).status).toBe(401);
    } finally {
      await withAdmin.close();
    }
  });
});
