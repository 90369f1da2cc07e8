import { createHash } from "node:crypto";
import { loadSummarizerConfig, summarizerFactory } from "@cairn/summarizer";
import { compileSchema, loadContract, type Operation } from "@cairn/openapi";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOpenAIStub, type OpenAIStub } from "../../../testing/openai-stub.js";
import { createEmbedder } from "../src/embeddings/create.js";
import { silentLogger } from "../src/logger.js";
import { cursorTag, type Listing } from "../src/records/cursor.js";
import { http, makeToken, mcpClient, startCairn, turn, uniqueWorkspace, type TestCairn, type TestToken } from "./support/harness.js";
import { arbitraryFor, applyMutation, mutationsFor, type Mutation, type Override, type Schema } from "./support/schema-arbitrary.js";

/**
 * Property-based tests of every contract operation over REST and over MCP (Streamable HTTP), with an agent and
 * an admin token, with inputs generated from the contract's own input schemas:
 * - valid inputs answer 2xx (matching the contract's output schema) or a 4xx the operation documents — never 5xx;
 * - invalid inputs (a valid input with one mutation the schema forbids) answer 4xx — never 5xx, never success;
 * - every 4xx carries a `code` from the contract's Problem enum and a hint; over MCP a tool error with the same,
 *   never a protocol-level internal error (-32603);
 * - the store is unchanged by invalid calls: a fingerprint of their workspace (every record exported, the audit
 *   log, verify_store's counts) is the same after every batch. Valid calls run in a workspace of their own.
 *
 * Bounded in `npm test` (CAIRN_FUZZ_RUNS, default 6 runs per operation, fixed seed CAIRN_FUZZ_SEED, default
 * below); `npm run fuzz` runs many more with a fresh seed. fast-check prints the seed and the shrunk
 * counterexample of a failure; rerun with CAIRN_FUZZ_SEED=<seed> to reproduce it.
 *
 * Cursors are short strings that cannot decode to a position, and forged ones holding positions far past any
 * real one (which once hung the server; CAIRN_FUZZ_FORGED_CURSORS=0 leaves them out). Nesting stays under
 * CAIRN_FUZZ_MAX_DEPTH (default 64); deeper bodies have their own example test.
 * CAIRN_FUZZ_TOLERATE=op:status,... lets a fuzz run look past a known undocumented status (e.g. add_memory:404)
 * to find what else fails; the default run tolerates nothing.
 */

const RUNS = Number(process.env.CAIRN_FUZZ_RUNS ?? 6);
const SEED =
  process.env.CAIRN_FUZZ_SEED === "random" ? Date.now() ^ (Math.random() * 2 ** 31) : Number(process.env.CAIRN_FUZZ_SEED ?? 20261130);
const FORGED_CURSORS = process.env.CAIRN_FUZZ_FORGED_CURSORS !== "0";
const MAX_DEPTH = Number(process.env.CAIRN_FUZZ_MAX_DEPTH ?? 64);
const DIMENSION = 16;

const contract = await loadContract();
const problemCodes: string[] = (contract.document as any).components.schemas.Problem.properties.code.enum;

/** The 4xx statuses each operation documents (from the contract as written). */
const TOLERATE = new Set((process.env.CAIRN_FUZZ_TOLERATE ?? "").split(",").filter(Boolean));

