import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../src/logger.js";
import { cursorTag, type Listing } from "../src/records/cursor.js";
import { expectNoLeak } from "./support/no-leak.js";
import { http, makeToken, mcpClient, startCairn, turn, uniqueWorkspace, type TestCairn } from "./support/harness.js";

/**
 * Edges of the wire (issue 14): cursors the server never issued, bodies that are not what they claim,
 * nesting, broken percent-encoding, malformed MCP calls, foreign Host headers, and the error log line.
 */

const workspace = uniqueWorkspace("edge");
const alice = makeToken(workspace, "alice");
const bob = makeToken(workspace, "bob");
const ops = makeToken(workspace, "ops", "admin");
let cairn: TestCairn;
const logLines: string[] = [];

const snapshot = async () => {
  const recent = await http(cairn.url, "GET", "/v1/memories/recent?limit=100&detail=full", { token: alice.token });
  expect(recent.status).toBe(200);
  return JSON.stringify(recent.body);
};
let stored: string;

beforeAll(async () => {
  cairn = await startCairn([alice, bob, ops], { log: createLogger("edge-test", (line) => logLines.push(line)) });
  for (let n = 1; n <= 3; n++) {
    const res = await http(cairn.url, "POST", "/v1/memories", {
      token: alice.token,
      body: turn("edge-s", n, { idempotency_key: `edge-${n}` }),
    });
    expect(res.status).toBe(201);
  }
  const bobs = await http(cairn.url, "POST", "/v1/memories", { token: bob.token, body: turn("edge-b", 1) });
  expect(bobs.status).toBe(201);
  const forgotten = await http(cairn.url, "POST", "/v1/memories", { token: alice.token, body: turn("edge-f", 1) });
  expect(
    (await http(cairn.url, "POST", `/v1/memories/${forgotten.body.id}/forget`, { token: alice.token, body: { reason: "edge" } })).status,
  ).toBe(200);
  stored = await snapshot();
  expect(JSON.parse(stored).turns).toHaveLength(3);
});
afterAll(() => cairn.close());

interface RawResult {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  body: any;
}

/**
 * A request as bytes, over node:http: headers fetch would refuse or rewrite (Host, Content-Encoding) go as
 * given. Aborted client-side if no answer comes at all, so a server that spins fails the test rather than hangs it.
 */
function raw(method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer): Promise<RawResult> {
  return new Promise((resolve, reject) => {
    const bytes = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body, "utf8");
    const req = httpRequest(
      {
        host: cairn.url.hostname,
        port: cairn.url.port,
        method,
        path,
        headers: { ...(bytes ? { "content-length": String(bytes.length) } : {}), ...headers },
        signal: AbortSignal.timeout(20_000),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let parsed: unknown;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            parsed = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: parsed });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(bytes);
  });
}

const auth = (token: string) => ({ authorization: `Bearer ${token}` });
const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value), "utf8").toString("base64url");
const BEYOND = 2 ** 40;
/** A cursor of this workspace's listing `name` with `scope`, at any position a caller could spell. */
const tagged = (name: Listing["name"], scope: Listing["scope"], ...position: unknown[]) =>
  cursorOf([cursorTag({ name, workspace, scope }), ...position]);
const recentOf = (agent: string, session: string | undefined, ...position: unknown[]) => tagged("recent", [agent, session], ...position);
const NO_FILTER = [undefined, undefined, undefined, undefined];

function expectProblem(res: RawResult, status: number, code: string) {
  expect([res.status, res.body?.code], res.text).toEqual([status, code]);
  expect(res.headers["content-type"]).toContain("application/problem+json");
  expect(res.body).toMatchObject({ status, code, type: `urn:cairn:problem:${code}`, detail: expect.any(String), hint: expect.any(String) });
  expectNoLeak(res.text, [alice.token, bob.token, ops.token]);
}

function expectInvalidCursor(res: RawResult) {
  expectProblem(res, 400, "invalid_cursor");
  expect(res.body.hint).toMatch(/next_cursor/);
}

