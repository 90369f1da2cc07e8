import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectContractOutput } from "./support/contract-schemas.js";
import { chromaClient, http, makeToken, mcpClient, startCairn, turn, uniqueWorkspace, type TestCairn } from "./support/harness.js";

/**
 * A record whose stored fields no reader can use (a time no date has, a count that is text, a packed `fields` that
 * is not JSON), as a tampered backup, an import or a hand edit leaves it, costs that one record and never the
 * workspace: every read answers, without it and with the others; get_memory names it; verify_store reports it;
 * repair_store quarantines it, leaving the others as they were. import_records refuses such a record, storing
 * nothing of its batch.
 *
 * The store is written by one memory-core, damaged directly in Chroma, and read by another started after, whose
 * indexes are built from what Chroma holds, as a restart after a restore builds them.
 */

const workspace = uniqueWorkspace("damaged");
const dev = makeToken(workspace, "dev");
const ana = makeToken(workspace, "ana");
const ops = makeToken(workspace, "ops", "admin");
const importWs = uniqueWorkspace("damaged-import");
const importOps = makeToken(importWs, "ops", "admin");
const importDev = makeToken(importWs, "dev");
const tokens = [dev, ana, ops, importOps, importDev];
const SESSION = "sess-damaged";

/** Beyond the last instant a Date holds (8.64e15 ms): `new Date(it).toISOString()` throws. */
const BEYOND_DATES = 8_640_000_000_000_001;

let cairn: TestCairn;
const good: string[] = [];
const bad: Record<"beyondDates" | "nanText" | "notJson", string> = { beyondDates: "", nanText: "", notJson: "" };
let anaTurn = "";
let goodSummaryId = "";
let badSummaryId = "";
let exportedTurns: any;

const get = (path: string, token = dev.token) => http(cairn.url, "GET", path, { token });
const post = (path: string, body: unknown, token = dev.token) => http(cairn.url, "POST", path, { token, body });

const summaryOf = (sessionId: string) => ({
  session_id: sessionId,
  agents: ["dev"],
  title: `Summary of ${sessionId}`,
  summary: `What happened in ${sessionId}: the cache decision.`,
  decisions: [],
  open_questions: [],
  next_steps: [],
  turn_count: 2,
  first_turn_at: new Date().toISOString(),
  last_turn_at: new Date().toISOString(),
  method: "extractive" as const,
  generated_at: new Date().toISOString(),
});