const documented4xx = new Map<string, Set<number>>();
for (const item of Object.values((contract.document as any).paths as Record<string, Record<string, any>>)) {
  for (const raw of Object.values(item)) {
    if (raw && typeof raw === "object" && typeof raw.operationId === "string") {
      documented4xx.set(
        raw.operationId,
        new Set(
          Object.keys(raw.responses ?? {})
            .map(Number)
            .filter((s) => s >= 400 && s < 500),
        ),
      );
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Two workspaces: one only ever receives invalid calls (and must never change), one takes the valid calls.

interface Workspace {
  name: string;
  agent: TestToken;
  other: TestToken;
  admin: TestToken;
  memoryIds: string[];
  sessions: string[];
  agents: string[];
  clients: { agent?: Client; admin?: Client };
}

const workspace = (label: string): Workspace => {
  const name = uniqueWorkspace(label);
  return {
    name,
    agent: makeToken(name, "alice"),
    other: makeToken(name, "bob"),
    admin: makeToken(name, "root", "admin"),
    memoryIds: [],
    sessions: [],
    agents: ["alice", "bob", "root"],
    clients: {},
  };
};
const frozen = workspace("props-invalid");
const writable = workspace("props-valid");

let stub: OpenAIStub;
let cairn: TestCairn;
let baseline: { hash: string; parts: string[] };

async function seed(ws: Workspace) {
  for (const [token, n] of [
    [ws.agent, 1],
    [ws.agent, 2],
    [ws.other, 3],
  ] as const) {
    const session = `seed-${n % 2}`;
    const res = await http(cairn.url, "POST", "/v1/memories", {
      token: token.token,
      body: turn(session, n, { idempotency_key: `seed-${n}`, tags: ["seed"] }),
    });
    expect(res.status).toBe(201);
    ws.memoryIds.push(res.body.id);
    if (!ws.sessions.includes(session)) ws.sessions.push(session);
  }
  await cairn.runtime.services.writes.putSummary(ws.name, {
    session_id: "seed-1",
    agents: ["alice", "bob"],
    title: "Seeded session",
    summary: "Two seeded turns about nothing in particular.",
    decisions: [{ decision: "keep it small" }],
    open_questions: [],
    next_steps: ["fuzz it"],
    turn_count: 2,
    first_turn_at: "2026-11-30T09:00:00.000Z",
    last_turn_at: "2026-11-30T09:30:00.000Z",
    method: "extractive",
    model: "stub",
    generated_at: "2026-11-30T10:00:00.000Z",
  });
  ws.clients.agent = await mcpClient(cairn.url, ws.agent.token);
  ws.clients.admin = await mcpClient(cairn.url, ws.admin.token);
}

/** Everything a client can see of a workspace, hashed: every record exported, the audit log, verify_store's counts. */
async function fingerprint(ws: Workspace): Promise<{ hash: string; parts: string[] }> {
  const parts: unknown[] = [];
  for (const collection of ["turns", "summaries", "tombstones"]) {
    let cursor: string | null = null;
    for (let page = 0; page < 100; page++) {
      const res: Awaited<ReturnType<typeof http<any>>> = await http(
        cairn.url,
        "GET",
        `/v1/admin/records?collection=${collection}&limit=500${cursor ? `&after=${cursor}` : ""}`,
        { token: ws.admin.token },
      );
      if (res.status !== 200) throw new Error(`export ${collection}: ${res.status} ${res.text}`);
      parts.push(res.body.records, res.body.total);
      cursor = res.body.next_cursor;
      if (!cursor) break;
    }
  }
  const audit = await http(cairn.url, "GET", "/v1/audit?limit=500", { token: ws.admin.token });
  if (audit.status !== 200) throw new Error(`audit: ${audit.status} ${audit.text}`);
  parts.push(audit.body);
  const verify = await http(cairn.url, "GET", "/v1/admin/verify", { token: ws.admin.token });
  if (verify.status !== 200) throw new Error(`verify: ${verify.status} ${verify.text}`);
  parts.push(verify.body.collections, verify.body.slots_checked, verify.body.tombstones, verify.body.problem_counts);
  for (const agent of ws.agents) {
    const recent = await http(cairn.url, "GET", `/v1/memories/recent?agent=${agent}&limit=100&detail=full`, { token: ws.admin.token });
    parts.push(recent.body);
  }
  const texts = parts.map(canonical);
  return { hash: createHash("sha256").update(JSON.stringify(texts)).digest("hex"), parts: texts };
}

/** JSON with every object's keys sorted: Chroma returns metadata keys in no fixed order. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, v) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, (v as Record<string, unknown>)[k]]),
        )
      : v,
  );

/** Where two fingerprints differ, for the failure message. */
function difference(a: { parts: string[] }, b: { parts: string[] }): string {
  const i = a.parts.findIndex((p, n) => p !== b.parts[n]);
  if (i < 0) return "no difference";
  const x = a.parts[i]!;
  const y = b.parts[i] ?? "";
  let at = 0;
  while (at < x.length && x[at] === y[at]) at++;
  return `part ${i}, from character ${at}: before ${x.slice(Math.max(0, at - 80), at + 200)}\n  after ${y.slice(Math.max(0, at - 80), at + 200)}`;
}

beforeAll(async () => {
  stub = await startOpenAIStub({ dimension: DIMENSION });
  const embedder = await createEmbedder({ kind: "openai", baseUrl: stub.baseUrl, model: "stub-props", apiKey: undefined }, silentLogger);
  cairn = await startCairn(
    [frozen, writable].flatMap((w) => [w.agent, w.other, w.admin]),
    {
      embedder,
      summarizer: summarizerFactory(loadSummarizerConfig({ CAIRN_SUMMARY_WORKER: "off" })),
    },
  );
  await seed(frozen);
  await seed(writable);
  baseline = await fingerprint(frozen);
  console.log(`contract properties: ${RUNS} runs per operation, seed ${SEED} (reproduce with CAIRN_FUZZ_SEED=${SEED})`);
});

afterAll(async () => {
  for (const ws of [frozen, writable]) {
    await ws.clients.agent?.close().catch(() => undefined);
    await ws.clients.admin?.close().catch(() => undefined);
  }
  await cairn?.close();
  await stub?.close();
});

// ---------------------------------------------------------------------------------------------------------
// Arbitraries from the contract, with the workspace's real ids mixed in

const MEMORY_ID = "^t_[0-9a-f]{32}$";
const CURSOR = "^[A-Za-z0-9_-]+$";
const SESSION_ID = "^[A-Za-z0-9][A-Za-z0-9._:@/-]*$";
const AGENT_NAME = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$";

/** A cursor-shaped string that cannot decode to a position (too short for the JSON pair) — see the note above. */
const harmlessCursor = fc.stringMatching(/^[A-Za-z0-9_-]{1,8}$/);
/**
 * Cursors a client could forge: positions far past any real one, tagged as a listing of the workspace tags them
 * (the tag is a digest anyone can compute: see records/cursor.ts), so that they reach the listing's own bounds.
 */
const forgedCursor = (ws: Workspace) => {
  const unfiltered = [undefined, undefined, undefined, undefined];
  const listings: Listing[] = [
    ...ws.agents.flatMap((agent) => [undefined, ...ws.sessions].map((session) => ({ name: "recent" as const, scope: [agent, session] }))),
    ...ws.sessions.map((session) => ({ name: "session" as const, scope: [session] })),
    { name: "review", scope: [] },
    { name: "audit", scope: unfiltered },
    ...["turns", "summaries", "tombstones"].map((collection) => ({ name: "export" as const, scope: [collection] })),
  ].map((l) => ({ ...l, workspace: ws.name }) as Listing);
  const at = fc.oneof(fc.constant(Number.MAX_SAFE_INTEGER), fc.integer({ min: 1_000_000, max: 2 ** 40 }), fc.integer({ min: -5, max: 5 }));
  return fc
    .tuple(fc.constantFrom(...listings), at, fc.oneof(at, fc.constantFrom(...ws.memoryIds, "t_x")))
    .map(([listing, first, second]) =>
      Buffer.from(
        JSON.stringify([cursorTag(listing), first, ...(listing.name === "recent" || listing.name === "export" ? [] : [second])]),
        "utf8",
      ).toString("base64url"),
    );
};

const overrideFor =
  (ws: Workspace): Override =>
  (schema: Schema) => {
    if (schema.type !== "string" || typeof schema.pattern !== "string") return undefined;
    if (schema.pattern === MEMORY_ID) return fc.oneof(fc.constantFrom(...ws.memoryIds), fc.stringMatching(new RegExp(MEMORY_ID)));
    if (schema.pattern === SESSION_ID) {
      return fc.oneof(
        fc.constantFrom(...ws.sessions),
        fc.stringMatching(new RegExp(SESSION_ID)).filter((s) => s.length <= (schema.maxLength ?? 128)),
      );
    }
    if (schema.pattern === AGENT_NAME) return fc.oneof(fc.constantFrom(...ws.agents), fc.stringMatching(new RegExp(AGENT_NAME)));
    if (schema.pattern === CURSOR) return FORGED_CURSORS ? fc.oneof(harmlessCursor, forgedCursor(ws)) : harmlessCursor;
    return undefined;
  };

interface InvalidCase {
  input: Record<string, unknown>;
  mutation: Mutation;
}

// ---------------------------------------------------------------------------------------------------------
// Calls over REST and MCP, and what every answer must be

type Role = "agent" | "admin";
type Outcome = { transport: "rest" | "mcp"; role: Role; status: number; body: any; raw: string };

const own = (target: Record<string, unknown>, key: string, value: unknown) =>
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });

/**
 * The REST request for an input, and the input as the server will see it (query strings are text; a value
 * given twice is a list). Undefined when fetch cannot send it as such (a path segment of `.` or `..` is
 * normalized away by URL parsing; a lone surrogate cannot be percent-encoded).
 */
function toRest(
  op: Operation,
  input: Record<string, unknown>,
): { path: string; body?: unknown; effective: Record<string, unknown> | "route-miss" } | undefined {
  const params = new Map(op.parameters.map((p) => [p.inputName, p]));
  const query: Array<[string, string]> = [];
  const body: Record<string, unknown> = {};
  const text = (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v));
  for (const [key, value] of Object.entries(input)) {
    const param = params.get(key);
    if (param?.in === "path") continue;
    if (param?.in === "query" || (!param && !op.hasBody)) {
      const name = param?.name ?? key;
      if (Array.isArray(value) && value.length > 0) for (const v of value) query.push([name, text(v)]);
      else query.push([name, text(value)]);
    } else own(body, key, value);
  }
  let path = op.path;
  let routeMiss = false;
  for (const param of op.parameters.filter((p) => p.in === "path")) {
    const value = input[param.inputName];
    const segment = value === undefined ? "" : text(value);
    if (segment === "." || segment === "..") return undefined;
    if (segment === "") routeMiss = true;
    let encoded: string;
    try {
      encoded = encodeURIComponent(segment);
    } catch {
      return undefined;
    }
    path = path.replace(`{${param.name}}`, encoded);
  }
  const qs = new URLSearchParams(query).toString();
  if (qs) path += `?${qs}`;
  if (routeMiss) return { path, ...(op.hasBody ? { body } : {}), effective: "route-miss" };

  // What the server reconstructs: decoded path segments, parsed and coerced query values, the JSON body.
  const effective: Record<string, unknown> = op.hasBody ? (JSON.parse(JSON.stringify(body)) as Record<string, unknown>) : {};
  for (const param of op.parameters.filter((p) => p.in === "path")) own(effective, param.inputName, text(input[param.inputName]));
  const parsed = new URLSearchParams(qs);
  for (const name of new Set(parsed.keys())) {
    const values = parsed.getAll(name);
    const param = op.parameters.find((p) => p.in === "query" && p.name === name);
    const raw = values.length === 1 ? values[0]! : values;
    let value: unknown = raw;
    if (typeof raw === "string" && param) {
      const type = param.schema.type;
      if ((type === "integer" || type === "number") && /^-?\d+(\.\d+)?$/.test(raw)) value = Number(raw);
      if (type === "boolean" && (raw === "true" || raw === "false")) value = raw === "true";
    }
    own(effective, param?.inputName ?? name, value);
  }
  return { path, ...(op.hasBody ? { body } : {}), effective };
}