describe("cursors the server never issued", () => {
  it("answers a recency cursor past the end of the sequence at once with 400 invalid_cursor, and pages with an issued one", async () => {
    const first = await raw("GET", "/v1/memories/recent?limit=1", auth(alice.token));
    expect(first.status).toBe(200);
    const second = await raw("GET", `/v1/memories/recent?limit=1&before=${first.body.next_cursor}`, auth(alice.token));
    expect(second.status).toBe(200);
    expect(second.body.turns).toHaveLength(1);
    expect(second.body.turns[0].id).not.toBe(first.body.turns[0].id);

    expectInvalidCursor(await raw("GET", `/v1/memories/recent?limit=1&before=${recentOf("alice", undefined, BEYOND)}`, auth(alice.token)));
    expectInvalidCursor(
      await raw("GET", `/v1/memories/recent?limit=1&session_id=edge-s&before=${recentOf("alice", "edge-s", BEYOND)}`, auth(alice.token)),
    );
    // A session's recency is a listing of its own: the whole listing's cursor is not its, its own cursor pages it.
    expectInvalidCursor(
      await raw("GET", `/v1/memories/recent?limit=1&session_id=edge-s&before=${first.body.next_cursor}`, auth(alice.token)),
    );
    const sessionFirst = await raw("GET", "/v1/memories/recent?limit=1&session_id=edge-s", auth(alice.token));
    const inSession = await raw(
      "GET",
      `/v1/memories/recent?limit=1&session_id=edge-s&before=${sessionFirst.body.next_cursor}`,
      auth(alice.token),
    );
    expect(inSession.status).toBe(200);
    expect(inSession.body.turns).toHaveLength(1);
    expect(inSession.body.turns[0].id).not.toBe(sessionFirst.body.turns[0].id);
  });

  it("answers recency cursors with extra elements, non-integer or negative positions, or another agent, with invalid_cursor", async () => {
    for (const session of [undefined, "edge-s"]) {
      const forged = [
        recentOf("alice", session, 1, "x"),
        recentOf("alice", session, 1.5),
        recentOf("alice", session, -1),
        recentOf("alice", session, "1"),
        recentOf("bob", session, 1),
        cursorOf([1, "alice"]),
        cursorOf({ at: 1 }),
        "bm90LWEtY3Vyc29y",
      ];
      const listing = `/v1/memories/recent?limit=1${session ? `&session_id=${session}` : ""}`;
      for (const cursor of forged) expectInvalidCursor(await raw("GET", `${listing}&before=${cursor}`, auth(alice.token)));
      // The same positions, spelled as the server spells them, are accepted.
      for (const cursor of [recentOf("alice", session, 1), recentOf("alice", session, 0)]) {
        expect((await raw("GET", `${listing}&before=${cursor}`, auth(alice.token))).status).toBe(200);
      }
    }
    expect(
      (await raw("GET", `/v1/memories/recent?limit=1&agent=bob&before=${recentOf("bob", undefined, 1)}`, auth(alice.token))).status,
    ).toBe(200);
  });

  it("answers get_session cursors that are not positions with invalid_cursor, and pages with an issued one", async () => {
    const first = await raw("GET", "/v1/sessions/edge-s?limit=1", auth(alice.token));
    expect(first.status).toBe(200);
    const next = await raw("GET", `/v1/sessions/edge-s?limit=1&after=${first.body.next_cursor}`, auth(alice.token));
    expect(next.status).toBe(200);
    expect(next.body.turns).toHaveLength(1);
    const id = first.body.turns[0].id as string;
    const of = (...position: unknown[]) => tagged("session", ["edge-s"], ...position);
    for (const cursor of [of(1, id, "x"), of(-1, id), of(1.5, id), of(1, ""), of(1), cursorOf([1, id])]) {
      expectInvalidCursor(await raw("GET", `/v1/sessions/edge-s?limit=1&after=${cursor}`, auth(alice.token)));
    }
  });

  it("answers audit cursors past the end, negative or for another listing with invalid_cursor at once, and pages with an issued one", async () => {
    const first = await raw("GET", "/v1/audit?limit=1", auth(ops.token));
    expect(first.status).toBe(200);
    const next = await raw("GET", `/v1/audit?limit=1&after=${first.body.next_cursor}`, auth(ops.token));
    expect(next.status).toBe(200);
    expect(next.body.entries).toHaveLength(1);
    for (const cursor of [
      tagged("audit", NO_FILTER, BEYOND, 0),
      tagged("audit", NO_FILTER, -(2 ** 50), 0),
      tagged("export", ["turns"], 1),
      tagged("audit", NO_FILTER, 1, 0, "x"),
    ]) {
      expectInvalidCursor(await raw("GET", `/v1/audit?limit=1&after=${cursor}`, auth(ops.token)));
    }
  });

  it("answers export cursors past the end, negative or for another collection with invalid_cursor, and pages with an issued one", async () => {
    const first = await raw("GET", "/v1/admin/records?collection=turns&limit=1&include_embeddings=false", auth(ops.token));
    expect(first.status).toBe(200);
    const next = await raw(
      "GET",
      `/v1/admin/records?collection=turns&limit=1&include_embeddings=false&after=${first.body.next_cursor}`,
      auth(ops.token),
    );
    expect(next.status).toBe(200);
    expect(next.body.records).toHaveLength(1);
    const forged: Array<[string, string]> = [
      ["turns", tagged("export", ["turns"], BEYOND)],
      ["turns", tagged("export", ["turns"], -1)],
      ["turns", tagged("export", ["turns"], 1, "x")],
      ["summaries", first.body.next_cursor],
      ["tombstones", tagged("export", ["tombstones"], BEYOND)],
    ];
    for (const [collection, cursor] of forged) {
      expectInvalidCursor(await raw("GET", `/v1/admin/records?collection=${collection}&limit=1&after=${cursor}`, auth(ops.token)));
    }
  });

  it("answers a forged cursor over MCP with a tool error invalid_cursor", async () => {
    const client = await mcpClient(cairn.url, alice.token);
    try {
      const bad = (await client.callTool({
        name: "query_recent_turns",
        arguments: { limit: 1, before: recentOf("alice", undefined, BEYOND) },
      })) as {
        isError?: boolean;
        content: Array<{ text: string }>;
      };
      expect(bad.isError).toBe(true);
      expect(JSON.parse(bad.content[0]!.text)).toMatchObject({
        code: "invalid_cursor",
        status: 400,
        hint: expect.stringMatching(/next_cursor/),
      });
      const good = (await client.callTool({ name: "query_recent_turns", arguments: { limit: 1 } })) as unknown as {
        isError?: boolean;
        structuredContent: { turns: unknown[] };
      };
      expect(good.isError).toBeFalsy();
      expect(good.structuredContent.turns).toHaveLength(1);
    } finally {
      await client.close();
    }
  });
});

