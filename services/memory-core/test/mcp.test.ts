import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { CallToolResultSchema, ErrorCode, ListToolsResultSchema, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import yaml from "js-yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentOperationIds, expectContractOutput, operationIds } from "./support/contract-schemas.js";
import { chromaUrl, http, makeToken, mcpClient, startCairn, turn, uniqueWorkspace, type TestCairn } from "./support/harness.js";

const workspace = uniqueWorkspace("mcp");
const alice = makeToken(workspace, "alice");
const bob = makeToken(workspace, "bob");
const admin = makeToken(workspace, "ops", "admin");
let cairn: TestCairn;
let client: Client;

type ToolResult = { isError?: boolean; structuredContent?: any; content: Array<{ type: string; text?: string }> };
const call = async (c: Client, name: string, args: Record<string, unknown>) => (await c.callTool({ name, arguments: args })) as ToolResult;
const errorOf = (result: ToolResult) => JSON.parse(result.content[0]!.text!) as { code: string; hint?: string; detail: string };

beforeAll(async () => {
  cairn = await startCairn([alice, bob, admin]);
  client = await mcpClient(cairn.url, alice.token);
});
afterAll(async () => {
  await client.close();
  await cairn.close();
});

describe("tool listing", () => {
  it("lists an agent the operations it may call, within the budget; an admin every operation", async () => {
    const listed = await client.listTools();
    const agentTools = listed.tools.map((t) => t.name);
    expect(agentTools.sort()).toEqual(agentOperationIds().sort());
    expect(agentTools).not.toContain("get_audit_log");
    expect(agentTools).toContain("query_raw_memories");
    // What every session that connects pays for in context (DESIGN budgets: tools/list 16 KB, instructions 2 KB).
    expect(Buffer.byteLength(JSON.stringify(listed))).toBeLessThanOrEqual(16 * 1024);
    // Lengths and patterns are left out of the listing; every call is still held to them.
    const add = listed.tools.find((t) => t.name === "add_memory")!;
    expect(JSON.stringify(add.inputSchema)).not.toMatch(/"(pattern|maxLength)"/);
    expect(add.inputSchema.properties).toHaveProperty("session_id");
    const offPattern = await call(client, "add_memory", { ...turn("mcp-listing", 1), session_id: "not a session id!" });
    expect([offPattern.isError, errorOf(offPattern).code]).toEqual([true, "validation_failed"]);
    expect((await call(client, "add_memory", turn("mcp-listing", 1))).isError).toBeFalsy();
    const instructions = client.getInstructions() ?? "";
    expect(instructions).toContain("query_recent_turns");
    expect(Buffer.byteLength(instructions)).toBeLessThanOrEqual(2 * 1024);

    const ops = await mcpClient(cairn.url, admin.token);
    try {
      const all = (await ops.listTools()).tools.map((t) => t.name);
      expect(all.sort()).toEqual(operationIds().sort());
    } finally {
      await ops.close();
    }
    // Not listed is not callable: an agent that calls an admin tool by name gets the forbidden tool error.
    const refused = await call(client, "get_audit_log", {});
    expect([refused.isError, errorOf(refused).code]).toEqual([true, "forbidden"]);
  });

  it("lists every tool with its input schema and annotations, and no output schema; answers still carry their structure", async () => {
    const { tools } = await client.listTools();
    const add = tools.find((t) => t.name === "add_memory")!;
    expect(add.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: true });
    expect(add.inputSchema.required).toEqual(expect.arrayContaining(["session_id", "prompt", "thought", "response"]));
    const recent = tools.find((t) => t.name === "query_recent_turns")!;
    expect(recent.annotations?.readOnlyHint).toBe(true);
    // The destructive and idempotent hints mean something only for a tool that writes: add_memory keeps them above.
    expect(recent.annotations).not.toHaveProperty("destructiveHint");
    expect(recent.annotations).not.toHaveProperty("idempotentHint");
    expect(Object.keys(recent.inputSchema.properties ?? {})).toEqual(["agent", "session_id", "limit", "before", "detail"]);
    // Output schemas are the contract's (GET /openapi.json), not the listing's: MCP makes them optional.
    expect(tools.filter((t) => t.outputSchema !== undefined).map((t) => t.name)).toEqual([]);
    expect(tools.length).toBeGreaterThan(5);
    // An answer is the contract's structure all the same, as structuredContent and as the text beside it.
    const stored = await call(client, "add_memory", turn("mcp-structure", 1));
    expectContractOutput("add_memory", stored.structuredContent);
    const opened = await call(client, "get_memory", { memory_id: stored.structuredContent.id });
    expectContractOutput("get_memory", opened.structuredContent);
    expect(opened.structuredContent).toMatchObject({ id: stored.structuredContent.id, prompt: turn("mcp-structure", 1).prompt });
    expect(JSON.parse(opened.content[0]!.text!)).toEqual(opened.structuredContent);
  });
});

