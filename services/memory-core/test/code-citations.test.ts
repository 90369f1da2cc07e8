import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { citationKeys, citesAny, lookupKeys, pathOfRef } from "@cairn/openapi/code-paths";
import { expectContractOutput } from "./support/contract-schemas.js";
import { http, makeToken, mcpClient, turn, uniqueWorkspace, useCairn } from "./support/harness.js";

describe("which refs are repository paths", () => {
  it("takes relative file and folder paths, with a line suffix dropped, and leaves tickets, commits, URLs and versions", () => {
    const paths = {
      "src/auth/refresh.ts": "src/auth/refresh.ts",
      "README.md": "README.md",
      "./docs/design.md": "docs/design.md",
      "src/auth/": "src/auth/",
      "src/auth/refresh.ts:42": "src/auth/refresh.ts",
      "src/auth/refresh.ts#L40-L58": "src/auth/refresh.ts",
      "services/loader/src/cli.ts:10-20": "services/loader/src/cli.ts",
      "Makefile/": "Makefile/",
    };
    for (const [ref, path] of Object.entries(paths)) expect([ref, pathOfRef(ref)]).toEqual([ref, path]);
    const notPaths = [
      "AUTH-412",
      "a1b2c3d4e5f6",
      "https://example.com/a/b.ts",
      "github.com/acme/api",
      "1.2.3",
      "v2.0",
      "/etc/passwd",
      "../outside.ts",
      "src/../x.ts",
      "two words.md",
      "~/notes.md",
      "Makefile",
      "user@host/x.ts",
    ];
    for (const ref of notPaths) expect([ref, pathOfRef(ref)]).toEqual([ref, undefined]);
  });
});

/** The matching rules said plainly, string by string: the oracle the keyed lookups are held to. */
function citesPlainly(cited: string, asked: string): boolean {
  if (cited === asked) return true;
  const folder = asked.endsWith("/") ? asked : `${asked}/`;
  if (cited.startsWith(folder)) return true;
  if (!asked.endsWith("/") && cited === folder) return true;
  const trimmed = asked.endsWith("/") ? asked.slice(0, -1) : asked;
  const parent = trimmed.includes("/") ? trimmed.slice(0, trimmed.lastIndexOf("/") + 1) : undefined;
  return parent !== undefined && cited === parent;
}

describe("how a path asked about matches the paths a memory cites", () => {
  const segment = fc.constantFrom("src", "auth", "a", "b", "refresh.ts", "x.md");
  const path = fc
    .tuple(fc.array(segment, { minLength: 1, maxLength: 4 }), fc.boolean())
    .map(([segments, folder]) => segments.join("/") + (folder ? "/" : ""));

  it("agrees with the rules said plainly, for any paths", () => {
    fc.assert(
      fc.property(path, path, (cited, asked) => {
        const keyed = lookupKeys(asked).some((key) => citationKeys(cited).includes(key));
        expect(keyed).toBe(citesPlainly(cited, asked));
        expect(citesAny([cited], [asked])).toBe(keyed);
      }),
      { numRuns: 2000 },
    );
  });

  it("matches a file, what lies under a folder and a file's own folder, and not a folder further up", () => {
    expect(citesAny(["src/auth/refresh.ts"], ["src/auth/refresh.ts"])).toBe(true);
    expect(citesAny(["src/auth/refresh.ts"], ["src/auth/"])).toBe(true);
    expect(citesAny(["src/auth/refresh.ts"], ["src/auth"])).toBe(true);
    expect(citesAny(["src/auth/"], ["src/auth/refresh.ts"])).toBe(true);
    expect(citesAny(["src/"], ["src/auth/refresh.ts"])).toBe(false);
    expect(citesAny(["src/auth/session.ts"], ["src/auth/refresh.ts"])).toBe(false);
    expect(citesAny(["src/authx/refresh.ts"], ["src/auth"])).toBe(false);
  });
});

const workspace = uniqueWorkspace("code");
const alice = makeToken(workspace, "alice");
const bob = makeToken(workspace, "bob");
const ops = makeToken(workspace, "ops", "admin");
const restored = uniqueWorkspace("code-restored");
const restoredOps = makeToken(restored, "ops", "admin");
const restoredAlice = makeToken(restored, "alice");
const cairn = useCairn([alice, bob, ops, restoredOps, restoredAlice]);

async function write(body: object, token = alice.token): Promise<string> {
  const res = await http(cairn.url, "POST", "/v1/memories", { token, body });
  if (res.status !== 201) throw new Error(`add_memory answered ${res.status}: ${res.text}`);
  return res.body.id as string;
}
const query = (body: object, token = alice.token) => http(cairn.url, "POST", "/v1/memories/query", { token, body });
type Hit = { memory: { id: string; cites?: string[]; flags?: string[]; branch?: string }; matched_by: string[]; confidence: string };
const ids = (hits: Hit[]) => hits.map((h) => h.memory.id);