describe("bodies that are not what their Content-Encoding claims", () => {
  const json = JSON.stringify(turn("edge-enc", 1));
  const headers = (encoding: string) => ({ ...auth(alice.token), "content-type": "application/json", "content-encoding": encoding });

  it("answers a body that does not decode as claimed with 400 malformed_json", async () => {
    for (const encoding of ["gzip", "deflate"]) {
      expectProblem(await raw("POST", "/v1/memories", headers(encoding), json), 400, "malformed_json");
    }
    expectProblem(await raw("POST", "/v1/memories", headers("gzip"), gzipSync(json).subarray(0, 20)), 400, "malformed_json");
    expect(await snapshot()).toBe(stored);
  });

  it("answers an encoding it does not take with 415 unsupported_media_type", async () => {
    for (const encoding of ["br", "zstd", "x-unknown"]) {
      expectProblem(await raw("POST", "/v1/memories", headers(encoding), json), 415, "unsupported_media_type");
    }
    expectProblem(await raw("POST", "/v1/memories", headers("br"), brotliCompressSync(json)), 415, "unsupported_media_type");
    expect(await snapshot()).toBe(stored);
  });

  it("takes the same body gzip- or deflate-compressed as claimed", async () => {
    const gz = await raw("POST", "/v1/memories/query", headers("gzip"), gzipSync(JSON.stringify({ query: "Task 1" })));
    expect(gz.status).toBe(200);
    const df = await raw("POST", "/v1/memories/query", headers("deflate"), deflateSync(JSON.stringify({ query: "Task 1" })));
    expect(df.status).toBe(200);
  });
});