describe("add_memory over MCP", () => {
  it("stores a turn and replays it on retry", async () => {
    const args = turn("mcp-add", 1, { idempotency_key: "mcp-add-1" });
    const first = await call(client, "add_memory", args);
    expect(first.isError).toBeFalsy();
    expectContractOutput("add_memory", first.structuredContent);
    expect(first.structuredContent).toMatchObject({ agent: "alice", replayed: false });
    const again = await call(client, "add_memory", args);
    expect(again.structuredContent).toMatchObject({ id: first.structuredContent.id, replayed: true });
  });

  it("answers bad arguments with a tool error carrying the code and a hint, and stores nothing", async () => {
    const bad = await call(client, "add_memory", { session_id: "mcp-bad", prompt: "only a prompt" });
    expect(bad.isError).toBe(true);
    const error = errorOf(bad);
    expect(error.code).toBe("validation_failed");
    expect(error.detail).toMatch(/thought is required/);
    expect(error.hint).toEqual(expect.any(String));
    const good = await call(client, "add_memory", turn("mcp-bad", 1));
    expect(good.isError).toBeFalsy();
    const session = await call(client, "get_session", { session_id: "mcp-bad" });
    expect(session.structuredContent.turns).toHaveLength(1);
  });

  it("answers a reused key with other content as idempotency_conflict", async () => {
    await call(client, "add_memory", turn("mcp-conflict", 1, { idempotency_key: "k-conflict" }));
    const conflict = await call(client, "add_memory", turn("mcp-conflict", 2, { idempotency_key: "k-conflict" }));
    expect(conflict.isError).toBe(true);
    expect(errorOf(conflict).code).toBe("idempotency_conflict");
  });
});

describe("query_recent_turns over MCP", () => {
  it("returns the caller's newest turns first", async () => {
    for (let n = 1; n <= 3; n++) await call(client, "add_memory", turn("mcp-recent", n));
    const result = await call(client, "query_recent_turns", { session_id: "mcp-recent", limit: 2, detail: "full" });
    expectContractOutput("query_recent_turns", result.structuredContent);
    expect(result.structuredContent.turns.map((t: { prompt: string }) => t.prompt)).toEqual([
      turn("mcp-recent", 3).prompt,
      turn("mcp-recent", 2).prompt,
    ]);
    const rest = await call(client, "query_recent_turns", {
      session_id: "mcp-recent",
      limit: 2,
      before: result.structuredContent.next_cursor,
      detail: "full",
    });
    expect(rest.structuredContent.turns.map((t: { prompt: string }) => t.prompt)).toEqual([turn("mcp-recent", 1).prompt]);
    expect(rest.structuredContent.next_cursor).toBeNull();
  });
});

