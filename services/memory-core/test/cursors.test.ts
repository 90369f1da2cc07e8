import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cursorTag, type Listing } from "../src/records/cursor.js";
import { http, makeToken, mcpClient, startCairn, turn, uniqueWorkspace, type TestCairn, type TestToken } from "./support/harness.js";

/**
 * Paging cursors are bound to the listing that issued them: the operation's listing, the workspace and the
 * parameters that choose what it holds. Two workspaces with the same agent names and the same session name, so
 * that only the binding tells their cursors apart.
 */
const first = uniqueWorkspace("cur-a");
const second = uniqueWorkspace("cur-b");
const dev = makeToken(first, "dev");
const ops = makeToken(first, "ops", "admin");
const otherDev = makeToken(second, "dev");
const otherOps = makeToken(second, "ops", "admin");
const SESSION = "shared-session";
const TURNS = 4;
let cairn: TestCairn;

async function seed(token: TestToken) {
  const ids: string[] = [];
  for (let n = 1; n <= TURNS; n++) {
    const res = await http(cairn.url, "POST", "/v1/memories", { token: token.token, body: turn(SESSION, n, { source: "import" }) });
    expect(res.status).toBe(201);
    ids.push(res.body.id);
  }
  for (let n = 1; n <= 2; n++) {
    const gone = await http(cairn.url, "POST", "/v1/memories", { token: token.token, body: turn("forgotten", n) });
    const forgot = await http(cairn.url, "POST", `/v1/memories/${gone.body.id}/forget`, {
      token: token.token,
      body: { reason: "held a secret" },
    });
    expect(forgot.status).toBe(200);
  }
  for (const id of ids.slice(0, 2)) {
    expect((await http(cairn.url, "POST", `/v1/memories/${id}/outdated`, { token: token.token, body: { reason: "stale" } })).status).toBe(
      200,
    );
  }
}

beforeAll(async () => {
  cairn = await startCairn([dev, ops, otherDev, otherOps]);
  await seed(dev);
  await seed(otherDev);
});
afterAll(() => cairn.close());

/** Each listing: how to ask for a page after a cursor, what a page holds, and which token reads it. */
interface ListingCall {
  name: string;
  token: (workspace: "first" | "second") => string;
  path: (cursor: string | null) => string;
  items: (body: any) => string[];
}
const admin = (w: "first" | "second") => (w === "first" ? ops.token : otherOps.token);
const agent = (w: "first" | "second") => (w === "first" ? dev.token : otherDev.token);
const page = (base: string, field: string, cursor: string | null) =>
  `${base}${base.includes("?") ? "&" : "?"}limit=1${cursor ? `&${field}=${cursor}` : ""}`;
const LISTINGS: ListingCall[] = [
  {
    name: "recent",
    token: agent,
    path: (c) => page("/v1/memories/recent", "before", c),
    items: (b) => b.turns.map((t: { id: string }) => t.id),
  },
  {
    name: "recent of the session",
    token: agent,
    path: (c) => page(`/v1/memories/recent?session_id=${SESSION}`, "before", c),
    items: (b) => b.turns.map((t: { id: string }) => t.id),
  },
  {
    name: "session",
    token: agent,
    path: (c) => page(`/v1/sessions/${SESSION}`, "after", c),
    items: (b) => b.turns.map((t: { id: string }) => t.id),
  },
  { name: "review", token: admin, path: (c) => page("/v1/review", "after", c), items: (b) => b.memories.map((m: { id: string }) => m.id) },
  {
    name: "audit",
    token: admin,
    path: (c) => page("/v1/audit", "after", c),
    items: (b) => b.entries.map((e: { action: string; memory_id: string }) => `${e.action}:${e.memory_id}`),
  },
  {
    name: "audit of outdated marks",
    token: admin,
    path: (c) => page("/v1/audit?agent=dev&since=2000-01-01T00:00:00Z", "after", c),
    items: (b) => b.entries.map((e: { action: string; memory_id: string }) => `${e.action}:${e.memory_id}`),
  },
  {
    name: "export of turns",
    token: admin,
    path: (c) => page("/v1/admin/records?collection=turns&include_embeddings=false", "after", c),
    items: (b) => b.records.map((r: { id: string }) => r.id),
  },
  {
    name: "export of tombstones",
    token: admin,
    path: (c) => page("/v1/admin/records?collection=tombstones", "after", c),
    items: (b) => b.records.map((r: { id: string }) => r.id),
  },
];

