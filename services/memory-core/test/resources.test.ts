import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import yaml from "js-yaml";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { createLogger } from "../src/logger.js";
import { MemoryWatch } from "../src/memory-watch.js";
import { startStack, type Stack } from "../src/stack.js";
import { chromaUrl, http, makeToken, sharedEmbedder, startCairn, turn, uniqueWorkspace, type TestToken } from "./support/harness.js";

/** One sample of a Prometheus text exposition: `name{labels} value`. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  for (const line of text.split("\n")) {
    const match = /^([a-z_]+)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const have = match[2] ? match[2].split(",") : [];
    if (wanted.every((label) => have.includes(label)) && have.length === wanted.length) return Number(match[3]);
  }
  return undefined;
}

const MB = 1024 * 1024;

describe("resource gauges in /metrics", () => {
  it("give the resident size, the heaps, and each lexical index's documents and terms", async () => {
    const workspace = uniqueWorkspace("metrics");
    const alice = makeToken(workspace, "alice");
    const admin = makeToken(workspace, "ops", "admin");
    const cairn = await startCairn([alice, admin]);
    try {
      for (let n = 1; n <= 3; n++) {
        const added = await http(cairn.url, "POST", "/v1/memories", { token: alice.token, body: turn("gauges", n) });
        expect(added.status).toBe(201);
      }
      // A query catches the index up with the three writes.
      const found = await http(cairn.url, "POST", "/v1/memories/query", { token: alice.token, body: { query: "weighed the options" } });
      expect(found.status).toBe(200);
      expect(found.body.hits.length).toBeGreaterThan(0);

      const scraped = await http(cairn.url, "GET", "/metrics", { token: admin.token });
      expect(scraped.status).toBe(200);
      const text = scraped.text;
      const turns = { workspace, collection: "turns" };
      const summaries = { workspace, collection: "summaries" };
      expect(sample(text, "cairn_lexical_index_documents", turns)).toBe(3);
      expect(sample(text, "cairn_lexical_index_documents", summaries)).toBe(0);
      expect(sample(text, "cairn_lexical_index_terms", turns)).toBeGreaterThan(5);
      expect(sample(text, "cairn_lexical_index_terms", summaries)).toBe(0);
      expect(sample(text, "cairn_memory_resident_bytes")).toBeGreaterThan(10 * MB);
      expect(sample(text, "cairn_memory_heap_used_bytes")).toBeGreaterThan(MB);
      expect(sample(text, "cairn_lexical_thread_heap_used_bytes")).toBeGreaterThan(0);
      // No limit was configured: the limit gauge has no sample rather than a made-up one.
      expect(text).toContain("# TYPE cairn_memory_limit_bytes gauge");
      expect(text).not.toMatch(/^cairn_memory_limit_bytes\{/m);
      // Labels are the tokens file's workspaces only: the index series name no other workspace.
      const workspaces = new Set([...text.matchAll(/^cairn_lexical_index_\w+\{workspace="([^"]*)"/gm)].map((m) => m[1]));
      expect(workspaces).toEqual(new Set([workspace]));
    } finally {
      await cairn.close();
    }
  });
});

describe("/metrics for a workspace's admin", () => {
  it("shows the process's series and its own workspace's, and never another workspace's name or sizes", async () => {
    const [north, south] = [uniqueWorkspace("north"), uniqueWorkspace("south")];
    const tokens = {
      north: { agent: makeToken(north, "alice"), admin: makeToken(north, "ops", "admin") },
      south: { agent: makeToken(south, "bob"), admin: makeToken(south, "ops", "admin") },
    };
    const cairn = await startCairn([tokens.north.agent, tokens.north.admin, tokens.south.agent, tokens.south.admin]);
    try {
      const written = { north: 2, south: 3 };
      for (const side of ["north", "south"] as const) {
        for (let n = 1; n <= written[side]; n++) {
          const added = await http(cairn.url, "POST", "/v1/memories", { token: tokens[side].agent.token, body: turn(side, n) });
          expect(added.status).toBe(201);
        }
        const found = await http(cairn.url, "POST", "/v1/memories/query", {
          token: tokens[side].agent.token,
          body: { query: "weighed the options" },
        });
        expect(found.body.hits.length).toBeGreaterThan(0);
      }
      for (const [side, other] of [
        ["north", "south"],
        ["south", "north"],
      ] as const) {
        const scraped = await http(cairn.url, "GET", "/metrics", { token: tokens[side].admin.token });
        expect(scraped.status).toBe(200);
        const own = side === "north" ? north : south;
        const foreign = other === "north" ? north : south;
        expect(sample(scraped.text, "cairn_lexical_index_documents", { workspace: own, collection: "turns" })).toBe(written[side]);
        expect(sample(scraped.text, "cairn_memory_resident_bytes")).toBeGreaterThan(10 * MB);
        expect(sample(scraped.text, "cairn_http_requests_total", { route: "/v1/memories", status: "201" })).toBe(
          written.north + written.south,
        );
        expect(scraped.text).toContain("# TYPE cairn_lexical_index_documents gauge");
        expect(scraped.text).not.toContain(foreign);
        const named = new Set([...scraped.text.matchAll(/workspace="([^"]*)"/g)].map((m) => m[1]));
        expect(named).toEqual(new Set([own]));
      }
    } finally {
      await cairn.close();
    }
  });
});

describe("the memory limit", () => {
  const running: Stack[] = [];
  afterEach(async () => {
    for (const stack of running.splice(0)) await stack.stop();
  });

  /** memory-core started through its config, as `npm start` does, against the shared Chroma; its log kept. */
  async function startWithLimit(limitMb: string): Promise<{ stack: Stack; lines: Array<Record<string, unknown>>; admin: TestToken }> {
    const dataDir = await mkdtemp(join(tmpdir(), "cairn-limit-"));
    const workspace = uniqueWorkspace("limit");
    const admin = makeToken(workspace, "ops", "admin");
    await writeFile(join(dataDir, "tokens.yaml"), yaml.dump({ tokens: [admin, makeToken(workspace, "alice")] }));
    // An empty cgroup root: only the variable can set the limit here.
    const noCgroup = await mkdtemp(join(tmpdir(), "cairn-cgroup-"));
    const config = loadConfig(
      {
        CAIRN_DATA_DIR: dataDir,
        CAIRN_PORT: "0",
        CAIRN_CHROMA_URL: chromaUrl().toString(),
        CAIRN_TOKENS_FILE: join(dataDir, "tokens.yaml"),
        CAIRN_MEMORY_LIMIT_MB: limitMb,
      },
      dataDir,
      noCgroup,
    );
    const lines: Array<Record<string, unknown>> = [];
    const log = createLogger("memory-core", (line) => lines.push(JSON.parse(line) as Record<string, unknown>));
    const stack = await startStack({ config, log, embedder: await sharedEmbedder() });
    running.push(stack);
    return { stack, lines, admin };
  }

  const limitWarnings = (lines: Array<Record<string, unknown>>) =>
    lines.filter((l) => l.level === "warn" && String(l.message).includes("of the memory limit"));

  it("set far below the resident size, is warned of in the log once, at its highest share, and shows in /metrics", async () => {
    const { stack, lines, admin } = await startWithLimit("1");
    const warnings = limitWarnings(lines);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({
      message: "resident size is above 90% of the memory limit",
      limit_bytes: MB,
      limit_source: "CAIRN_MEMORY_LIMIT_MB",
    });
    expect(warnings[0]!.resident_bytes as number).toBeGreaterThan(MB);
    const scraped = await http(stack.url, "GET", "/metrics", { token: admin.token });
    expect(sample(scraped.text, "cairn_memory_limit_bytes", { source: "CAIRN_MEMORY_LIMIT_MB" })).toBe(MB);
  });

  it("set far above the resident size, is watched without a warning", async () => {
    const { stack, lines, admin } = await startWithLimit(String(1024 * 1024)); // 1 TiB
    expect(lines.some((l) => l.message === "watching resident size against the memory limit" && l.limit_bytes === 1024 * 1024 * MB)).toBe(
      true,
    );
    expect(limitWarnings(lines)).toEqual([]);
    const scraped = await http(stack.url, "GET", "/metrics", { token: admin.token });
    const limit = sample(scraped.text, "cairn_memory_limit_bytes", { source: "CAIRN_MEMORY_LIMIT_MB" })!;
    expect(limit).toBe(1024 * 1024 * MB);
    expect(sample(scraped.text, "cairn_memory_resident_bytes")).toBeLessThan(limit * 0.8);
  });
});