describe("query_raw_memories over MCP", () => {
  it("finds a turn by meaning", async () => {
    await call(client, "add_memory", {
      session_id: "mcp-search",
      prompt: "Pick a database migration tool.",
      thought: "Flyway handles our Postgres schema versions; Liquibase XML was too verbose.",
      response: "Adopted Flyway for Postgres migrations.",
    });
    const result = await call(client, "query_raw_memories", { query: "which tool runs our postgres schema migrations", detail: "full" });
    expect(result.isError).toBeFalsy();
    expectContractOutput("query_raw_memories", result.structuredContent);
    expect(result.structuredContent.hits[0].memory.response).toBe("Adopted Flyway for Postgres migrations.");
  });

  it("gives each hit its evidence when asked (similarity by meaning, share of the query's words), and none by default", async () => {
    await call(client, "add_memory", {
      session_id: "mcp-evidence",
      prompt: "Choose how the nightly invoice export is compressed.",
      thought: "zstd level 3 made the export 40% smaller than gzip at the same speed.",
      response: "The nightly invoice export is compressed with zstd.",
    });
    const args = { query: "nightly invoice export compressed with zstd", session_id: "mcp-evidence" };
    const asked = await call(client, "query_raw_memories", { ...args, evidence: true });
    expectContractOutput("query_raw_memories", asked.structuredContent);
    const hit = asked.structuredContent.hits[0];
    expect(hit.matched_by).toEqual(["lexical", "semantic"]);
    expect(hit.evidence.share).toBeGreaterThan(0.9);
    expect(hit.evidence.similarity).toBeGreaterThan(0.5);
    expect(hit.evidence.similarity).toBeLessThanOrEqual(1);
    // Two decimals, as the contract says.
    expect(Math.round(hit.evidence.similarity * 100) / 100).toBe(hit.evidence.similarity);
    const plain = await call(client, "query_raw_memories", args);
    expect(plain.structuredContent.hits[0].memory.id).toBe(hit.memory.id);
    expect(plain.structuredContent.hits[0]).not.toHaveProperty("evidence");
  });

  it("answers an empty query with validation_failed", async () => {
    const result = await call(client, "query_raw_memories", { query: "   " });
    expect(result.isError).toBe(true);
    expect(errorOf(result).code).toBe("validation_failed");
  });
});

describe("query_summaries over MCP", () => {
  it("finds a session summary by meaning", async () => {
    await cairn.runtime.services.writes.putSummary(workspace, {
      session_id: "mcp-summary",
      agents: ["bob"],
      title: "Upgraded the CI runners to Node 20",
      summary: "The CI pipeline now runs on Node 20 runners; the flaky cache step was removed.",
      decisions: [{ decision: "Drop the CI cache step" }],
      open_questions: ["Is the build slower without the cache?"],
      next_steps: [],
      turn_count: 2,
      first_turn_at: "2026-11-02T09:00:00.000Z",
      last_turn_at: "2026-11-02T09:30:00.000Z",
      method: "model",
      model: "stub-model",
      generated_at: new Date().toISOString(),
    });
    const result = await call(client, "query_summaries", { query: "node version of the continuous integration runners" });
    expectContractOutput("query_summaries", result.structuredContent);
    expect(result.structuredContent.hits[0].summary).toMatchObject({ session_id: "mcp-summary", method: "model" });
  });
});

describe("get_session over MCP", () => {
  it("returns the session's turns in order and not_found for an unknown session", async () => {
    await call(client, "add_memory", turn("mcp-session", 1));
    await call(client, "add_memory", turn("mcp-session", 2));
    const result = await call(client, "get_session", { session_id: "mcp-session", detail: "full" });
    expectContractOutput("get_session", result.structuredContent);
    expect(result.structuredContent.turns.map((t: { prompt: string }) => t.prompt)).toEqual([
      turn("mcp-session", 1).prompt,
      turn("mcp-session", 2).prompt,
    ]);
    const missing = await call(client, "get_session", { session_id: "mcp-nope" });
    expect(missing.isError).toBe(true);
    expect(errorOf(missing).code).toBe("not_found");
  });
});

