import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, silentLogger, startStack } from "@cairn/memory-core";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import yaml from "js-yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOpenAIStub, type OpenAIStub } from "../../../testing/openai-stub.js";
import { loadSummarizerConfig } from "../src/config.js";
import { createSummarizer, summarizerFactory } from "../src/index.js";
import {
  addTurns,
  chatEnv,
  chromaUrl,
  expectContractOutput,
  http,
  makeToken,
  mcpClient,
  sharedEmbedder,
  startCairn,
  storedSummary,
  turn,
  uniqueWorkspace,
} from "./support.js";

const workspace = uniqueWorkspace("summ-op");
const alice = makeToken(workspace, "alice");
const admin = makeToken(workspace, "root", "admin");
let stub: OpenAIStub;
let cairn: Awaited<ReturnType<typeof startCairn>>;
let bare: Awaited<ReturnType<typeof startCairn>>;

type ToolResult = { isError?: boolean; structuredContent?: any; content: Array<{ type: string; text?: string }> };
const call = async (c: Client, name: string, args: Record<string, unknown>) => (await c.callTool({ name, arguments: args })) as ToolResult;
const errorOf = (result: ToolResult) => JSON.parse(result.content[0]!.text!) as { code: string; hint?: string; detail: string };

beforeAll(async () => {
  stub = await startOpenAIStub({ dimension: 8 });
  stub.chat.set({ kind: "structured" });
  // The background loop stays off and the idle time long: only summarize_session writes summaries here.
  const config = loadSummarizerConfig({ ...chatEnv(stub.baseUrl), CAIRN_SUMMARY_WORKER: "off" });
  cairn = await startCairn([alice, admin], { summarizer: ({ memory, log }) => Promise.resolve(createSummarizer(config, memory, log)) });
  bare = await startCairn([alice, admin]);
});
afterAll(async () => {
  await cairn?.close();
  await bare?.close();
  await stub?.close();
});

