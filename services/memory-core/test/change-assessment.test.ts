import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOpenAIStub, type OpenAIStub } from "../../../testing/openai-stub.js";
import { createEmbedder } from "../src/embeddings/create.js";
import { silentLogger } from "../src/logger.js";
import { expectContractOutput } from "./support/contract-schemas.js";
import { http, makeToken, mcpClient, startCairn, uniqueWorkspace, useCairn, type TestCairn } from "./support/harness.js";

/**
 * assess_change over a history written the way the git importer writes it (a commit's hash first among its refs,
 * `reverts:` and `fixes:` refs, `revert` and `fix` tags, the commit date as `occurred_at`) beside agents' own
 * turns, judged by their corrections and checks. `cairn import git` over a real repository is tested with the
 * importer (services/ops-cli/test/import.test.ts).
 */

const workspace = uniqueWorkspace("assess");
const historian = makeToken(workspace, "historian");
const dev = makeToken(workspace, "dev");
const other = makeToken(uniqueWorkspace("assess-other"), "mallory");
const kinds = uniqueWorkspace("assess-kinds");
const kindsHistorian = makeToken(kinds, "historian");
const kindsDev = makeToken(kinds, "dev");
const cairn = useCairn([historian, dev, other, kindsHistorian, kindsDev]);

const hash = (label: string) => createHash("sha1").update(label).digest("hex");
const day = (n: number) => new Date(Date.parse("2026-09-01T10:00:00Z") + n * 86_400_000).toISOString();

async function write(token: string, body: object): Promise<string> {
  const res = await http(cairn.url, "POST", "/v1/memories", { token, body });
  if (res.status !== 201) throw new Error(`add_memory answered ${res.status}: ${res.text}`);
  return res.body.id;
}

interface CommitSpec {
  subject: string;
  body: string;
  at: number;
  files: string[];
  tags?: string[];
  refs?: string[];
}

/** A commit's memory as the importer shapes it. */
const commit = (label: string, spec: CommitSpec, token = historian.token) =>
  write(token, {
    session_id: `git:shop:${day(spec.at).slice(0, 10)}`,
    prompt: spec.subject,
    thought: spec.body,
    response: `Commit ${hash(label)} by Ada Lovelace.\n${spec.files.join("\n")}`,
    occurred_at: day(spec.at),
    author: "Ada Lovelace <ada@example.com>",
    source: "import",
    tags: ["git", ...(spec.tags ?? [])],
    refs: [hash(label), ...(spec.refs ?? []), ...spec.files],
  });

let seeded: Promise<Record<string, string>> | undefined;
function seed() {
  seeded ??= (async () => {
    const ids: Record<string, string> = {};
    ids.sessions = await commit("sessions", {
      subject: "Move checkout sessions from Postgres to Redis",
      body: "Redis TTLs replace the session sweeper; checkout sessions no longer hit Postgres.",
      at: 0,
      files: ["src/checkout/session-store.ts"],
    });
    ids.revert = await commit("revert", {
      subject: 'Revert "Move checkout sessions from Postgres to Redis"',
      body: `This reverts commit ${hash("sessions")}. Sessions were lost on every Redis restart.`,
      at: 3,
      files: ["src/checkout/session-store.ts"],
      tags: ["revert"],
      refs: [`reverts:${hash("sessions")}`],
    });
    ids.carts = await commit("carts", {
      subject: "Keep shopping carts in Redis instead of Postgres",
      body: "Carts are read on every page; Redis hashes hold them with a TTL.",
      at: 10,
      files: ["src/cart/cart-store.ts"],
    });
    ids.cartsFix = await commit("carts-fix", {
      subject: "hotfix: carts in Redis lost their items on expiry",
      body: "Refresh the TTL on every write to the cart.",
      at: 12,
      files: ["src/cart/cart-store.ts"],
      tags: ["fix"],
    });
    ids.wishlist = await commit("wishlist", {
      subject: "Keep wishlists in Redis instead of Postgres",
      body: "Wishlists are read on every product page; a Redis set holds each.",
      at: 20,
      files: ["src/wishlist/wishlist-store.ts"],
    });
    // A fix of the same file, but seven weeks later: not the wishlist change's fix within two weeks.
    ids.wishlistLate = await commit("wishlist-late", {
      subject: "fix: wishlist sets in Redis grew without bound",
      body: "Cap each wishlist at 500 items.",
      at: 69,
      files: ["src/wishlist/wishlist-store.ts"],
      tags: ["fix"],
    });
    // An agent's own decision, marked outdated since, and another whose checks failed.
    ids.rates = await write(dev.token, {
      session_id: "dev-rates",
      kind: "decision",
      prompt: "Move the rate limiter counters from Postgres to Redis",
      thought: "Postgres row locks were the bottleneck; Redis INCR with expiry replaces them.",
      response: "Rate limiter counters now live in Redis.",
    });
    await http(cairn.url, "POST", `/v1/memories/${ids.rates}/outdated`, {
      token: dev.token,
      body: { reason: "The limiter moved to the gateway; Redis counters are gone." },
    });
    ids.queue = await write(dev.token, {
      session_id: "dev-queue",
      prompt: "Move the job queue from Postgres to Redis streams",
      thought: "Postgres SKIP LOCKED polling costs a query per worker per second.",
      response: "Jobs now go through Redis streams.",
      checks: [{ name: "integration tests", status: "failed" }],
    });
    ids.search = await write(dev.token, {
      session_id: "dev-search",
      prompt: "Move the search cache from Postgres to Redis",
      thought: "A materialized view refreshed hourly was stale; Redis keys expire per query.",
      response: "The search cache now lives in Redis and stays.",
    });
    // Another workspace's change on the same subject is not this workspace's history.
    await write(other.token, {
      session_id: "other",
      prompt: "Move checkout sessions from Postgres to Redis",
      thought: "Same idea elsewhere.",
      response: "Done there.",
    });
    return ids;
  })();
  return seeded;
}