describe("get_memory over MCP", () => {
  it("opens a memory by id and answers not_found for an unknown one", async () => {
    const written = await call(client, "add_memory", turn("mcp-get", 1));
    const result = await call(client, "get_memory", { memory_id: written.structuredContent.id });
    expectContractOutput("get_memory", result.structuredContent);
    expect(result.structuredContent.prompt).toBe(turn("mcp-get", 1).prompt);
    const missing = await call(client, "get_memory", { memory_id: `t_${"f".repeat(32)}` });
    expect(missing.isError).toBe(true);
    expect(errorOf(missing).code).toBe("not_found");
  });
});

describe("get_caller over MCP", () => {
  it("names the token's workspace, agent and role, for an agent and for an admin", async () => {
    const result = await call(client, "get_caller", {});
    expectContractOutput("get_caller", result.structuredContent);
    expect(result.structuredContent).toEqual({ workspace, agent: "alice", role: "agent" });
    const ops = await mcpClient(cairn.url, admin.token);
    expect((await call(ops, "get_caller", {})).structuredContent).toEqual({ workspace, agent: "ops", role: "admin" });
    await ops.close();
  });
});

describe("protocol", () => {
  it("answers an unknown tool with a protocol error, and a known one with a result", async () => {
    await expect(client.callTool({ name: "drop_everything", arguments: {} })).rejects.toThrow(/Unknown tool/);
    const known = await call(client, "query_recent_turns", {});
    expect(known.isError).toBeFalsy();
  });

  it("refuses /mcp without a valid token (401) and serves it with one", async () => {
    const body = { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} };
    const headers = { accept: "application/json, text/event-stream" };
    const anonymous = await http(cairn.url, "POST", "/mcp", { body, headers });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.code).toBe("unauthorized");
    expect(anonymous.headers.get("www-authenticate")).toMatch(/^Bearer/);
    const wrong = await http(cairn.url, "POST", "/mcp", { body, headers, token: "cairn_not-a-real-token-at-all" });
    expect(wrong.status).toBe(401);
    const allowed = await http(cairn.url, "POST", "/mcp", { body, headers, token: bob.token });
    expect(allowed.status).toBe(200);
    expect(allowed.body.result.tools.length).toBe(agentOperationIds().length);
  });

  it("answers a body that is not JSON with a JSON-RPC parse error, and a valid one with a result", async () => {
    const headers = { accept: "application/json, text/event-stream" };
    const garbled = await http(cairn.url, "POST", "/mcp", { body: '{"jsonrpc": "2.0", "id": 1, "method": ', headers, token: bob.token });
    expect(garbled.status).toBe(400);
    expect(garbled.body).toEqual({ jsonrpc: "2.0", error: { code: -32700, message: expect.stringMatching(/^Parse error/) }, id: null });
    const valid = await http(cairn.url, "POST", "/mcp", {
      body: { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} },
      headers,
      token: bob.token,
    });
    expect(valid.status).toBe(200);
    expect(valid.body.id).toBe(2);
  });

  it("answers malformed initialize and tools/list params with InvalidParams in one short sentence, and well-formed ones with a result", async () => {
    const headers = { accept: "application/json, text/event-stream" };
    const rpc = (id: number, method: string, params: unknown) =>
      http(cairn.url, "POST", "/mcp", { body: { jsonrpc: "2.0", id, method, params }, headers, token: bob.token });
    const clientInfo = { name: "probe", version: "1.0.0" };
    const malformed: Array<[string, unknown]> = [
      ["initialize", { protocolVersion: 5, capabilities: {}, clientInfo }],
      ["initialize", {}],
      ["initialize", { protocolVersion: "2025-06-18", capabilities: [], clientInfo: { name: 7 } }],
      ["tools/list", { cursor: 5 }],
    ];
    for (const [n, [method, params]] of malformed.entries()) {
      const answer = await rpc(n + 1, method, params);
      expect(answer.status, method).toBe(200);
      expect(answer.body.error.code, JSON.stringify(params)).toBe(ErrorCode.InvalidParams);
      const message = answer.body.error.message as string;
      expect(message).toMatch(new RegExp(`^Invalid params for ${method}`));
      expect(message.length).toBeLessThan(400);
      expect(message).not.toMatch(/"code"|\[\s*\{|\n|at .*\.js/);
    }
    // Three problems in one initialize: the first is named, the others counted.
    const many = await rpc(9, "initialize", { protocolVersion: 5, capabilities: [], clientInfo: 1 });
    expect(many.body.error.message).toMatch(/protocolVersion: .*\(and 2 more\)/);

    const initialized = await rpc(10, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo });
    expect(initialized.body.result.serverInfo.name).toBe("cairn-memory-core");
    const listed = await rpc(11, "tools/list", { cursor: "any" });
    expect(listed.body.result.tools.length).toBe(agentOperationIds().length);
    const pinged = await rpc(12, "ping", {});
    expect(pinged.body.result).toEqual({});
  });

  it("writes over MCP are attributed to the token's agent", async () => {
    const bobClient = await mcpClient(cairn.url, bob.token);
    try {
      const written = await call(bobClient, "add_memory", turn("mcp-attribution", 1));
      expect(written.structuredContent.agent).toBe("bob");
      const alicesView = await call(client, "query_recent_turns", { agent: "bob", session_id: "mcp-attribution" });
      expect(alicesView.structuredContent.turns.map((t: { agent: string }) => t.agent)).toEqual(["bob"]);
      const alicesOwn = await call(client, "query_recent_turns", { session_id: "mcp-attribution" });
      expect(alicesOwn.structuredContent.turns).toEqual([]);
    } finally {
      await bobClient.close();
    }
  });
});

