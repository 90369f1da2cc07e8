import { describe, expect, it } from "vitest";
import { expectContractOutput } from "./support/contract-schemas.js";
import { http, makeToken, mcpClient, turn, uniqueWorkspace, useCairn } from "./support/harness.js";

const workspace = uniqueWorkspace("status");
const alice = makeToken(workspace, "alice");
const ops = makeToken(workspace, "ops", "admin");
const cairn = useCairn([alice, ops]);

describe("get_store_status over REST", () => {
  it("counts the workspace's records and shows the last verify_store: none, then who ran it, when and what it found", async () => {
    for (let n = 1; n <= 3; n++) await http(cairn.url, "POST", "/v1/memories", { token: alice.token, body: turn("status", n) });
    const before = await http(cairn.url, "GET", "/v1/admin/status", { token: ops.token });
    expect(before.status).toBe(200);
    expectContractOutput("get_store_status", before.body);
    expect(before.body).toEqual({ workspace, turns: 3, summaries: 0, last_verify: null });

    const started = Date.now();
    const report = await http(cairn.url, "GET", "/v1/admin/verify", { token: ops.token });
    expect(report.body.healthy).toBe(true);
    const after = await http(cairn.url, "GET", "/v1/admin/status", { token: ops.token });
    expectContractOutput("get_store_status", after.body);
    expect(after.body.last_verify).toMatchObject({ by: "ops", healthy: true, problem_counts: report.body.problem_counts });
    expect(Date.parse(after.body.last_verify.at)).toBeGreaterThanOrEqual(started - 1000);
    // Keeping the last check changes nothing a check reports: the next one counts the same, and is as healthy.
    const again = await http(cairn.url, "GET", "/v1/admin/verify", { token: ops.token });
    expect(again.body.healthy).toBe(true);
    expect(again.body.collections).toEqual(report.body.collections);

    const byAgent = await http(cairn.url, "GET", "/v1/admin/status", { token: alice.token });
    expect([byAgent.status, byAgent.body.code]).toEqual([403, "forbidden"]);
  });
});

describe("get_store_status over MCP", () => {
  it("answers the counts and the last check as a tool, for an admin", async () => {
    const client = await mcpClient(cairn.url, ops.token);
    try {
      await client.callTool({ name: "verify_store", arguments: {} });
      const result = (await client.callTool({ name: "get_store_status", arguments: {} })) as { structuredContent?: any };
      expectContractOutput("get_store_status", result.structuredContent);
      expect(result.structuredContent.workspace).toBe(workspace);
      expect(result.structuredContent.last_verify).toMatchObject({ by: "ops" });
    } finally {
      await client.close();
    }
  });
});