beforeAll(async () => {
  const earlier = await startCairn(tokens);
  try {
    const ids: string[] = [];
    for (let n = 1; n <= 6; n++) {
      const res = await http(earlier.url, "POST", "/v1/memories", {
        token: dev.token,
        body: turn(SESSION, n, { prompt: `Decide the cache layer, step ${n}`, tags: ["cache"] }),
      });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    const res = await http(earlier.url, "POST", "/v1/memories", {
      token: ana.token,
      body: turn("sess-ana", 1, { prompt: "Reviewed the cache layer decision" }),
    });
    expect(res.status).toBe(201);
    anaTurn = res.body.id;
    // Turns 2, 4 and 6 (the newest) are damaged below; 1, 3 and 5 stay whole.
    good.push(ids[0]!, ids[2]!, ids[4]!);
    bad.beyondDates = ids[5]!;
    bad.nanText = ids[3]!;
    bad.notJson = ids[1]!;
    goodSummaryId = (await earlier.runtime.services.writes.putSummary(workspace, summaryOf("sess-ana"))).id;
    badSummaryId = (await earlier.runtime.services.writes.putSummary(workspace, summaryOf(SESSION))).id;
    const exported = await http(earlier.url, "GET", "/v1/admin/records?collection=turns&limit=50", { token: ops.token });
    expect(exported.status).toBe(200);
    exportedTurns = exported.body;
  } finally {
    await earlier.close();
  }

  const chroma = chromaClient(workspace);
  const turns = await chroma.getCollection({ name: "turns", embeddingFunction: null } as never);
  await turns.update({
    ids: [bad.beyondDates, bad.nanText, bad.notJson],
    metadatas: [{ recorded_at: BEYOND_DATES }, { recorded_at: "NaN" }, { fields: "{not json" }],
  });
  const summaries = await chroma.getCollection({ name: "summaries", embeddingFunction: null } as never);
  await summaries.update({ ids: [badSummaryId], metadatas: [{ generated_at: BEYOND_DATES }] });

  cairn = await startCairn(tokens);
});
afterAll(() => cairn?.close());

describe("a workspace holding damaged records", () => {
  it("answers every read without a 5xx, with the sound records and without the damaged", async () => {
    const damagedIds = Object.values(bad);
    const answers = {
      query_recent_turns: await get("/v1/memories/recent?limit=20&detail=full"),
      query_raw_memories: await post("/v1/memories/query", { query: "cache layer step", limit: 20, detail: "full" }),
      get_session: await get(`/v1/sessions/${SESSION}?detail=full`),
      query_team_status: await get("/v1/team"),
      assess_change: await post("/v1/changes/assessment", { intent: "Decide the cache layer" }),
      query_summaries: await post("/v1/summaries/query", { query: "cache decision", limit: 5 }),
      get_memory: await get(`/v1/memories/${good[0]}`),
    };
    // Every one at once, so that a failure names each operation that failed.
    expect(Object.fromEntries(Object.entries(answers).map(([op, res]) => [op, res.status]))).toEqual(
      Object.fromEntries(Object.keys(answers).map((op) => [op, 200])),
    );

    const recent = answers.query_recent_turns;
    expectContractOutput("query_recent_turns", recent.body);
    expect(recent.body.turns.map((t: { id: string }) => t.id)).toEqual([...good].reverse());

    const brief = await get("/v1/memories/recent?limit=20");
    expect(brief.status).toBe(200);
    expect(brief.body.turns.map((t: { id: string }) => t.id)).toEqual([...good].reverse());

    const query = answers.query_raw_memories;
    expectContractOutput("query_raw_memories", query.body);
    const hits = query.body.hits.map((h: { memory: { id: string } }) => h.memory.id);
    expect(hits).toEqual(expect.arrayContaining([...good, anaTurn]));
    expect(hits.filter((id: string) => damagedIds.includes(id))).toEqual([]);

    const session = answers.get_session;
    expectContractOutput("get_session", session.body);
    expect(session.body.turns.map((t: { id: string }) => t.id)).toEqual(good);
    // Its summary is the damaged one: the session answers without it.
    expect(session.body.summary).toBeNull();
    const anaSession = await get("/v1/sessions/sess-ana");
    expect(anaSession.status).toBe(200);
    expect(anaSession.body.summary.id).toBe(goodSummaryId);

    const team = answers.query_team_status;
    expectContractOutput("query_team_status", team.body);
    const byAgent = new Map(team.body.agents.map((a: { agent: string; memory_id: string }) => [a.agent, a.memory_id]));
    // dev's newest turn is the one whose time no Date holds: its newest sound one stands for it.
    expect(byAgent.get("dev")).toBe(good[2]);
    expect(byAgent.get("ana")).toBe(anaTurn);

    const assessment = answers.assess_change;
    expectContractOutput("assess_change", assessment.body);
    const assessed = assessment.body.outcomes.flatMap((o: { changes: Array<{ memory_id: string }> }) => o.changes.map((c) => c.memory_id));
    expect(assessment.body.similar).toBeGreaterThan(0);
    expect(assessed.length).toBeGreaterThan(0);
    expect(assessed.filter((id: string) => damagedIds.includes(id))).toEqual([]);

    const summaries = answers.query_summaries;
    expect(summaries.body.hits.map((h: { summary: { id: string } }) => h.summary.id)).toEqual([goodSummaryId]);

    for (const id of good) {
      const memory = await get(`/v1/memories/${id}`);
      expect(memory.status).toBe(200);
      expectContractOutput("get_memory", memory.body);
    }
  });

  it("names a damaged memory in get_memory and its corrections, 409 record_damaged, over REST and MCP", async () => {
    for (const [id, field] of [
      [bad.beyondDates, "recorded_at"],
      [bad.nanText, "recorded_at"],
      [bad.notJson, "prompt_chars"],
    ] as const) {
      const res = await get(`/v1/memories/${id}`);
      expect(res.status).toBe(409);
      expect(res.body.code).toBe("record_damaged");
      expect(res.body.detail).toContain(id);
      expect(res.body.detail).toContain(field);
      expect(res.body.hint).toContain("repair_store");
    }
    const outdated = await post(`/v1/memories/${bad.beyondDates}/outdated`, { reason: "no longer holds" });
    expect(outdated.status).toBe(409);
    expect(outdated.body.code).toBe("record_damaged");
    // The same turn written again: a replay of a sound one, refused for a damaged one (not stored over it).
    const write = (n: number) => post("/v1/memories", turn(SESSION, n, { prompt: `Decide the cache layer, step ${n}`, tags: ["cache"] }));
    const replay = await write(1);
    expect(replay.status).toBe(200);
    expect(replay.body.id).toBe(good[0]);
    const again = await write(6);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: "record_damaged" });
    expect(again.body.detail).toContain(bad.beyondDates);

    // Forgetting takes a damaged memory as it is: it is gone, as any forgotten memory.
    const forgot = await post(`/v1/memories/${bad.notJson}/forget`, { reason: "stored damaged" });
    expect(forgot.status).toBe(200);
    expect((await get(`/v1/memories/${bad.notJson}`)).status).toBe(410);

    const client = await mcpClient(cairn.url, dev.token);
    try {
      const damaged = await client.callTool({ name: "get_memory", arguments: { memory_id: bad.nanText } });
      expect(damaged.isError).toBe(true);
      expect(JSON.stringify(damaged.content)).toContain("record_damaged");
      const sound = await client.callTool({ name: "get_memory", arguments: { memory_id: good[0] } });
      expect(sound.isError).toBeFalsy();
      const recent = await client.callTool({ name: "query_recent_turns", arguments: { limit: 20 } });
      expect(recent.isError).toBeFalsy();
      expect((recent.structuredContent as { turns: Array<{ id: string }> }).turns.map((t) => t.id)).toEqual([...good].reverse());
    } finally {
      await client.close();
    }
  });

  it("is reported by verify_store and quarantined by repair_store; the sound records stay as they were", async () => {
    const before = new Map<string, unknown>();
    for (const id of [...good, anaTurn]) before.set(id, (await get(`/v1/memories/${id}`)).body);

    const report = await get("/v1/admin/verify", ops.token);
    expect(report.status).toBe(200);
    expectContractOutput("verify_store", report.body);
    expect(report.body.healthy).toBe(false);
    // Only the damage: the damaged records' slots and feed entries name records that are there.
    expect(report.body.problem_counts).toEqual({ damaged_record: 3 });
    const found = report.body.problems.map((p: { collection: string; id: string; detail: string }) => [p.collection, p.id]);
    expect(found).toEqual(
      expect.arrayContaining([
        ["turns", bad.beyondDates],
        ["turns", bad.nanText],
        ["summaries", badSummaryId],
      ]),
    );
    const beyond = report.body.problems.find((p: { id: string }) => p.id === bad.beyondDates);
    expect(beyond.detail).toContain(`recorded_at is ${BEYOND_DATES}`);

    const dry = await post("/v1/admin/repair", { apply: false }, ops.token);
    expect(dry.status).toBe(200);
    expectContractOutput("repair_store", dry.body);
    expect(dry.body).toMatchObject({ applied: false, records_quarantined: 3, memories: 2 });
    // A dry run moved nothing.
    expect((await get(`/v1/memories/${bad.beyondDates}`)).body.code).toBe("record_damaged");

    const applied = await post("/v1/admin/repair", { apply: true }, ops.token);
    expect(applied.status).toBe(200);
    expect(applied.body).toMatchObject({ applied: true, records_quarantined: 3, memories: 2 });

    const after = await get("/v1/admin/verify", ops.token);
    expect(after.body).toMatchObject({ healthy: true, problem_counts: {} });
    const again = await post("/v1/admin/repair", { apply: true }, ops.token);
    expect(again.body).toMatchObject({ records_quarantined: 0, memories: 0 });

    for (const id of [...good, anaTurn]) expect((await get(`/v1/memories/${id}`)).body).toEqual(before.get(id));
    // A quarantined memory still says what became of it.
    const quarantined = await get(`/v1/memories/${bad.nanText}`);
    expect(quarantined.status).toBe(409);
    expect(quarantined.body).toMatchObject({ code: "record_damaged" });
    expect(quarantined.body.detail).toContain("quarantine");
    // Kept whole, in the ledger.
    const kept = await cairn.runtime.store.collection(workspace, "recency");
    const [entry] = await kept.get({ ids: [`quarantine:${bad.beyondDates}`] });
    expect(JSON.parse(String(entry!.metadata.stored_metadata)).recorded_at).toBe(BEYOND_DATES);
    expect(entry!.metadata.record_text).toContain("Decide the cache layer, step 6");

    const recent = await get("/v1/memories/recent?limit=20");
    expect(recent.body.turns.map((t: { id: string }) => t.id)).toEqual([...good].reverse());
    const audit = await get(`/v1/audit?memory_id=${bad.nanText}`, ops.token);
    expect(audit.status).toBe(200);
    expect(audit.body.entries.map((e: { action: string }) => e.action)).toEqual(["add", "repair"]);
  });
});