describe("stdio transport", () => {
  it("serves every tool to a client that starts it as a child process", async () => {
    const dir = await mkdtemp(join(tmpdir(), "cairn-stdio-"));
    const tokensFile = join(dir, "tokens.yaml");
    const carol = makeToken(workspace, "carol");
    await writeFile(tokensFile, yaml.dump({ tokens: [carol] }));
    const entry = fileURLToPath(new URL("../src/stdio.ts", import.meta.url));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ["--import", "tsx", entry],
      env: {
        PATH: process.env.PATH ?? "",
        CAIRN_TOKEN: carol.token,
        CAIRN_TOKENS_FILE: tokensFile,
        CAIRN_CHROMA_URL: chromaUrl().toString(),
        CAIRN_DATA_DIR: dir,
        // Far below any resident size: the watch must say so on stderr, once.
        CAIRN_MEMORY_LIMIT_MB: "1",
      },
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const stdio = new Client({ name: "cairn-stdio-test", version: "0.0.0" });
    // The child loads the embedder before it answers `initialize`: on a busy machine that outlasts the SDK's 60 s default.
    await stdio.connect(transport, { timeout: 110_000 });
    try {
      const { tools } = await stdio.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(agentOperationIds().sort());
      const written = await call(stdio, "add_memory", turn("stdio-session", 1));
      expect(written.structuredContent).toMatchObject({ agent: "carol", replayed: false });
      const recent = await call(stdio, "query_recent_turns", {});
      expect(recent.structuredContent.turns.map((t: { id: string }) => t.id)).toEqual([written.structuredContent.id]);
      const session = await call(stdio, "get_session", { session_id: "stdio-session" });
      expect(session.structuredContent.turns).toHaveLength(1);
      const found = await call(stdio, "query_raw_memories", { query: turn("stdio-session", 1).thought, session_id: "stdio-session" });
      expect(found.structuredContent.hits[0].memory.id).toBe(written.structuredContent.id);
      const summaries = await call(stdio, "query_summaries", { query: "anything at all" });
      expect(summaries.isError).toBeFalsy();
      expectContractOutput("query_summaries", summaries.structuredContent);
      // The same turn is visible over HTTP: one store behind both transports.
      const overHttp = await http(cairn.url, "GET", "/v1/memories/recent?agent=carol", { token: alice.token });
      expect(overHttp.body.turns.map((t: { id: string }) => t.id)).toEqual([written.structuredContent.id]);
      // The memory watch runs here as it does over HTTP: one warning at the highest share, none at 80%.
      const lines = stderr
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as { level: string; message: string; limit_source?: string });
      expect(lines.some((l) => l.message === "watching resident size against the memory limit")).toBe(true);
      const warnings = lines.filter((l) => l.level === "warn" && l.message.includes("of the memory limit"));
      expect(warnings.map((w) => [w.message, w.limit_source])).toEqual([
        ["resident size is above 90% of the memory limit", "CAIRN_MEMORY_LIMIT_MB"],
      ]);
    } finally {
      await stdio.close();
    }
  });
});