describe("deeply nested JSON", () => {
  const deepArray = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
  const deepObject = (depth: number) => '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
  const jsonHeaders = { ...auth(alice.token), "content-type": "application/json" };

  it("answers a REST body nested thousands deep with 400 validation_failed naming the bound, and stores nothing", async () => {
    const bodies = [
      ["/v1/memories", `{"session_id":"edge-deep","prompt":"p","thought":"t","response":"r","tags":${deepArray(5000)}}`],
      ["/v1/memories", `{"session_id":"edge-deep","prompt":"p","thought":"t","response":"r","checks":[${deepObject(5000)}]}`],
      ["/v1/memories/query", `{"query":"x","agent":${deepObject(5000)}}`],
      ["/v1/memories/query", deepArray(5000)],
    ] as const;
    for (const [path, body] of bodies) {
      const res = await raw("POST", path, jsonHeaders, body);
      expectProblem(res, 400, "validation_failed");
      expect(res.body.errors).toEqual([{ path: "", message: expect.stringMatching(/nested deeper than 64/) }]);
    }
    expect(await snapshot()).toBe(stored);
    // Shallow nesting in the same place is judged by the contract as usual.
    const shallow = await raw(
      "POST",
      "/v1/memories",
      jsonHeaders,
      `{"session_id":"edge-deep","prompt":"p","thought":"t","response":"r","tags":${deepArray(3)}}`,
    );
    expectProblem(shallow, 400, "validation_failed");
    expect(shallow.body.errors.map((e: { path: string }) => e.path)).toContain("tags/0");
  });

  it("answers MCP arguments nested thousands deep with a tool error validation_failed", async () => {
    // The SDK client cannot send this depth itself (its own checks overflow): sent as raw JSON-RPC.
    const call = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add_memory","arguments":{"session_id":"edge-deep","prompt":"p","thought":"t","response":"r","tags":${deepArray(5000)}}}}`;
    const res = await raw("POST", "/mcp", { ...jsonHeaders, accept: "application/json, text/event-stream" }, call);
    expect(res.status, res.text).toBe(200);
    expect(res.body.result.isError).toBe(true);
    expect(JSON.parse(res.body.result.content[0].text)).toMatchObject({
      code: "validation_failed",
      errors: [{ path: "", message: expect.stringMatching(/nested deeper than 64/) }],
    });
    const client = await mcpClient(cairn.url, alice.token);
    try {
      const result = (await client.callTool({
        name: "add_memory",
        arguments: { ...turn("edge-deep", 1), tags: JSON.parse(deepArray(100)) },
      })) as { isError?: boolean; content: Array<{ text: string }> };
      expect(result.isError).toBe(true);
      expect(JSON.parse(result.content[0]!.text)).toMatchObject({
        code: "validation_failed",
        errors: [{ path: "", message: expect.stringMatching(/nested deeper than 64/) }],
      });
      const query = (await client.callTool({ name: "query_recent_turns", arguments: { limit: 1 } })) as { isError?: boolean };
      expect(query.isError).toBeFalsy();
      expect(await snapshot()).toBe(stored);
    } finally {
      await client.close();
    }
  });
});

describe("broken percent-encoding in the path", () => {
  it("answers 400 validation_failed, with or without a token and on unknown routes", async () => {
    for (const path of ["/v1/memories/%ZZ", "/v1/sessions/%E0%A4%A", "/v1/nowhere/%ZZ", "/%ZZ"]) {
      expectProblem(await raw("GET", path, auth(alice.token)), 400, "validation_failed");
      expectProblem(await raw("GET", path), 400, "validation_failed");
    }
    // Well-formed encoding of the same routes goes on to the usual answers.
    expect((await raw("GET", "/v1/sessions/edge%2Ds", auth(alice.token))).status).toBe(200);
    expectProblem(await raw("GET", "/v1/memories/%5A%5A", auth(alice.token)), 400, "validation_failed");
    expectProblem(await raw("GET", "/v1/nowhere/%5A", auth(alice.token)), 404, "not_found");
  });
});

describe("malformed tools/call over MCP", () => {
  const rpc = (params: unknown) =>
    raw(
      "POST",
      "/mcp",
      { ...auth(alice.token), "content-type": "application/json", accept: "application/json, text/event-stream" },
      JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", ...(params === undefined ? {} : { params }) }),
    );

  it("answers a call without a name, or with arguments that are not an object, with -32602 and a short message", async () => {
    const malformed = [
      { arguments: {} },
      { name: 5, arguments: {} },
      { name: "", arguments: {} },
      { name: "query_recent_turns", arguments: [1] },
      { name: "query_recent_turns", arguments: "limit=1" },
      { name: "query_recent_turns", arguments: 7 },
      { name: "query_recent_turns", arguments: null },
      undefined,
    ];
    for (const params of malformed) {
      const res = await rpc(params);
      expect(res.body?.error?.code, `${JSON.stringify(params)}: ${res.text}`).toBe(-32602);
      expect(res.body.id).toBe(7);
      expect(res.body.error.message.length).toBeLessThan(160);
      expect(res.body.error.message).not.toMatch(/invalid_type|"path"|expected/);
      expectNoLeak(res.text, [alice.token]);
    }
    const ok = await rpc({ name: "query_recent_turns", arguments: { limit: 1 } });
    expect(ok.body.result.isError).toBeFalsy();
    expect(ok.body.result.structuredContent.turns).toHaveLength(1);
    const noArguments = await rpc({ name: "query_recent_turns" });
    expect(noArguments.body.result.structuredContent.turns.length).toBeGreaterThan(0);
    const unknownTool = await rpc({ name: "drop_everything", arguments: {} });
    expect(unknownTool.body.error.code).toBe(-32602);
    const unknownMethod = await raw(
      "POST",
      "/mcp",
      { ...auth(alice.token), "content-type": "application/json", accept: "application/json, text/event-stream" },
      JSON.stringify({ jsonrpc: "2.0", id: 8, method: "tools/destroy", params: {} }),
    );
    expect(unknownMethod.body.error.code).toBe(-32601);
  });
});