interface Group {
  outcome: string;
  count: number;
  changes: Array<{ memory_id: string; by?: string; reason?: string; commit?: string; who: string; when: string; what: string }>;
}

const assess = (token: string, body: object) => http(cairn.url, "POST", "/v1/changes/assessment", { token, body });
const group = (groups: Group[], outcome: string) => groups.find((g) => g.outcome === outcome);
const idsIn = (groups: Group[]) => groups.flatMap((g) => g.changes.map((c) => c.memory_id));

describe("assess_change over REST", () => {
  it("groups the similar changes by how they ended, citing what ended them", async () => {
    const ids = await seed();
    const res = await assess(dev.token, { intent: "Postgres to Redis" });
    expect(res.status).toBe(200);
    expectContractOutput("assess_change", res.body);
    const groups = res.body.outcomes as Group[];
    expect(res.body.confidence).not.toBe("none");
    expect(res.body.similar).toBe(groups.reduce((n, g) => n + g.count, 0));
    // The groups come in their fixed order, each at least one change.
    const order = ["reverted", "fixed", "outdated", "failed_checks", "stood"];
    expect(groups.map((g) => order.indexOf(g.outcome))).toEqual([...groups.map((g) => order.indexOf(g.outcome))].sort((a, b) => a - b));

    expect(group(groups, "reverted")?.changes).toContainEqual(
      expect.objectContaining({
        memory_id: ids.sessions,
        by: ids.revert,
        commit: hash("sessions"),
        who: "Ada Lovelace <ada@example.com>",
        when: day(0),
        what: "Move checkout sessions from Postgres to Redis",
      }),
    );
    expect(group(groups, "fixed")?.changes).toContainEqual(expect.objectContaining({ memory_id: ids.carts, by: ids.cartsFix }));
    expect(group(groups, "outdated")?.changes).toContainEqual(
      expect.objectContaining({ memory_id: ids.rates, who: "dev", reason: "The limiter moved to the gateway; Redis counters are gone." }),
    );
    expect(group(groups, "failed_checks")?.changes).toContainEqual(expect.objectContaining({ memory_id: ids.queue }));
    // The late fix is outside the two weeks: the wishlist change stood, like the search cache.
    const stood = idsIn(group(groups, "stood") ? [group(groups, "stood")!] : []);
    expect(stood).toContain(ids.search);
    expect(idsIn(groups)).not.toContain(ids.revert);
    expect(JSON.stringify(res.body)).not.toContain("Same idea elsewhere");
  });

  it("weighs changes of the intent's kind, not every change near its subject", async () => {
    // Beside two changes of the intended kind (a store moved to Redis), two about the same subject that are not:
    // an index on a checkout table and a page listing checkout sessions. A search at low confidence finds them all.
    const change = (label: string, at: number, subject: string, body: string, file: string) =>
      commit(`kinds-${label}`, { at, subject, body, files: [file] }, kindsHistorian.token);
    const ids = {
      sessions: await change(
        "sessions",
        0,
        "Move checkout sessions from Postgres to Redis",
        "Redis TTLs replace the session sweeper; checkout sessions no longer hit Postgres.",
        "src/checkout/session-store.ts",
      ),
      carts: await change(
        "carts",
        5,
        "Keep shopping carts in Redis instead of Postgres",
        "Carts are read on every page; Redis hashes hold them with a TTL.",
        "src/cart/cart-store.ts",
      ),
      index: await change(
        "index",
        8,
        "Add a Postgres index on checkout orders",
        "The order history page scanned the orders table; an index on (customer_id, created_at) serves it.",
        "db/migrations/0042_orders_index.sql",
      ),
      page: await change(
        "page",
        9,
        "Show active checkout sessions on the admin page",
        "Support asked to see who is mid-checkout; the admin page lists open sessions.",
        "src/admin/sessions-page.tsx",
      ),
    };
    await change("client", 11, "Upgrade the Redis client to v5", "The old client is unmaintained.", "package.json");
    await change(
      "pool",
      12,
      "Raise the Postgres connection pool to 40",
      "Checkout timed out waiting for a connection at peak.",
      "src/db/pool.ts",
    );
    await change("docs", 13, "Document the release process", "Steps for tagging and publishing.", "docs/release.md");
    const intent = "move the session store from Postgres to Redis";
    const found = await http(cairn.url, "POST", "/v1/memories/query", {
      token: kindsDev.token,
      body: { query: intent, limit: 20, min_confidence: "low" },
    });
    expect(found.body.hits.map((h: { memory: { id: string } }) => h.memory.id)).toEqual(expect.arrayContaining([ids.index, ids.page]));

    const res = await assess(kindsDev.token, { intent });
    expect(res.status).toBe(200);
    expectContractOutput("assess_change", res.body);
    // Two weighed, both cited (a group cites three): the changes of the intent's kind, and neither of the others.
    const weighed = idsIn(res.body.outcomes);
    expect(weighed).not.toContain(ids.index);
    expect(weighed).not.toContain(ids.page);
    expect(res.body.similar).toBe(2);
    expect(weighed.sort()).toEqual([ids.sessions, ids.carts].sort());
  });

  it("counts a fix within `within_days` only", async () => {
    const ids = await seed();
    const narrow = await assess(dev.token, { intent: "keep wishlists in Redis instead of Postgres" });
    const wide = await assess(dev.token, { intent: "keep wishlists in Redis instead of Postgres", within_days: 60 });
    const endingOf = (groups: Group[]) => groups.find((g) => g.changes.some((c) => c.memory_id === ids.wishlist))?.outcome;
    expect(endingOf(narrow.body.outcomes)).toBe("stood");
    expect(endingOf(wide.body.outcomes)).toBe("fixed");
    expect(group(wide.body.outcomes, "fixed")?.changes).toContainEqual(
      expect.objectContaining({ memory_id: ids.wishlist, by: ids.wishlistLate }),
    );
  });

  it("says none, with no groups, when nothing similar is stored", async () => {
    await seed();
    const res = await assess(dev.token, { intent: "translate the onboarding emails into Portuguese" });
    expect(res.status).toBe(200);
    expectContractOutput("assess_change", res.body);
    expect(res.body).toEqual({ confidence: "none", similar: 0, outcomes: [] });
    // The same store answers a related intent (the positive beside it).
    const related = await assess(dev.token, { intent: "move checkout sessions from Postgres to Redis" });
    expect(related.body.similar).toBeGreaterThan(0);
  });

  it("refuses an empty intent and a window out of range, with a code", async () => {
    for (const body of [{ intent: "   " }, { intent: "x", within_days: 0 }, { intent: "x", within_days: 91 }, {}]) {
      const res = await assess(dev.token, body);
      expect([res.status, res.body.code]).toEqual([400, "validation_failed"]);
    }
    expect((await assess(dev.token, { intent: "x", within_days: 90 })).status).toBe(200);
  });
});