async function callRest(op: Operation, ws: Workspace, role: Role, request: { path: string; body?: unknown }): Promise<Outcome> {
  const token = role === "admin" ? ws.admin.token : ws.agent.token;
  const res = await http(cairn.url, op.method.toUpperCase(), request.path, {
    token,
    ...(request.body !== undefined ? { body: request.body } : {}),
  });
  return { transport: "rest", role, status: res.status, body: res.body, raw: res.text };
}

async function callMcp(op: Operation, ws: Workspace, role: Role, input: Record<string, unknown>): Promise<Outcome> {
  const client = role === "admin" ? ws.clients.admin! : ws.clients.agent!;
  try {
    const result = (await client.callTool({ name: op.operationId, arguments: input })) as {
      isError?: boolean;
      structuredContent?: unknown;
      content: Array<{ text?: string }>;
    };
    const text = result.content?.[0]?.text ?? "";
    if (result.isError) {
      const payload = JSON.parse(text);
      return { transport: "mcp", role, status: Number(payload.status), body: payload, raw: text };
    }
    return { transport: "mcp", role, status: 200, body: result.structuredContent, raw: text };
  } catch (error) {
    const code = (error as { code?: number }).code;
    const message = String(error);
    // The HTTP endpoint refused the request itself (a body over the size limit): its problem document.
    if (typeof code === "number" && code >= 400 && code < 600) {
      let problem: unknown;
      try {
        problem = JSON.parse(message.slice(message.indexOf("{")));
      } catch {
        problem = { message };
      }
      return { transport: "mcp", role, status: code, body: problem, raw: message };
    }
    // A protocol error: -32603 is an internal error, the MCP face of a 5xx; any other is a 499 here.
    return { transport: "mcp", role, status: code === -32603 ? 500 : 499, body: { protocolError: code, message }, raw: message };
  }
}