describe("the Host header on a loopback server", () => {
  it("refuses a foreign Host on REST routes with 403 problem+json forbidden, and serves a loopback one", async () => {
    for (const headers of [
      { host: "evil.example", ...auth(alice.token) },
      { host: "evil.example" },
      { host: `evil.example:${cairn.url.port}`, ...auth(alice.token) },
    ]) {
      const res = await raw("GET", "/v1/memories/recent", headers);
      expectProblem(res, 403, "forbidden");
      expect(res.body.hint).toMatch(/Host/);
      expect(res.text).not.toContain("evil.example");
    }
    expect((await raw("GET", "/v1/memories/recent", { host: `127.0.0.1:${cairn.url.port}`, ...auth(alice.token) })).status).toBe(200);
    expect((await raw("GET", "/v1/memories/recent", { host: `localhost:${cairn.url.port}`, ...auth(alice.token) })).status).toBe(200);
    expectProblem(await raw("GET", "/v1/memories/recent", { host: `127.0.0.1:${cairn.url.port}` }), 401, "unauthorized");
    // MCP clients expect JSON-RPC's own error shape at /mcp.
    const mcp = await raw("POST", "/mcp", { host: "evil.example", ...auth(alice.token), "content-type": "application/json" }, "{}");
    expect(mcp.status).toBe(403);
    expect(mcp.body.error.code).toBe(-32000);
  });
});

describe("the error log line", () => {
  const linesSince = (mark: number) => logLines.slice(mark).map((l) => JSON.parse(l) as Record<string, unknown>);

  it("writes one line per 4xx with method, route, status, code, agent and duration, and none for a 200", async () => {
    let mark = logLines.length;
    const bad = await raw("GET", "/v1/sessions/edge-secret-session?limit=500", auth(alice.token));
    expect(bad.status).toBe(400);
    let lines = linesSince(mark);
    expect(lines).toEqual([
      expect.objectContaining({
        level: "warn",
        method: "GET",
        route: "/v1/sessions/{session_id}",
        status: 400,
        code: "validation_failed",
        agent: "alice",
        duration_ms: expect.any(Number),
      }),
    ]);

    mark = logLines.length;
    const body = { ...turn("edge-log", 1), prompt: 42, thought: "BODY-SECRET-TEXT" };
    expect(
      (await raw("POST", "/v1/memories", { ...auth(alice.token), "content-type": "application/json" }, JSON.stringify(body))).status,
    ).toBe(400);
    lines = linesSince(mark);
    expect(lines).toEqual([
      expect.objectContaining({ method: "POST", route: "/v1/memories", status: 400, code: "validation_failed", agent: "alice" }),
    ]);

    mark = logLines.length;
    expect((await raw("GET", "/v1/memories/recent?limit=2", { authorization: "Bearer not-a-real-token-zz9" })).status).toBe(401);
    lines = linesSince(mark);
    expect(lines).toEqual([expect.objectContaining({ method: "GET", route: "/v1/memories/recent", status: 401, code: "unauthorized" })]);
    expect(lines[0]).not.toHaveProperty("agent");

    mark = logLines.length;
    expect((await raw("GET", "/v1/memories/recent?limit=2", auth(alice.token))).status).toBe(200);
    expect(logLines.length).toBe(mark);

    const all = logLines.join("\n");
    for (const secret of [alice.token, "not-a-real-token-zz9", "BODY-SECRET-TEXT", "edge-secret-session", "limit=500", "limit=2"]) {
      expect(all).not.toContain(secret);
    }
  });
});
