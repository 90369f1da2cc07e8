import { describe, expect, it } from "vitest";
import { expectContractOutput } from "./support/contract-schemas.js";
import { http, makeToken, mcpClient, turn, uniqueWorkspace, useCairn } from "./support/harness.js";

const workspace = uniqueWorkspace("review");
const alice = makeToken(workspace, "alice");
const ops = makeToken(workspace, "ops", "admin");
const cairn = useCairn([alice, ops]);

async function write(body: object): Promise<string> {
  const res = await http(cairn.url, "POST", "/v1/memories", { token: alice.token, body });
  if (res.status !== 201) throw new Error(`add_memory answered ${res.status}: ${res.text}`);
  return res.body.id;
}
const imported = (n: number) => turn("review-import", n, { source: "import", prompt: `Imported commit ${n}: move sessions to Redis ${n}` });
const review = (id: string, body: object, token = ops.token) => http(cairn.url, "POST", `/v1/memories/${id}/review`, { token, body });
const audit = async (id: string) =>
  (await http(cairn.url, "GET", `/v1/audit?memory_id=${id}`, { token: ops.token })).body.entries as Array<{ action: string }>;

describe("review_memory over REST", () => {
  it("starts imported memories pending, records an admin's verdict with who, when and why, once, and lets queries filter on it", async () => {
    const [first, second, own] = [await write(imported(1)), await write(imported(2)), await write(turn("review-own", 1))];
    const pending = await http(cairn.url, "GET", `/v1/memories/${first}`, { token: alice.token });
    expect(pending.body.review).toEqual({ state: "pending" });
    // An agent's own memory needs no review: none is shown, and reviewing it is refused.
    expect((await http(cairn.url, "GET", `/v1/memories/${own}`, { token: alice.token })).body.review).toBeUndefined();
    const refused = await review(own, { decision: "approve", reason: "fine" });
    expect([refused.status, refused.body.code]).toEqual([409, "not_reviewable"]);
    // Admins only.
    const byAgent = await review(first, { decision: "approve", reason: "looks right" }, alice.token);
    expect([byAgent.status, byAgent.body.code]).toEqual([403, "forbidden"]);

    const approved = await review(first, { decision: "approve", reason: "matches the repository" });
    expect(approved.status).toBe(200);
    expectContractOutput("review_memory", approved.body);
    expect(approved.body.review).toMatchObject({ state: "approved", by: "ops", reason: "matches the repository" });
    expect(Date.parse(approved.body.review.at)).toBeGreaterThan(0);
    // The same verdict again changes nothing and logs nothing more.
    expect((await review(first, { decision: "approve", reason: "matches the repository" })).body.review).toEqual(approved.body.review);
    expect((await audit(first)).map((e) => e.action)).toEqual(["add", "approve"]);

    await review(second, { decision: "reject", reason: "the commit was reverted" });
    const query = (state: string) =>
      http(cairn.url, "POST", "/v1/memories/query", {
        token: alice.token,
        body: { query: "Imported commit move sessions Redis", review_state: state },
      });
    const ids = async (state: string) => (await query(state)).body.hits.map((h: { memory: { id: string } }) => h.memory.id);
    expect(await ids("approved")).toEqual([first]);
    expect(await ids("rejected")).toEqual([second]);
    expect(await ids("pending")).toEqual([]);
    const rejectedHit = (await query("rejected")).body.hits[0].memory;
    expect(rejectedHit.flags).toEqual(expect.arrayContaining(["untrusted", "rejected"]));
    expect(rejectedHit.flags).not.toContain("pending_review");
  });
});

describe("query_review_queue over REST", () => {
  it("lists what waits for review, oldest first, a page at a time, and drops what was reviewed", async () => {
    const ids = [await write(imported(11)), await write(imported(12)), await write(imported(13))];
    const first = await http(cairn.url, "GET", "/v1/review?limit=2", { token: ops.token });
    expect(first.status).toBe(200);
    expectContractOutput("query_review_queue", first.body);
    const listed = first.body.memories.map((m: { id: string }) => m.id);
    expect(listed).toEqual([ids[0], ids[1]]);
    expect(first.body.memories[0].flags).toContain("pending_review");
    const rest = await http(cairn.url, "GET", `/v1/review?limit=2&after=${first.body.next_cursor}`, { token: ops.token });
    expect(rest.body.memories.map((m: { id: string }) => m.id)).toEqual([ids[2]]);
    expect(rest.body.next_cursor).toBeNull();

    await review(ids[0]!, { decision: "reject", reason: "not ours" });
    const after = (await http(cairn.url, "GET", "/v1/review?limit=10", { token: ops.token })).body.memories.map(
      (m: { id: string }) => m.id,
    );
    expect(after).toEqual([ids[1], ids[2]]);
    const byAgent = await http(cairn.url, "GET", "/v1/review", { token: alice.token });
    expect([byAgent.status, byAgent.body.code]).toEqual([403, "forbidden"]);
  });
});

describe("review_memory over MCP", () => {
  it("approves a pending memory as a tool, for an admin", async () => {
    const id = await write(imported(21));
    const client = await mcpClient(cairn.url, ops.token);
    try {
      const result = (await client.callTool({
        name: "review_memory",
        arguments: { memory_id: id, decision: "approve", reason: "checked" },
      })) as {
        structuredContent?: any;
      };
      expectContractOutput("review_memory", result.structuredContent);
      expect(result.structuredContent.review).toMatchObject({ state: "approved", by: "ops" });
    } finally {
      await client.close();
    }
  });
});

describe("query_review_queue over MCP", () => {
  it("lists pending memories as a tool, for an admin", async () => {
    const id = await write(imported(31));
    const client = await mcpClient(cairn.url, ops.token);
    try {
      const result = (await client.callTool({ name: "query_review_queue", arguments: { limit: 100 } })) as { structuredContent?: any };
      expectContractOutput("query_review_queue", result.structuredContent);
      expect(result.structuredContent.memories.map((m: { id: string }) => m.id)).toContain(id);
    } finally {
      await client.close();
    }
  });
});