const show = (value: unknown) => {
  const text = JSON.stringify(value, (_k, v) => (typeof v === "string" && v.length > 120 ? `${v.slice(0, 120)}…(${v.length})` : v));
  return text && text.length > 1500 ? `${text.slice(0, 1500)}…` : text;
};

function failure(op: Operation, what: string, outcome: Outcome, input: unknown): Error {
  return new Error(
    `${op.operationId} over ${outcome.transport} (${outcome.role} token): ${what}\n  input: ${show(input)}\n  answer ${outcome.status}: ${show(outcome.body)}`,
  );
}

/** A 4xx answer: a contract code and a hint. */
function checkProblem(op: Operation, outcome: Outcome, input: unknown) {
  if (outcome.status === 499)
    throw failure(op, "a protocol-level error for a known tool (a tool error with a code was expected)", outcome, input);
  const body = outcome.body ?? {};
  if (!problemCodes.includes(body.code)) throw failure(op, `4xx without a contract error code`, outcome, input);
  if (typeof body.hint !== "string" || body.hint.trim() === "") throw failure(op, `4xx ${body.code} without a hint`, outcome, input);
}

function checkInvalid(op: Operation, outcome: Outcome, input: unknown) {
  if (outcome.status >= 500) throw failure(op, "invalid input answered 5xx", outcome, input);
  if (outcome.status < 400) throw failure(op, "invalid input was accepted", outcome, input);
  checkProblem(op, outcome, input);
}