/** Every item of a listing, page by page with its own cursors; the cursors it issued on the way. */
async function pageThrough(listing: ListingCall, workspace: "first" | "second") {
  const items: string[] = [];
  const cursors: string[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 200; pages++) {
    const res: { status: number; body: any } = await http(cairn.url, "GET", listing.path(cursor), { token: listing.token(workspace) });
    expect(res.status, `${listing.name}: ${JSON.stringify(res.body)}`).toBe(200);
    items.push(...listing.items(res.body));
    cursor = res.body.next_cursor;
    if (!cursor) return { items, cursors };
    cursors.push(cursor);
  }
  throw new Error(`${listing.name} did not end`);
}

describe("a cursor is bound to the listing, workspace and filters that issued it", () => {
  it("over REST, pages each listing to its end with its own cursors and refuses them everywhere else with invalid_cursor", async () => {
    const issued = new Map<string, string>();
    for (const listing of LISTINGS) {
      // Positive: a page at a time reaches exactly what one page of all holds, nothing repeated.
      const { items, cursors } = await pageThrough(listing, "first");
      const whole = await http(cairn.url, "GET", listing.path(null).replace("limit=1", "limit=100"), { token: listing.token("first") });
      expect(items, listing.name).toEqual(listing.items(whole.body));
      expect(items.length, listing.name).toBeGreaterThanOrEqual(2);
      issued.set(listing.name, cursors[0]!);
    }
    for (const [issuer, cursor] of issued) {
      for (const listing of LISTINGS) {
        // The cursor in its own listing of its own workspace pages on.
        const own = await http(cairn.url, "GET", listing.path(cursor), { token: listing.token("first") });
        if (listing.name === issuer) {
          expect(own.status, issuer).toBe(200);
          // The same listing in the other workspace, with the same agent names and session name, refuses it.
          const elsewhere = await http(cairn.url, "GET", listing.path(cursor), { token: listing.token("second") });
          expect([elsewhere.status, elsewhere.body.code], `${issuer} in another workspace`).toEqual([400, "invalid_cursor"]);
          expect(elsewhere.body.hint).toMatch(/omit `(after|before)`/);
          continue;
        }
        expect([own.status, own.body.code], `${issuer} → ${listing.name}`).toEqual([400, "invalid_cursor"]);
        expect(own.body.hint, `${issuer} → ${listing.name}`).toMatch(/next_cursor/);
      }
    }
  });

  it("over REST, refuses a cursor once a filter that chooses the listing's items changes, and not when limit or detail do", async () => {
    const recent = await http(cairn.url, "GET", "/v1/memories/recent?limit=1", { token: dev.token });
    const withDetail = await http(cairn.url, "GET", `/v1/memories/recent?limit=3&detail=full&before=${recent.body.next_cursor}`, {
      token: dev.token,
    });
    expect([withDetail.status, withDetail.body.turns.length]).toEqual([200, 3]);
    const otherAgent = await http(cairn.url, "GET", `/v1/memories/recent?agent=ops&before=${recent.body.next_cursor}`, {
      token: dev.token,
    });
    expect([otherAgent.status, otherAgent.body.code]).toEqual([400, "invalid_cursor"]);

    const audit = await http(cairn.url, "GET", "/v1/audit?limit=1&agent=dev", { token: ops.token });
    expect(audit.body.next_cursor).toEqual(expect.any(String));
    const sameFilter = await http(cairn.url, "GET", `/v1/audit?limit=5&agent=dev&after=${audit.body.next_cursor}`, { token: ops.token });
    expect(sameFilter.status).toBe(200);
    const unfiltered = await http(cairn.url, "GET", `/v1/audit?limit=5&after=${audit.body.next_cursor}`, { token: ops.token });
    expect([unfiltered.status, unfiltered.body.code]).toEqual([400, "invalid_cursor"]);
    // The same instant spelled otherwise is the same filter.
    const since = await http(cairn.url, "GET", "/v1/audit?limit=1&since=2000-01-01T00:00:00Z", { token: ops.token });
    const respelled = await http(cairn.url, "GET", `/v1/audit?limit=1&since=2000-01-01T01:00:00%2B01:00&after=${since.body.next_cursor}`, {
      token: ops.token,
    });
    expect(respelled.status).toBe(200);

    const session = await http(cairn.url, "GET", `/v1/sessions/${SESSION}?limit=1`, { token: dev.token });
    expect((await http(cairn.url, "POST", "/v1/memories", { token: dev.token, body: turn("another-session", 1) })).status).toBe(201);
    const otherSession = await http(cairn.url, "GET", `/v1/sessions/another-session?after=${session.body.next_cursor}`, {
      token: dev.token,
    });
    expect([otherSession.status, otherSession.body.code]).toEqual([400, "invalid_cursor"]);
    expect((await http(cairn.url, "GET", "/v1/sessions/another-session", { token: dev.token })).status).toBe(200);
  });

  it("over MCP, refuses another listing's or workspace's cursor with an invalid_cursor tool error, and pages with its own", async () => {
    const client = await mcpClient(cairn.url, dev.token);
    const otherClient = await mcpClient(cairn.url, otherDev.token);
    const adminClient = await mcpClient(cairn.url, ops.token);
    const call = async (c: typeof client, name: string, args: Record<string, unknown>) =>
      (await c.callTool({ name, arguments: args })) as any;
    try {
      const audit = await call(adminClient, "get_audit_log", { limit: 1 });
      const recent = await call(client, "query_recent_turns", { limit: 1 });
      const session = await call(client, "get_session", { session_id: SESSION, limit: 1 });
      for (const [name, args] of [
        ["get_session", { session_id: SESSION, after: audit.structuredContent.next_cursor }],
        ["get_session", { session_id: SESSION, after: recent.structuredContent.next_cursor }],
        ["query_recent_turns", { before: session.structuredContent.next_cursor }],
      ] as const) {
        const refused = await call(client, name, args);
        expect(refused.isError, name).toBe(true);
        expect(JSON.parse(refused.content[0].text).code).toBe("invalid_cursor");
      }
      const elsewhere = await call(otherClient, "get_session", { session_id: SESSION, after: session.structuredContent.next_cursor });
      expect([elsewhere.isError, JSON.parse(elsewhere.content[0].text).code]).toEqual([true, "invalid_cursor"]);
      const next = await call(client, "get_session", { session_id: SESSION, limit: 1, after: session.structuredContent.next_cursor });
      expect(next.isError).toBeFalsy();
      expect(next.structuredContent.turns[0].id).not.toBe(session.structuredContent.turns[0].id);
      const older = await call(client, "query_recent_turns", { limit: 1, before: recent.structuredContent.next_cursor });
      expect(older.isError).toBeFalsy();
      expect(older.structuredContent.turns).toHaveLength(1);
    } finally {
      await client.close();
      await otherClient.close();
      await adminClient.close();
    }
  });

  it("answers a cursor spelled with the right tag but a position far past any real one with 400 or an empty page, never 5xx", async () => {
    const tagged = (listing: Listing, ...position: unknown[]) =>
      Buffer.from(JSON.stringify([cursorTag(listing), ...position]), "utf8").toString("base64url");
    const far = Number.MAX_SAFE_INTEGER;
    // [request, token, the status it answers, whether a 200 is an empty last page]
    const cases: Array<[string, string, number, boolean]> = [
      [`/v1/memories/recent?before=${tagged({ name: "recent", workspace: first, scope: ["dev", undefined] }, far)}`, dev.token, 400, false],
      [
        `/v1/sessions/${SESSION}?after=${tagged({ name: "session", workspace: first, scope: [SESSION] }, far, "t_x")}`,
        dev.token,
        200,
        true,
      ],
      [`/v1/review?after=${tagged({ name: "review", workspace: first, scope: [] }, far, "t_x")}`, ops.token, 200, true],
      [
        `/v1/audit?after=${tagged({ name: "audit", workspace: first, scope: [undefined, undefined, undefined, undefined] }, far, 0)}`,
        ops.token,
        400,
        false,
      ],
      [
        `/v1/audit?after=${tagged({ name: "audit", workspace: first, scope: [undefined, undefined, undefined, undefined] }, 0, far)}`,
        ops.token,
        200,
        false,
      ],
      [
        `/v1/admin/records?collection=turns&after=${tagged({ name: "export", workspace: first, scope: ["turns"] }, far)}`,
        ops.token,
        400,
        false,
      ],
    ];
    for (const [path, token, status, empty] of cases) {
      const res = await http(cairn.url, "GET", path, { token });
      expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(status);
      if (status === 400) expect(res.body.code).toBe("invalid_cursor");
      if (empty) expect([res.body.turns ?? res.body.memories, res.body.next_cursor]).toEqual([[], null]);
    }
    // The tag alone does not page: the right shape of position is wanted too.
    const shapeless = tagged({ name: "session", workspace: first, scope: [SESSION] }, -1, "t_x");
    const refused = await http(cairn.url, "GET", `/v1/sessions/${SESSION}?after=${shapeless}`, { token: dev.token });
    expect([refused.status, refused.body.code]).toEqual([400, "invalid_cursor"]);
  });
});