describe("code citations over REST", () => {
  it("answers the live memories citing a file, its folder or what lies under a folder, newest first, and ranks words among them", async () => {
    const session = "code-1";
    const refresh = await write(
      turn(session, 1, {
        kind: "decision",
        prompt: "Token refresh rotation",
        thought: "Rotate refresh tokens on every use; a reused token revokes the family.",
        code: { repository: "acme/api", branch: "main", commit: "a1b2c3d", paths: [{ path: "src/auth/refresh.ts", lines: "40-58" }] },
      }),
    );
    const session2 = await write(turn(session, 2, { prompt: "Session store", refs: ["AUTH-412", "src/auth/session.ts:42"] }));
    const folder = await write(
      turn(session, 3, { kind: "lesson", prompt: "Auth folder lesson", code: { paths: [{ path: "src/auth/" }] } }),
    );
    // Says the words asked about, cites another file: found by words, never by the path.
    const billing = await write(
      turn(session, 4, {
        prompt: "Token refresh rotation for invoices",
        thought: "Token refresh rotation token refresh rotation.",
        code: { paths: [{ path: "src/billing/invoice.ts" }] },
      }),
    );
    const textOnly = await write(turn(session, 5, { prompt: "Mentions src/auth/refresh.ts in prose only" }));

    const byFile = await query({ paths: ["src/auth/refresh.ts"] });
    expect(byFile.status).toBe(200);
    expectContractOutput("query_raw_memories", byFile.body);
    expect(ids(byFile.body.hits)).toEqual([folder, refresh]);
    expect(byFile.body.hits[1]).toMatchObject({ confidence: "high", matched_by: ["path"] });
    expect(byFile.body.hits[1].memory.cites).toEqual(["src/auth/refresh.ts"]);
    expect(byFile.body.confidence).toBe("high");

    const byFolder = await query({ paths: ["src/auth/"] });
    expect(ids(byFolder.body.hits)).toEqual([folder, session2, refresh]);
    expect(ids((await query({ paths: ["src/auth"] })).body.hits)).toEqual([folder, session2, refresh]);
    // A file's own folder counts: the lesson on src/auth/ answers for src/auth/session.ts.
    expect(ids((await query({ paths: ["src/billing/invoice.ts", "src/auth/session.ts"] })).body.hits)).toEqual([billing, folder, session2]);
    expect(ids((await query({ paths: ["src/"] })).body.hits)).toEqual([billing, folder, session2, refresh]);
    expect(ids((await query({ paths: ["src/auth/refresh.ts"], limit: 1 })).body.hits)).toEqual([folder]);
    expect((await query({ paths: ["docs/nothing.md"] })).body).toEqual({ hits: [], confidence: "none" });

    // Words and paths: ranked as a search, among the memories citing the paths only.
    const words = { query: "token refresh rotation", mode: "lexical" };
    expect(ids((await query(words)).body.hits)).toEqual(expect.arrayContaining([billing, refresh]));
    const both = await query({ ...words, paths: ["src/auth/refresh.ts"] });
    expect(ids(both.body.hits)).toEqual([refresh]);
    expect(both.body.hits[0].matched_by).toEqual(["lexical", "path"]);
    expect(ids((await query({ query: "Mentions prose", paths: ["src/auth/"] })).body.hits)).not.toContain(textOnly);
    expect(ids((await query({ query: "Mentions prose" })).body.hits)).toContain(textOnly);

    // Live only: a memory superseded by another drops out (and shows with include_superseded).
    const replacement = await write(
      turn(session, 6, {
        kind: "decision",
        prompt: "Refresh tokens rotate per device",
        supersedes: [refresh],
        code: { paths: [{ path: "src/auth/refresh.ts" }] },
      }),
    );
    expect(ids((await query({ paths: ["src/auth/refresh.ts"] })).body.hits)).toEqual([replacement, folder]);
    expect(ids((await query({ paths: ["src/auth/refresh.ts"], include_superseded: true })).body.hits)).toEqual([
      replacement,
      folder,
      refresh,
    ]);

    // The whole memory carries its citation as written.
    const whole = await http(cairn.url, "GET", `/v1/memories/${refresh}`, { token: alice.token });
    expect(whole.body.code).toEqual({
      repository: "acme/api",
      branch: "main",
      commit: "a1b2c3d",
      paths: [{ path: "src/auth/refresh.ts", lines: "40-58" }],
    });
    expect((await http(cairn.url, "GET", `/v1/memories/${session2}`, { token: alice.token })).body.code).toBeUndefined();
  });

  it("flags a memory written on another branch than the caller's and the default, and names that branch", async () => {
    const session = "code-branches";
    const onFeature = await write(
      turn(session, 1, {
        prompt: "Cache layer",
        code: { branch: "feature/cache", commit: "b2c3d4e", paths: [{ path: "src/cache/lru.ts" }] },
      }),
    );
    const onMain = await write(turn(session, 2, { prompt: "Cache size", code: { branch: "main", paths: [{ path: "src/cache/lru.ts" }] } }));
    const flagged = (body: object) =>
      (query({ paths: ["src/cache/lru.ts"], ...body }) as Promise<{ body: { hits: Hit[] } }>).then((r) =>
        r.body.hits.map((h) => [h.memory.id, h.memory.flags ?? [], h.memory.branch]),
      );
    expect(await flagged({ branch: "main", default_branch: "main" })).toEqual([
      [onMain, [], undefined],
      [onFeature, ["other_branch"], "feature/cache"],
    ]);
    expect(await flagged({ branch: "feature/cache", default_branch: "main" })).toEqual([
      [onMain, [], undefined],
      [onFeature, [], undefined],
    ]);
    // Without the caller's branch nothing is known of it: no flag.
    expect(await flagged({})).toEqual([
      [onMain, [], undefined],
      [onFeature, [], undefined],
    ]);
  });

  it("refuses a query with neither words nor paths, and paths that leave the repository, with a 400 naming the field", async () => {
    const neither = await query({ limit: 3 });
    expect([neither.status, neither.body.code]).toEqual([400, "validation_failed"]);
    expect(neither.body.hint).toContain("paths");
    for (const bad of ["../etc/passwd", "/etc/passwd", "src//x.ts", "src/./x.ts", "a\\b.ts"]) {
      const res = await query({ paths: [bad] });
      expect([bad, res.status, res.body.code, res.body.errors?.[0]?.path]).toEqual([bad, 400, "validation_failed", "paths/0"]);
      // Said in words a caller can act on, not as the contract's regular expression.
      expect(res.body.errors[0].message).toMatch(/^must be a path relative to the repository's top/);
      const written = await http(cairn.url, "POST", "/v1/memories", {
        token: alice.token,
        body: turn("code-bad", 1, { code: { paths: [{ path: bad }] } }),
      });
      expect([bad, written.status, written.body.errors?.[0]?.path]).toEqual([bad, 400, "code/paths/0/path"]);
    }
    const credentials = await http(cairn.url, "POST", "/v1/memories", {
      token: alice.token,
      body: turn("code-bad", 2, { code: { repository: "https://user:token@example.com/acme/api", paths: [{ path: "a.ts" }] } }),
    });
    expect([credentials.status, credentials.body.errors?.[0]?.path]).toEqual([400, "code/repository"]);
    expect(credentials.body.errors[0].message).toMatch(/^must be a repository's name/);
    const branch = await query({ paths: ["src/x.ts"], branch: "two words" });
    expect([branch.status, branch.body.errors?.[0]?.path, branch.body.errors?.[0]?.message]).toEqual([
      400,
      "branch",
      expect.stringMatching(/^must be a git branch name/),
    ]);
    // The same fields well formed are taken.
    expect((await query({ paths: ["src/x.ts"] })).status).toBe(200);
    expect(await write(turn("code-bad", 3, { code: { repository: "acme/api", paths: [{ path: "a.ts" }] } }))).toMatch(/^t_/);
  });

  it("lists by when what a memory tells happened, so a day of imported commits reads in the commits' order", async () => {
    const later = await write(
      turn("code-order", 1, { occurred_at: "2024-03-02T10:00:00Z", code: { paths: [{ path: "src/order/a.ts" }] } }),
    );
    const earlier = await write(
      turn("code-order", 2, { occurred_at: "2024-03-01T10:00:00Z", code: { paths: [{ path: "src/order/a.ts" }] } }),
    );
    const now = await write(turn("code-order", 3, { code: { paths: [{ path: "src/order/a.ts" }] } }));
    expect(ids((await query({ paths: ["src/order/a.ts"] })).body.hits)).toEqual([now, later, earlier]);
  });

  it("ranks words among the citing memories on the dense side too, with many memories nearer that cite nothing", async () => {
    const cited = await write(
      turn("code-dense", 0, { prompt: "Parser backtracking on nested quotes", code: { paths: [{ path: "src/dense/parse.ts" }] } }),
    );
    for (let n = 1; n <= 12; n++) await write(turn("code-dense", n, { prompt: `Parser backtracking on nested quotes, variant ${n}` }));
    const semantic = await query({ query: "parser backtracking nested quotes", mode: "semantic", paths: ["src/dense/"] });
    expect(ids(semantic.body.hits)).toEqual([cited]);
    expect(semantic.body.hits[0].matched_by).toEqual(["path", "semantic"]);
    expect(ids((await query({ query: "parser backtracking nested quotes", mode: "semantic", limit: 20 })).body.hits)).toContain(cited);
  });

  it("forgets a citing memory from the path's answers and keeps the others citing it", async () => {
    const kept = await write(turn("code-forget", 1, { code: { paths: [{ path: "src/forget/me.ts" }] } }));
    const erased = await write(turn("code-forget", 2, { refs: ["src/forget/me.ts"] }));
    expect(ids((await query({ paths: ["src/forget/"] })).body.hits)).toEqual([erased, kept]);
    const forgotten = await http(cairn.url, "POST", `/v1/memories/${erased}/forget`, {
      token: alice.token,
      body: { reason: "pasted a secret" },
    });
    expect(forgotten.status).toBe(200);
    expect(ids((await query({ paths: ["src/forget/me.ts"] })).body.hits)).toEqual([kept]);
    expect(ids((await query({ paths: ["src/forget/"] })).body.hits)).toEqual([kept]);
  });

  it("keeps a retry a replay, and the same key with another citation a conflict", async () => {
    const body = turn("code-replay", 1, { idempotency_key: "code-replay-1", code: { paths: [{ path: "src/a.ts" }] } });
    const first = await http(cairn.url, "POST", "/v1/memories", { token: alice.token, body });
    const again = await http(cairn.url, "POST", "/v1/memories", { token: alice.token, body });
    expect([first.status, again.status, again.body.replayed, again.body.id]).toEqual([201, 200, true, first.body.id]);
    const other = await http(cairn.url, "POST", "/v1/memories", {
      token: alice.token,
      body: { ...body, code: { paths: [{ path: "src/b.ts" }] } },
    });
    expect([other.status, other.body.code]).toEqual([409, "idempotency_conflict"]);
  });
});

describe("turns stored before turns kept their cited paths", () => {
  it("are found by the repository paths among their refs", async () => {
    const cites = await write(turn("code-old", 1, { prompt: "Old lesson on the retry loop", refs: ["TICKET-9", "lib/retry.ts:12"] }));
    const citesNot = await write(turn("code-old", 2, { prompt: "Old lesson without a path", refs: ["TICKET-9"] }));
    const exported = await http(cairn.url, "GET", "/v1/admin/records?collection=turns&limit=500", { token: ops.token });
    const records = (exported.body.records as Array<{ id: string; metadata: Record<string, unknown> }>).filter((r) =>
      [cites, citesNot].includes(r.id),
    );
    expect(records.map((r) => r.metadata.cited_paths)).toEqual(["lib/retry.ts", undefined]);
    // As a backup taken before cited paths were stored holds them.
    for (const r of records) delete r.metadata.cited_paths;
    const imported = await http(cairn.url, "POST", "/v1/admin/records", {
      token: restoredOps.token,
      body: { collection: "turns", stamp: exported.body.stamp, records },
    });
    expect(imported.body).toMatchObject({ stored: 2 });
    const found = await http(cairn.url, "POST", "/v1/memories/query", { token: restoredAlice.token, body: { paths: ["lib/retry.ts"] } });
    expect(ids(found.body.hits)).toEqual([cites]);
    const byWords = await http(cairn.url, "POST", "/v1/memories/query", { token: restoredAlice.token, body: { query: "Old lesson" } });
    expect(ids(byWords.body.hits).sort()).toEqual([cites, citesNot].sort());
  });
});

describe("code citations over MCP", () => {
  it("writes a citation and asks by path through the tools, with structured results", async () => {
    const client = await mcpClient(cairn.url, bob.token);
    try {
      const added = await client.callTool({
        name: "add_memory",
        arguments: turn("code-mcp", 1, {
          kind: "attempt",
          prompt: "Tried a worker pool for parsing",
          code: { paths: [{ path: "lib/parse.ts", symbol: "parseAll" }] },
        }),
      });
      expect(added.isError).toBeFalsy();
      const id = (added.structuredContent as { id: string }).id;
      const asked = await client.callTool({ name: "query_raw_memories", arguments: { paths: ["lib/parse.ts"] } });
      expect(asked.isError).toBeFalsy();
      const result = asked.structuredContent as { hits: Hit[] };
      expect(ids(result.hits)).toEqual([id]);
      expect(result.hits[0]!.memory.cites).toEqual(["lib/parse.ts"]);
      const elsewhere = await client.callTool({ name: "query_raw_memories", arguments: { paths: ["lib/other.ts"] } });
      expect((elsewhere.structuredContent as { hits: Hit[] }).hits).toEqual([]);
      const neither = await client.callTool({ name: "query_raw_memories", arguments: {} });
      expect(neither.isError).toBe(true);
    } finally {
      await client.close();
    }
  });
});