function checkValid(op: Operation, outcome: Outcome, input: unknown, routeMiss: boolean) {
  if (outcome.status >= 500) throw failure(op, "valid input answered 5xx", outcome, input);
  if (outcome.status >= 400) {
    const allowed = documented4xx.get(op.operationId)!;
    if (!allowed.has(outcome.status) && !(routeMiss && outcome.status === 404) && !TOLERATE.has(`${op.operationId}:${outcome.status}`))
      throw failure(op, `undocumented ${outcome.status}`, outcome, input);
    checkProblem(op, outcome, input);
    return;
  }
  if (outcome.transport === "rest" && !op.successStatuses.includes(outcome.status))
    throw failure(op, `undocumented success status`, outcome, input);
  const result = outputValidators.get(op.operationId)!(outcome.body);
  if (!result.ok) throw failure(op, `answer outside the contract's output schema: ${show(result.errors)}`, outcome, input);
}

const inputValidators = new Map(contract.operations.map((op) => [op.operationId, compileSchema(op.inputSchema)]));
const outputValidators = new Map(contract.operations.map((op) => [op.operationId, compileSchema(op.outputSchema)]));

// ---------------------------------------------------------------------------------------------------------

describe("every contract operation, with inputs generated from its schema", () => {
  for (const op of contract.operations) {
    it(
      `${op.operationId}: never 5xx; invalid input is refused with a code and a hint and changes nothing`,
      async () => {
        const schema = op.inputSchema as Schema;
        const isValid = (input: unknown) => inputValidators.get(op.operationId)!(input).ok;
        const valid = arbitraryFor(schema, "", overrideFor(writable)) as fc.Arbitrary<Record<string, unknown>>;
        const invalid: fc.Arbitrary<InvalidCase> = fc
          .tuple(arbitraryFor(schema, "", overrideFor(frozen)) as fc.Arbitrary<Record<string, unknown>>, mutationsFor(schema, MAX_DEPTH))
          .map(([base, mutation]) => ({ input: applyMutation(base, mutation, schema), mutation }))
          .filter((c) => !isValid(c.input));

        await fc.assert(
          fc.asyncProperty(valid, invalid, async (validInput, bad) => {
            for (const role of ["agent", "admin"] as const) {
              // Invalid input, to the workspace that must never change.
              checkInvalid(op, await callMcp(op, frozen, role, bad.input), bad);
              const rest = toRest(op, bad.input);
              if (rest && (rest.effective === "route-miss" || !isValid(rest.effective)))
                checkInvalid(op, await callRest(op, frozen, role, rest), bad);
              // What REST makes of it may be valid after all (a path or query value 42 is the text "42"): a valid call.
              else if (rest) checkValid(op, await callRest(op, writable, role, rest), bad, false);
              // Valid input, to the other workspace.
              checkValid(op, await callMcp(op, writable, role, validInput), validInput, false);
              const restValid = toRest(op, validInput);
              if (restValid)
                checkValid(op, await callRest(op, writable, role, restValid), validInput, restValid.effective === "route-miss");
            }
            const after = await fingerprint(frozen);
            if (after.hash !== baseline.hash) {
              const changed = difference(baseline, after);
              baseline = after; // report once, then go on comparing from here
              throw new Error(`${op.operationId}: the invalid calls changed the store (${changed})\n  input: ${show(bad)}`);
            }
          }),
          { numRuns: RUNS, seed: SEED },
        );
      },
      Math.max(120_000, RUNS * 4_000),
    );
  }
});