describe("assess_change over MCP", () => {
  it("answers the same assessment as a tool", async () => {
    const ids = await seed();
    const client = await mcpClient(cairn.url, dev.token);
    try {
      const result = (await client.callTool({
        name: "assess_change",
        arguments: { intent: "move checkout sessions from Postgres to Redis" },
      })) as { structuredContent?: any; isError?: boolean };
      expect(result.isError).toBeFalsy();
      expectContractOutput("assess_change", result.structuredContent);
      expect(group(result.structuredContent.outcomes, "reverted")?.changes).toContainEqual(
        expect.objectContaining({ memory_id: ids.sessions, by: ids.revert }),
      );
      const none = (await client.callTool({
        name: "assess_change",
        arguments: { intent: "translate the onboarding emails into Portuguese" },
      })) as {
        structuredContent?: any;
      };
      expect(none.structuredContent).toEqual({ confidence: "none", similar: 0, outcomes: [] });
    } finally {
      await client.close();
    }
  });
});

describe("assess_change and the embedder", () => {
  // Over an OpenAI-compatible embeddings server, whose requests show what was embedded and how often.
  const ws = uniqueWorkspace("assess-embed");
  const importer = makeToken(ws, "historian");
  const agent = makeToken(ws, "dev");
  let stub: OpenAIStub;
  let served: TestCairn;
  beforeAll(async () => {
    stub = await startOpenAIStub({ dimension: 64 });
    const embedder = await createEmbedder({ kind: "openai", baseUrl: stub.baseUrl, model: "stub-64", apiKey: undefined }, silentLogger);
    served = await startCairn([importer, agent], { embedder });
  });
  afterAll(async () => {
    await served?.close();
    await stub?.close();
  });

  it("embeds the intent once for both searches that read meaning", async () => {
    const store = async (token: string, body: object) => {
      const res = await http(served.url, "POST", "/v1/memories", { token, body });
      if (res.status !== 201) throw new Error(`add_memory answered ${res.status}: ${res.text}`);
      return res.body.id as string;
    };
    const sessions = await store(importer.token, {
      session_id: "git:shop:2026-09-01",
      prompt: "Move checkout sessions from Postgres to Redis",
      thought: "Redis TTLs replace the session sweeper; checkout sessions no longer hit Postgres.",
      response: `Commit ${hash("embed-sessions")} by Ada Lovelace.`,
      occurred_at: day(0),
      source: "import",
      tags: ["git"],
      refs: [hash("embed-sessions"), "src/checkout/session-store.ts"],
    });
    const revert = await store(importer.token, {
      session_id: "git:shop:2026-09-04",
      prompt: 'Revert "Move checkout sessions from Postgres to Redis"',
      thought: `This reverts commit ${hash("embed-sessions")}. Sessions were lost on every Redis restart.`,
      response: `Commit ${hash("embed-revert")} by Ada Lovelace.`,
      occurred_at: day(3),
      source: "import",
      tags: ["git", "revert"],
      refs: [hash("embed-revert"), `reverts:${hash("embed-sessions")}`, "src/checkout/session-store.ts"],
    });
    const carts = await store(agent.token, {
      session_id: "dev-carts",
      prompt: "Move checkout carts from Postgres to Redis",
      thought: "Checkout carts follow checkout sessions to Redis.",
      response: "Checkout carts live in Redis.",
    });
    const docs = await store(agent.token, {
      session_id: "dev-docs",
      prompt: "Document the release process",
      thought: "Nobody remembered the steps.",
      response: "Steps for tagging.",
    });

    const intent = "move checkout sessions from Postgres to Redis";
    const embedded = (from: number) =>
      stub.requests
        .slice(from)
        .filter((r) => r.path === "/v1/embeddings")
        .map((r) => (Array.isArray(r.body.input) ? r.body.input : [r.body.input]) as string[]);
    const before = stub.requests.length;
    const res = await http(served.url, "POST", "/v1/changes/assessment", { token: agent.token, body: { intent } });
    expect(res.status).toBe(200);
    expectContractOutput("assess_change", res.body);
    // The like changes are grouped as before: the reverted one, cited with its revert, and the one that stood.
    expect(group(res.body.outcomes, "reverted")?.changes).toContainEqual(expect.objectContaining({ memory_id: sessions, by: revert }));
    expect(group(res.body.outcomes, "stood")?.changes).toContainEqual(expect.objectContaining({ memory_id: carts }));
    expect(idsIn(res.body.outcomes)).not.toContain(docs);
    // One embeddings request during the call, holding the intent once: the hybrid and the semantic search share it.
    const requests = embedded(before);
    expect(requests.filter((inputs) => inputs.includes(intent))).toHaveLength(1);
    expect(requests.flat().filter((text) => text === intent)).toHaveLength(1);
  });
});
