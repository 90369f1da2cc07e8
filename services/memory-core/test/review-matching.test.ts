import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectContractOutput } from "./support/contract-schemas.js";
import { http, makeToken, mcpClient, startCairn, turn, uniqueWorkspace, type TestCairn } from "./support/harness.js";

/**
 * Review at the scale of an import: the queue's counts and filters, and review_matching, a bounded share per call
 * (three here, set through the server's configuration as CAIRN_REVIEW_PER_CALL sets it).
 */
const PER_CALL = 3;

interface Brief {
  id: string;
  agent: string;
  session_id: string;
  recorded_at: string;
}

describe("review at scale over REST and MCP", () => {
  const workspace = uniqueWorkspace("review-bulk");
  const alice = makeToken(workspace, "alice");
  const gitImport = makeToken(workspace, "git-import", "importer");
  const ops = makeToken(workspace, "ops", "admin");
  let cairn: TestCairn;
  beforeAll(async () => {
    cairn = await startCairn([alice, gitImport, ops], { reviewPerCall: PER_CALL });
  });
  afterAll(() => cairn?.close());

  const importBatch = async (session: string, from: number, count: number): Promise<string[]> => {
    const memories = Array.from({ length: count }, (_, i) =>
      turn(session, from + i, { prompt: `Imported commit ${from + i} of ${session}` }),
    );
    const res = await http(cairn.url, "POST", "/v1/memories/batch", { token: gitImport.token, body: { memories } });
    if (res.status !== 200) throw new Error(`add_memories answered ${res.status}: ${res.text}`);
    return res.body.results.map((r: { id: string }) => r.id);
  };
  const write = async (token: string, body: object): Promise<string> => {
    const res = await http(cairn.url, "POST", "/v1/memories", { token, body });
    if (res.status !== 201) throw new Error(`add_memory answered ${res.status}: ${res.text}`);
    return res.body.id;
  };
  const queue = async (query = "") => {
    const res = await http(cairn.url, "GET", `/v1/review?limit=100${query}`, { token: ops.token });
    expect(res.status, res.text).toBe(200);
    expectContractOutput("query_review_queue", res.body);
    return res.body as { memories: Brief[]; total: number; pending: number; next_cursor: string | null };
  };
  const bulk = (body: object, token = ops.token) => http(cairn.url, "POST", "/v1/review/matching", { token, body });
  const auditOf = async (id: string) =>
    (await http(cairn.url, "GET", `/v1/audit?memory_id=${id}`, { token: ops.token })).body.entries as Array<{
      action: string;
      reason?: string;
      agent?: string;
    }>;
  const reviewOf = async (id: string) => (await http(cairn.url, "GET", `/v1/memories/${id}`, { token: ops.token })).body.review;

  let gitA: string[] = [];
  let gitB: string[] = [];
  let aliceImported = "";
  let aliceOwn = "";

  describe("review_matching over REST", () => {
    it("counts every pending memory, not only the page, and filters by source, agent, session and when it was stored", async () => {
      gitA = await importBatch("git-a", 1, 7);
      gitB = await importBatch("git-b", 1, 2);
      // Instants are answered to the second: alice's memories are stored in a later second than the imports.
      const importedIn = new Date().toISOString().slice(0, 19);
      while (new Date().toISOString().slice(0, 19) === importedIn) await new Promise((r) => setTimeout(r, 20));
      aliceImported = await write(alice.token, turn("alice-s", 1, { source: "import", prompt: "A transcript alice imported" }));
      aliceOwn = await write(alice.token, turn("alice-s", 2, { prompt: "Alice's own work needs no review" }));

      const all = await queue();
      expect(all.total).toBe(10);
      expect(all.pending).toBe(10);
      // Oldest stored first; a batch's memories share their instant and go by id.
      const byId = (ids: string[]) => [...ids].sort();
      expect(all.memories.map((m) => m.id)).toEqual([...byId(gitA), ...byId(gitB), aliceImported]);
      gitA = byId(gitA);
      gitB = byId(gitB);
      expect(all.memories.map((m) => m.id)).not.toContain(aliceOwn);

      // A page of two still counts all ten, and pages on in order with the same filters.
      const first = await http(cairn.url, "GET", "/v1/review?limit=2&agent=git-import", { token: ops.token });
      expect([first.body.total, first.body.pending, first.body.memories.length]).toEqual([9, 10, 2]);
      const second = await http(cairn.url, "GET", `/v1/review?limit=2&agent=git-import&after=${first.body.next_cursor}`, {
        token: ops.token,
      });
      expect(second.body.memories.map((m: Brief) => m.id)).toEqual(gitA.slice(2, 4));
      expect(second.body.total).toBe(9);
      // The cursor is bound to its filters: under others it is refused.
      const mixed = await http(cairn.url, "GET", `/v1/review?limit=2&agent=alice&after=${first.body.next_cursor}`, { token: ops.token });
      expect([mixed.status, mixed.body.code]).toEqual([400, "invalid_cursor"]);

      const bySession = await queue("&session_id=git-b");
      expect([bySession.total, bySession.memories.map((m) => m.id)]).toEqual([2, gitB]);
      const byAgent = await queue("&agent=alice");
      expect([byAgent.total, byAgent.memories.map((m) => m.id)]).toEqual([1, [aliceImported]]);
      const bySource = await queue("&source=import");
      expect(bySource.total).toBe(10);
      const byOtherSource = await queue("&source=agent");
      expect([byOtherSource.total, byOtherSource.memories, byOtherSource.pending]).toEqual([0, [], 10]);

      // since/until on recorded_at: from alice's memory's second on, and before it.
      const since = all.memories.find((m) => m.id === aliceImported)!.recorded_at;
      const later = await queue(`&since=${encodeURIComponent(since)}`);
      const earlier = await queue(`&until=${encodeURIComponent(since)}`);
      expect([later.total, later.memories.map((m) => m.id)]).toEqual([1, [aliceImported]]);
      expect([earlier.total, earlier.memories.map((m) => m.id)]).toEqual([9, [...gitA, ...gitB]]);
      const between = await queue(`&since=${encodeURIComponent(since)}&until=${encodeURIComponent(since)}`);
      expect(between.total).toBe(0);

      // detail: summary shows what will be trusted: every field of the memory.
      const detailed = await queue("&session_id=git-b&detail=summary");
      expect(detailed.memories[0]).toMatchObject({ id: gitB[0], prompt: "Imported commit 1 of git-b" });
      expect(typeof (detailed.memories[0] as unknown as { thought: string }).thought).toBe("string");
      expect((all.memories[0] as unknown as { thought?: string }).thought).toBeUndefined();
    });

    it("refuses bad filters and an agent token with stable codes, and changes nothing", async () => {
      const bad = await http(cairn.url, "GET", "/v1/review?source=robot", { token: ops.token });
      expect([bad.status, bad.body.code]).toEqual([400, "validation_failed"]);
      const badTime = await bulk({ decision: "approve", reason: "ok", since: "yesterday" });
      expect([badTime.status, badTime.body.code]).toEqual([400, "validation_failed"]);
      const noReason = await bulk({ decision: "approve", reason: " " });
      expect([noReason.status, noReason.body.code]).toEqual([400, "validation_failed"]);
      const asAgent = await bulk({ decision: "approve", reason: "mine now" }, alice.token);
      expect([asAgent.status, asAgent.body.code]).toEqual([403, "forbidden"]);
      const asImporter = await bulk({ decision: "approve", reason: "mine now" }, gitImport.token);
      expect([asImporter.status, asImporter.body.code]).toEqual([403, "forbidden"]);
      expect((await queue()).total).toBe(10);
      // The same filters from an admin are taken.
      expect((await bulk({ decision: "approve", reason: "ok", dry_run: true })).status).toBe(200);
    });

    it("a dry run counts what matches and changes nothing", async () => {
      const dry = await bulk({ decision: "reject", reason: "reverted history", session_id: "git-a", dry_run: true });
      expect(dry.status).toBe(200);
      expectContractOutput("review_matching", dry.body);
      expect(dry.body).toEqual({ decision: "reject", dry_run: true, matched: 7, reviewed: 0, remaining: 7, per_call: PER_CALL, ids: [] });
      expect((await queue("&session_id=git-a")).total).toBe(7);
      expect(await reviewOf(gitA[0]!)).toEqual({ state: "pending" });
      expect((await auditOf(gitA[0]!)).map((e) => e.action)).toEqual(["add"]);
    });

    it("approves exactly what the filter selects, a bounded share per call, resumed until none is left, each audited with the reason", async () => {
      const body = { decision: "approve", reason: "matches the repository history", session_id: "git-a" };
      const calls: Array<{ matched: number; reviewed: number; remaining: number; ids: string[] }> = [];
      for (let i = 0; i < 10; i++) {
        const res = await bulk(body);
        expect(res.status, res.text).toBe(200);
        expectContractOutput("review_matching", res.body);
        calls.push(res.body);
        if (res.body.remaining === 0) break;
      }
      expect(calls.map((c) => [c.matched, c.reviewed, c.remaining])).toEqual([
        [7, 3, 4],
        [4, 3, 1],
        [1, 1, 0],
      ]);
      expect(calls.flatMap((c) => c.ids)).toEqual(gitA);

      for (const id of gitA) {
        expect(await reviewOf(id)).toMatchObject({ state: "approved", by: "ops", reason: "matches the repository history" });
        const entries = await auditOf(id);
        expect(entries.map((e) => [e.action, e.reason])).toEqual([
          ["add", undefined],
          ["approve", "matches the repository history"],
        ]);
      }
      // The others stay pending, and the queue says so.
      const left = await queue();
      expect([left.total, left.pending, left.memories.map((m) => m.id)]).toEqual([3, 3, [...gitB, aliceImported]]);
      for (const id of [...gitB, aliceImported]) expect(await reviewOf(id)).toEqual({ state: "pending" });

      // Run again after it completed: nothing changes, and it says so.
      const again = await bulk(body);
      expect(again.body).toMatchObject({ matched: 0, reviewed: 0, remaining: 0, ids: [] });
      expect((await auditOf(gitA[0]!)).length).toBe(2);
      expect((await queue()).total).toBe(3);
    });
  });

  describe("review_matching over MCP", () => {
    it("rejects over MCP, as a tool of an admin's and not of an agent's", async () => {
      const admin = await mcpClient(cairn.url, ops.token);
      const agent = await mcpClient(cairn.url, alice.token);
      try {
        const adminTools = (await admin.listTools()).tools.map((t) => t.name);
        const agentTools = (await agent.listTools()).tools.map((t) => t.name);
        expect(adminTools).toEqual(expect.arrayContaining(["review_matching", "query_review_queue"]));
        expect(agentTools).not.toContain("review_matching");
        expect(agentTools).toContain("add_memory");

        const refused = (await agent.callTool({ name: "review_matching", arguments: { decision: "approve", reason: "x" } })) as {
          isError?: boolean;
          structuredContent?: { code?: string };
          content: Array<{ text: string }>;
        };
        expect(refused.isError).toBe(true);
        expect(JSON.parse(refused.content[0]!.text)).toMatchObject({ code: "forbidden", status: 403 });

        const result = (await admin.callTool({
          name: "review_matching",
          arguments: { decision: "reject", reason: "a test session, not real work", agent: "git-import" },
        })) as { structuredContent?: any };
        expectContractOutput("review_matching", result.structuredContent);
        expect(result.structuredContent).toMatchObject({ matched: 2, reviewed: 2, remaining: 0, ids: gitB });
        for (const id of gitB) expect(await reviewOf(id)).toMatchObject({ state: "rejected", reason: "a test session, not real work" });
        expect(await reviewOf(aliceImported)).toEqual({ state: "pending" });

        const listed = (await admin.callTool({ name: "query_review_queue", arguments: { limit: 5 } })) as { structuredContent?: any };
        expectContractOutput("query_review_queue", listed.structuredContent);
        expect(listed.structuredContent).toMatchObject({ total: 1, pending: 1 });
        expect(listed.structuredContent.memories.map((m: Brief) => m.id)).toEqual([aliceImported]);
      } finally {
        await admin.close();
        await agent.close();
      }
    });
  });
});