// ---------------------------------------------------------------------------------------------------------
// Examples the generators leave out, each a minimal reproduction

describe("inputs the generators leave out", () => {
  /** The smallest valid input fast-check finds for the operation, in the writable workspace. */
  const minimalInput = (op: Operation) =>
    fc.sample(arbitraryFor(op.inputSchema as Schema, "", overrideFor(writable)) as fc.Arbitrary<Record<string, unknown>>, {
      numRuns: 1,
      seed: 1,
    })[0]!;

  it("REST refuses an unknown field named __proto__ like any other unknown field (no operation may drop it silently)", async () => {
    const accepted: string[] = [];
    for (const op of contract.operations.filter((o) => o.hasBody)) {
      const rest = toRest(op, minimalInput(op))!;
      // Raw JSON text: an object literal would set the prototype instead of a field.
      const fields = JSON.stringify(rest.body ?? {}).slice(1, -1);
      const text = `{"__proto__":{"source":"human","x":1}${fields ? `,${fields}` : ""}}`;
      const res = await http(cairn.url, op.method.toUpperCase(), rest.path, { token: writable.admin.token, body: text });
      if (res.status !== 400 || res.body?.code !== "validation_failed") accepted.push(`${op.operationId} → ${res.status}`);
    }
    expect(accepted, "operations that accepted a body with a __proto__ field").toEqual([]);
  });

  it("a body nested 5000 deep is refused with a 4xx problem, not a 500", async () => {
    const deep = `{"session_id":"deep","prompt":"p","thought":"t","response":"r","tags":${"[".repeat(5000)}${"]".repeat(5000)}}`;
    const res = await http(cairn.url, "POST", "/v1/memories", { token: writable.agent.token, body: deep });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(problemCodes).toContain(res.body?.code);
  });

  it("a malformed percent-escape in a path is refused with a 4xx problem, not a 500", async () => {
    const res = await fetch(new URL("/v1/sessions/%ZZ", cairn.url), { headers: { authorization: `Bearer ${writable.agent.token}` } });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(problemCodes).toContain(((await res.json()) as { code?: string }).code);
  });

  it("a body whose Content-Encoding it does not have is refused with a 4xx problem, not a 500", async () => {
    const res = await http(cairn.url, "POST", "/v1/memories/query", {
      token: writable.agent.token,
      body: { query: "anything" },
      headers: { "content-encoding": "gzip" },
    });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(problemCodes).toContain(res.body?.code);
  });

  it("MCP tools/call without a tool name is a protocol error other than an internal error", async () => {
    const res = await http(cairn.url, "POST", "/mcp", {
      token: writable.agent.token,
      headers: { accept: "application/json, text/event-stream" },
      body: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { arguments: {} } },
    });
    expect(res.status).toBeLessThan(500);
    expect(res.body?.error?.code).toEqual(expect.any(Number));
    expect(res.body.error.code).not.toBe(-32603);
  });

  it("forged cursors far past the end are refused or answer an empty page", async () => {
    const far = Number.MAX_SAFE_INTEGER;
    const of = (listing: Omit<Listing, "workspace">) => cursorTag({ ...listing, workspace: writable.name });
    for (const [path, position] of [
      ["/v1/memories/recent?before=", [of({ name: "recent", scope: [writable.admin.agent, undefined] }), far]],
      ["/v1/sessions/seed-1?after=", [of({ name: "session", scope: ["seed-1"] }), far, "x"]],
      ["/v1/audit?after=", [of({ name: "audit", scope: [undefined, undefined, undefined, undefined] }), far, 0]],
      ["/v1/admin/records?collection=turns&after=", [of({ name: "export", scope: ["turns"] }), far]],
    ] as const) {
      const cursor = Buffer.from(JSON.stringify(position), "utf8").toString("base64url");
      const res = await http(cairn.url, "GET", `${path}${cursor}`, { token: writable.admin.token });
      expect(res.status, path).toBeLessThan(500);
    }
  });
});

describe("refusals of valid input change nothing either", () => {
  it("summarize_session of a session that does not exist answers 404 and leaves no record behind", async () => {
    const before = await fingerprint(writable);
    const res = await http(cairn.url, "POST", "/v1/sessions/no-such-session/summarize", { token: writable.admin.token, body: {} });
    expect([res.status, res.body?.code]).toEqual([404, "not_found"]);
    const after = await fingerprint(writable);
    expect(after.hash === before.hash ? "unchanged" : difference(before, after)).toBe("unchanged");
  });
});