describe("MemoryWatch", () => {
  it("warns once per share on the way up, and again only after falling back", () => {
    const lines: Array<Record<string, unknown>> = [];
    const log = createLogger("test", (line) => lines.push(JSON.parse(line) as Record<string, unknown>));
    let resident = 0;
    const watch = new MemoryWatch({ bytes: 1000, source: "test" }, log, () => resident);
    const levels = (from: number) => lines.slice(from).map((l) => `${String(l.level)} ${String(l.message)}`);
    const at = (bytes: number) => {
      const before = lines.length;
      resident = bytes;
      watch.check();
      return levels(before);
    };
    const above = (share: number) => [`warn resident size is above ${share}% of the memory limit`];
    expect(at(500)).toEqual([]);
    expect(at(820)).toEqual(above(80));
    expect(at(850)).toEqual([]);
    expect(at(930)).toEqual(above(90));
    expect(at(990)).toEqual([]);
    expect(at(860)).toEqual([]); // not yet 5 points below 90%
    expect(at(840)).toEqual(["info resident size is back below 85% of the memory limit"]);
    expect(at(910)).toEqual(above(90));
    expect(at(500)).toEqual(["info resident size is back below 85% of the memory limit"]);
    expect(at(810)).toEqual(above(80));
    expect(at(1200)).toEqual(above(90));
  });
});