describe("stdio transport shutdown", () => {
  it("exits 0 without a stack overflow when its client disconnects, after serving a call; a malformed call is InvalidParams", async () => {
    const dir = await mkdtemp(join(tmpdir(), "cairn-stdio-exit-"));
    const tokensFile = join(dir, "tokens.yaml");
    const dave = makeToken(workspace, "dave");
    await writeFile(tokensFile, yaml.dump({ tokens: [dave] }));
    const entry = fileURLToPath(new URL("../src/stdio.ts", import.meta.url));
    // Spawned here rather than by StdioClientTransport, which keeps the exit code and stderr to itself.
    const child = spawn(process.execPath, ["--import", "tsx", entry], {
      env: {
        PATH: process.env.PATH ?? "",
        CAIRN_TOKEN: dave.token,
        CAIRN_TOKENS_FILE: tokensFile,
        CAIRN_CHROMA_URL: chromaUrl().toString(),
        CAIRN_DATA_DIR: dir,
      },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
    const transport = childTransport(child.stdin, child.stdout);
    const stdio = new Client({ name: "cairn-stdio-exit-test", version: "0.0.0" });
    // The child loads the embedder before it answers `initialize`: on a busy machine that outlasts the SDK's 60 s default.
    await stdio.connect(transport, { timeout: 110_000 });
    const written = await call(stdio, "add_memory", turn("stdio-exit", 1));
    expect(written.structuredContent).toMatchObject({ agent: "dave", replayed: false });
    for (const params of [{ arguments: {} }, { name: "query_recent_turns", arguments: [1] }]) {
      const refused = stdio.request({ method: "tools/call", params } as never, CallToolResultSchema);
      await expect(refused).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
    }
    // Malformed params of the SDK's own methods are InvalidParams here too, in one short sentence.
    const badList = stdio.request({ method: "tools/list", params: { cursor: 5 } } as never, ListToolsResultSchema);
    await expect(badList).rejects.toMatchObject({
      code: ErrorCode.InvalidParams,
      message: expect.stringMatching(/^MCP error -32602: Invalid params for tools\/list: cursor: [^\n]{1,200}$/),
    });
    const list = await stdio.request({ method: "tools/list", params: {} }, ListToolsResultSchema);
    expect(list.tools.length).toBe(agentOperationIds().length);
    await stdio.close();
    const [code, signal] = await exited;
    expect(stderr).not.toMatch(/RangeError|Maximum call stack/);
    expect([code, signal]).toEqual([0, null]);
  });
});

/** A client transport over a child's pipes, framed as the SDK's stdio transports frame messages. */
function childTransport(input: NodeJS.WritableStream, output: NodeJS.ReadableStream): Transport {
  const buffer = new ReadBuffer();
  const transport: Transport = {
    start() {
      output.on("data", (chunk: Buffer) => {
        buffer.append(chunk);
        for (let message = buffer.readMessage(); message; message = buffer.readMessage()) transport.onmessage?.(message);
      });
      output.on("end", () => transport.onclose?.());
      return Promise.resolve();
    },
    send(message: JSONRPCMessage) {
      input.write(serializeMessage(message));
      return Promise.resolve();
    },
    close() {
      input.end();
      return Promise.resolve();
    },
  };
  return transport;
}