describe("import_records", () => {
  it("refuses a batch holding a record with an unusable field, naming record and field, and stores nothing of it", async () => {
    const records = exportedTurns.records.slice(0, 3).map((r: any) => ({ ...r, metadata: { ...r.metadata } }));
    expect(records.length).toBe(3);
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ["recorded_at", { recorded_at: BEYOND_DATES }, "not a time"],
      ["valid_from", { valid_from: -1e16 }, "not a time"],
      ["occurred_at", { occurred_at: 1.5 }, "not a time"],
      ["prompt_chars", { prompt_chars: -3 }, "not a count"],
      ["tags", { tags: "{not json" }, "not JSON"],
      ["agent", { agent: "" }, "non-empty string"],
      // Read with a default, but a turn stored without it would match no search: an import must hold it.
      ["valid_until", { valid_until: undefined }, "is missing"],
    ];
    for (const [field, change, says] of cases) {
      const body = {
        collection: "turns",
        stamp: exportedTurns.stamp,
        records: records.map((r: any, i: number) => (i === 1 ? { ...r, metadata: { ...r.metadata, ...change } } : r)),
      };
      const res = await http(cairn.url, "POST", "/v1/admin/records", { token: importOps.token, body });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("validation_failed");
      expect(res.body.errors).toEqual([{ path: `records/1/metadata/${field}`, message: expect.stringContaining(records[1].id) }]);
      expect(res.body.errors[0].message).toContain(says);
      expect(res.body.hint).toContain("Nothing of this batch was stored");
    }
    // Nothing of the refused batches was stored; the same records whole are.
    const empty = await http(cairn.url, "GET", "/v1/memories/recent?agent=dev", { token: importDev.token });
    expect(empty.body.turns).toEqual([]);
    const whole = await http(cairn.url, "POST", "/v1/admin/records", {
      token: importOps.token,
      body: { collection: "turns", stamp: exportedTurns.stamp, records },
    });
    expect(whole.status).toBe(200);
    expect(whole.body.stored).toBe(3);
    const stored = await http(cairn.url, "GET", "/v1/memories/recent?agent=dev", { token: importDev.token });
    expect(stored.body.turns.map((t: { id: string }) => t.id).sort()).toEqual(records.map((r: any) => r.id).sort());

    const summary = await http(cairn.url, "POST", "/v1/admin/records", {
      token: importOps.token,
      body: {
        collection: "summaries",
        records: [
          {
            id: `s_${"0".repeat(32)}`,
            document: "d",
            metadata: { session_id: "x", first_turn_at: 1, last_turn_at: 1, generated_at: "soon" },
          },
        ],
      },
    });
    expect(summary.status).toBe(400);
    expect(summary.body.errors[0].path).toBe("records/0/metadata/generated_at");
  });
});
