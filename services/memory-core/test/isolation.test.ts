import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { http, makeToken, mcpClient, startCairn, turn, uniqueWorkspace, type TestCairn } from "./support/harness.js";

const first = uniqueWorkspace("iso-a");
const second = uniqueWorkspace("iso-b");
// The same agent name in both workspaces: the workspace, not the name, is the boundary.
const inFirst = makeToken(first, "dev");
const inSecond = makeToken(second, "dev");
let cairn: TestCairn;
const secret = {
  session_id: "shared-session-name",
  prompt: "Rotate the payment gateway credentials for ticket PAY-991.",
  thought: "The old key leaked into a CI log; revoked it and issued a new one.",
  response: "Credentials rotated; next, scrub the CI log.",
};
const visible = {
  session_id: "shared-session-name",
  prompt: "Tune the payment gateway retry policy for ticket PAY-992.",
  thought: "Exponential backoff with jitter; capped at five attempts.",
  response: "Retry policy merged.",
};

beforeAll(async () => {
  cairn = await startCairn([inFirst, inSecond]);
  expect((await http(cairn.url, "POST", "/v1/memories", { token: inFirst.token, body: secret })).status).toBe(201);
  expect((await http(cairn.url, "POST", "/v1/memories", { token: inSecond.token, body: visible })).status).toBe(201);
});
afterAll(() => cairn.close());

describe("workspace isolation", () => {
  it("recent turns: each workspace sees its own turn and not the other's", async () => {
    const a = await http(cairn.url, "GET", "/v1/memories/recent?detail=full", { token: inFirst.token });
    const b = await http(cairn.url, "GET", "/v1/memories/recent?detail=full", { token: inSecond.token });
    expect(a.body.turns.map((t: { prompt: string }) => t.prompt)).toEqual([secret.prompt]);
    expect(b.body.turns.map((t: { prompt: string }) => t.prompt)).toEqual([visible.prompt]);
  });

  it("search: a query for the other workspace's words finds only one's own", async () => {
    const a = await http(cairn.url, "POST", "/v1/memories/query", {
      token: inSecond.token,
      body: { query: "payment gateway credentials leaked", detail: "full" },
    });
    expect(a.body.hits.map((h: { memory: { prompt: string } }) => h.memory.prompt)).toEqual([visible.prompt]);
    const b = await http(cairn.url, "POST", "/v1/memories/query", {
      token: inFirst.token,
      body: { query: "payment gateway credentials leaked", detail: "full" },
    });
    expect(b.body.hits.map((h: { memory: { prompt: string } }) => h.memory.prompt)).toEqual([secret.prompt]);
  });

  it("sessions: the same session name holds different turns in each workspace", async () => {
    const a = await http(cairn.url, "GET", "/v1/sessions/shared-session-name?detail=full", { token: inFirst.token });
    const b = await http(cairn.url, "GET", "/v1/sessions/shared-session-name?detail=full", { token: inSecond.token });
    expect(a.body.turns.map((t: { prompt: string }) => t.prompt)).toEqual([secret.prompt]);
    expect(b.body.turns.map((t: { prompt: string }) => t.prompt)).toEqual([visible.prompt]);
  });

  it("scope comes from the token: a request cannot name another workspace", async () => {
    const smuggled = await http(cairn.url, "POST", "/v1/memories", {
      token: inSecond.token,
      body: { ...turn("smuggle", 1), workspace: first },
    });
    expect(smuggled.status).toBe(400);
    expect(smuggled.body.errors).toEqual([{ path: "workspace", message: "is not a field of this operation" }]);
    const asAgent = await http(cairn.url, "POST", "/v1/memories", { token: inSecond.token, body: { ...turn("smuggle", 1), agent: "ceo" } });
    expect(asAgent.status).toBe(400);
    const plain = await http(cairn.url, "POST", "/v1/memories", { token: inSecond.token, body: turn("smuggle", 1) });
    expect(plain.status).toBe(201);
    expect(plain.body.agent).toBe("dev");
    const firstView = await http(cairn.url, "GET", "/v1/memories/recent?session_id=smuggle", { token: inFirst.token });
    expect(firstView.body.turns).toEqual([]);
    const secondView = await http(cairn.url, "GET", "/v1/memories/recent?session_id=smuggle", { token: inSecond.token });
    expect(secondView.body.turns).toHaveLength(1);
  });

  it("over MCP too: each token's tools see its own workspace only", async () => {
    const a = await mcpClient(cairn.url, inFirst.token);
    const b = await mcpClient(cairn.url, inSecond.token);
    try {
      const ra = (await a.callTool({ name: "query_raw_memories", arguments: { query: "payment gateway", detail: "full" } })) as {
        structuredContent: any;
      };
      const rb = (await b.callTool({ name: "query_raw_memories", arguments: { query: "payment gateway", detail: "full" } })) as {
        structuredContent: any;
      };
      const prompts = (r: { structuredContent: any }) =>
        r.structuredContent.hits.map((h: { memory: { prompt: string } }) => h.memory.prompt);
      expect(prompts(ra)).toContain(secret.prompt);
      expect(prompts(ra)).not.toContain(visible.prompt);
      expect(prompts(rb)).toContain(visible.prompt);
      expect(prompts(rb)).not.toContain(secret.prompt);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