describe("summarize_session over REST", () => {
  it("summarizes a session now, answers the stored summary while it is current, and again when forced", async () => {
    await addTurns(cairn.url, alice.token, [turn("op-rest", 1), turn("op-rest", 2)]);
    expect(await storedSummary(cairn.url, alice.token, "op-rest")).toBeNull();
    const before = stub.chat.calls;
    const first = await http(cairn.url, "POST", "/v1/sessions/op-rest/summarize", { token: admin.token });
    expect(first.status).toBe(200);
    expectContractOutput("summarize_session", first.body);
    expect(first.body).toMatchObject({
      generated: true,
      summary: { session_id: "op-rest", turn_count: 2, method: "model", agents: ["alice"] },
    });
    expect(await storedSummary(cairn.url, alice.token, "op-rest")).toEqual(first.body.summary);

    const again = await http(cairn.url, "POST", "/v1/sessions/op-rest/summarize", { token: admin.token, body: {} });
    expect(again.body).toEqual({ generated: false, summary: first.body.summary });
    expect(stub.chat.calls).toBe(before + 1);

    const forced = await http(cairn.url, "POST", "/v1/sessions/op-rest/summarize", { token: admin.token, body: { force: true } });
    expect(forced.body.generated).toBe(true);
    expect(stub.chat.calls).toBe(before + 2);
  });

  it("needs an admin token, answers not_found for an unknown session and refuses bad input, beside a session it summarizes", async () => {
    await addTurns(cairn.url, alice.token, [turn("op-rest-2", 1)]);
    const asAgent = await http(cairn.url, "POST", "/v1/sessions/op-rest-2/summarize", { token: alice.token });
    expect(asAgent.status).toBe(403);
    expect(asAgent.body.code).toBe("forbidden");
    const missing = await http(cairn.url, "POST", "/v1/sessions/op-nothing/summarize", { token: admin.token });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe("not_found");
    const bad = await http(cairn.url, "POST", "/v1/sessions/op-rest-2/summarize", { token: admin.token, body: { force: "yes" } });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("validation_failed");
    expect(await storedSummary(cairn.url, alice.token, "op-rest-2")).toBeNull();
    const ok = await http(cairn.url, "POST", "/v1/sessions/op-rest-2/summarize", { token: admin.token });
    expect(ok.status).toBe(200);
    expect(ok.body.summary.session_id).toBe("op-rest-2");
  });

  it("answers 503 summarizer_unavailable from a server without a summarizer, whose other operations work", async () => {
    await addTurns(bare.url, alice.token, [turn("op-bare", 1)]);
    const res = await http(bare.url, "POST", "/v1/sessions/op-bare/summarize", { token: admin.token });
    expect(res.status).toBe(503);
    expect(res.body.code).toBe("summarizer_unavailable");
    expect(res.headers.get("retry-after")).toBe("2");
    expect(res.body.hint).toMatch(/summarizer/);
    expect((await http(bare.url, "GET", "/v1/sessions/op-bare", { token: admin.token })).status).toBe(200);
  });

  it("is served by the stack npm start composes (memory-core with the summarizer injected), which stops cleanly", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "cairn-summ-stack-"));
    // Its own workspace on the shared Chroma: the stack's loop must not summarize other tests' sessions.
    const stackWorkspace = uniqueWorkspace("summ-stack");
    const agent = makeToken(stackWorkspace, "agent");
    const root = makeToken(stackWorkspace, "root", "admin");
    const tokensFile = join(dataDir, "tokens.yaml");
    await writeFile(tokensFile, yaml.dump({ tokens: [agent, root] }));
    const stack = await startStack({
      config: loadConfig({
        CAIRN_DATA_DIR: dataDir,
        CAIRN_PORT: "0",
        CAIRN_CHROMA_URL: chromaUrl().toString(),
        CAIRN_TOKENS_FILE: tokensFile,
      }),
      log: silentLogger,
      embedder: await sharedEmbedder(),
      summarizer: summarizerFactory(loadSummarizerConfig({ CAIRN_SUMMARY_POLL_MS: "50", CAIRN_SUMMARY_IDLE_MS: "0" })),
    });
    try {
      await addTurns(stack.url, agent.token, [turn("op-stack", 1)]);
      // The background loop of the composed stack writes it without being asked.
      let summary = await storedSummary(stack.url, agent.token, "op-stack");
      while (!summary) {
        await new Promise((r) => setTimeout(r, 100));
        summary = await storedSummary(stack.url, agent.token, "op-stack");
      }
      expect(summary).toMatchObject({ method: "extractive", turn_count: 1 });
      const res = await http(stack.url, "POST", "/v1/sessions/op-stack/summarize", { token: root.token });
      expect(res.body).toMatchObject({ generated: false, summary: { session_id: "op-stack" } });
    } finally {
      await stack.stop();
    }
    expect((await fetch(new URL("/healthz", stack.url)).catch(() => undefined))?.ok).not.toBe(true);
  });
});

describe("summarize_session over MCP", () => {
  it("summarizes a session for an admin and refuses an agent with the same code as REST", async () => {
    await addTurns(cairn.url, alice.token, [turn("op-mcp", 1), turn("op-mcp", 2)]);
    const adminClient = await mcpClient(cairn.url, admin.token);
    const agentClient = await mcpClient(cairn.url, alice.token);
    try {
      const result = await call(adminClient, "summarize_session", { session_id: "op-mcp" });
      expect(result.isError).toBeFalsy();
      expectContractOutput("summarize_session", result.structuredContent);
      expect(result.structuredContent).toMatchObject({ generated: true, summary: { session_id: "op-mcp", turn_count: 2 } });
      const refused = await call(agentClient, "summarize_session", { session_id: "op-mcp" });
      expect(refused.isError).toBe(true);
      expect(errorOf(refused).code).toBe("forbidden");
      const missing = await call(adminClient, "summarize_session", { session_id: "op-mcp-nothing" });
      expect(errorOf(missing).code).toBe("not_found");
    } finally {
      await adminClient.close();
      await agentClient.close();
    }
  });
});
