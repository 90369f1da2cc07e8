import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { codingTurn, SUBJECT_COUNT } from "./fixtures/coding-turns.js";
import { expectContractOutput } from "./support/contract-schemas.js";
import { http, makeToken, mcpClient, startCairn, uniqueWorkspace, type TestCairn } from "./support/harness.js";

/**
 * What an agent gets back per token (DESIGN budgets): the text a model reads from a tool result, on ordinary
 * coding turns of about 1.2 KB. Brief by default, whole on request; and the recovery runbook still finds the
 * next step from the brief form.
 */

const workspace = uniqueWorkspace("budget");
const dev = makeToken(workspace, "backend-dev");
let cairn: TestCairn;
let client: Client;
const TURNS = 30;

interface ToolResult {
  content: Array<{ type: string; text?: string }>;
  structuredContent: any;
  isError?: boolean;
}
const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as ToolResult;
/** The bytes of what the model reads: the text content of the result. */
const textBytes = (result: ToolResult) => Buffer.byteLength(result.content.map((c) => c.text ?? "").join(""));

beforeAll(async () => {
  cairn = await startCairn([dev]);
  for (let n = 0; n < TURNS; n++) {
    const res = await http(cairn.url, "POST", "/v1/memories", { token: dev.token, body: codingTurn(n) });
    expect(res.status).toBe(201);
  }
  client = await mcpClient(cairn.url, dev.token);
});
afterAll(async () => {
  await client?.close();
  await cairn?.close();
});

describe("answers within their budgets", () => {
  it("the turns are ordinary ones: about 1.2 KB each when asked for whole", async () => {
    const full = await call("query_recent_turns", { limit: 20, detail: "full" });
    const sizes = full.structuredContent.turns.map(
      (t: { prompt: string; thought: string; response: string }) => t.prompt.length + t.thought.length + t.response.length,
    );
    expect(Math.min(...sizes)).toBeGreaterThan(1000);
    expect(Math.max(...sizes)).toBeLessThan(1400);
    expect(textBytes(full)).toBeGreaterThan(20 * 1024);
  });

  it("20 recent turns cost at most 6 KB, and each still says its task and outcome", async () => {
    const recent = await call("query_recent_turns", { limit: 20 });
    expectContractOutput("query_recent_turns", recent.structuredContent);
    expect(recent.structuredContent.turns).toHaveLength(20);
    expect(textBytes(recent)).toBeLessThanOrEqual(6 * 1024);
    const newest = recent.structuredContent.turns[0];
    const last = codingTurn(TURNS - 1);
    expect(newest.session_id).toBe(last.session_id);
    expect(newest.text).toContain(last.prompt.slice(0, 20));
    expect(newest.text).toContain("Next:");
  });

  it("10 hits cost at most 5 KB, each with the part that matched and what to tell it by", async () => {
    const found = await call("query_raw_memories", { query: "PAY-77 checkout sessions Postgres TTL", limit: 10 });
    expectContractOutput("query_raw_memories", found.structuredContent);
    expect(found.structuredContent.hits).toHaveLength(10);
    expect(textBytes(found)).toBeLessThanOrEqual(5 * 1024);
    const best = found.structuredContent.hits[0];
    expect(best.memory.session_id).toBe("2026-11-29-pay-77");
    expect(best.memory.text).toMatch(/PAY-77|checkout|Postgres/);
    expect(best).toMatchObject({ confidence: expect.any(String), matched_by: expect.arrayContaining(["lexical"]) });
    expect(best.memory).not.toHaveProperty("thought");
    const whole = await call("query_raw_memories", { query: "PAY-77 checkout sessions Postgres TTL", limit: 10, detail: "full" });
    expect(whole.structuredContent.hits[0].memory.id).toBe(best.memory.id);
    expect(whole.structuredContent.hits[0].memory.thought).toContain("Postgres");
    expect(textBytes(whole)).toBeGreaterThan(textBytes(found));
  });

  it("flags what a reader must know: outdated, superseded, untrusted, checks", async () => {
    const written = await http(cairn.url, "POST", "/v1/memories", {
      token: dev.token,
      body: { ...codingTurn(TURNS), checks: [{ name: "unit", status: "failed", commit: "a1b2c3d" }] },
    });
    await http(cairn.url, "POST", `/v1/memories/${written.body.id}/outdated`, {
      token: dev.token,
      body: { reason: "the retry layer was rewritten" },
    });
    const recent = await call("query_recent_turns", { limit: 2 });
    expect(recent.structuredContent.turns[0]).toMatchObject({ id: written.body.id, flags: ["outdated", "checks_failed"] });
    expect(recent.structuredContent.turns[1]).not.toHaveProperty("flags");
  });
});

describe("recovery after compaction from brief answers", () => {
  it("follows the runbook's calls to the next step and the decision behind it", async () => {
    // 1. Newest turns first, brief: the session and what was being done.
    const recent = await call("query_recent_turns", { limit: 20 });
    const newest = recent.structuredContent.turns.find((t: { flags?: string[] }) => !t.flags);
    // Open the newest turn whole: its response holds the next step, its refs the anchors.
    const opened = await call("get_memory", { memory_id: newest.id });
    const turn = opened.structuredContent;
    expect(turn.response).toMatch(/Next: .+/);
    const nextStep = /Next: (.+)\./.exec(turn.response)![1]!;
    expect(nextStep.length).toBeGreaterThan(10);
    // 2. Anchors into query_raw_memories: the first decision on the same ticket, with why.
    const anchors = `${turn.refs.join(" ")} ${turn.prompt.split(":")[0]}`;
    const found = await call("query_raw_memories", { query: anchors, kind: "decision", limit: 5 });
    const decision = found.structuredContent.hits[0];
    expect(decision.memory.kind).toBe("decision");
    expect(decision.memory.session_id).toBe(newest.session_id);
    const why = await call("get_memory", { memory_id: decision.memory.id });
    expect(why.structuredContent.thought).toMatch(/Tried .+ dropped it.+Chose/);
    // Everything read stays far below the turns whole.
    const read = [recent, opened, found, why].reduce((n, r) => n + textBytes(r), 0);
    expect(read).toBeLessThan(12 * 1024);
    expect(SUBJECT_COUNT).toBeGreaterThan(1);
  });
});
