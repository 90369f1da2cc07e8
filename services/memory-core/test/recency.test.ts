import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeCursor, encodeCursor, newestFirst, type Position } from "../src/domain/cursor.js";
import { RecencyScanner } from "../src/domain/recency.js";
import type { Metadata } from "../src/store/chroma-store.js";
import { http, makeToken, startCairn, turn, uniqueWorkspace, type TestCairn } from "./support/harness.js";

const workspace = uniqueWorkspace("recent");
const alice = makeToken(workspace, "alice");
const bob = makeToken(workspace, "bob");
let cairn: TestCairn;

beforeAll(async () => {
  cairn = await startCairn([alice, bob]);
});
afterAll(() => cairn.close());

async function pageAll(token: string, query: string, limit: number) {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res: { status: number; body: { turns: Array<{ id: string }>; next_cursor: string | null } } = await http(
      cairn.url,
      "GET",
      `/v1/memories/recent?limit=${limit}${query}${cursor ? `&before=${cursor}` : ""}`,
      { token },
    );
    expect(res.status).toBe(200);
    expect(res.body.turns.length).toBeLessThanOrEqual(limit);
    ids.push(...res.body.turns.map((t) => t.id));
    cursor = res.body.next_cursor;
    pages++;
  } while (cursor);
  return { ids, pages };
}

describe("query_recent_turns order and paging", () => {
  it("pages an agent's turns across sessions newest first with no gaps or repeats", async () => {
    const written: Array<Position & { agent: string; session: string }> = [];
    for (let round = 0; round < 6; round++) {
      // Concurrent writes land in the same millisecond now and then: ties must page cleanly too.
      const batch = await Promise.all(
        ["s-a", "s-b", "s-c"].flatMap((session) =>
          [alice, bob].map(async (who) => {
            const res = await http(cairn.url, "POST", "/v1/memories", { token: who.token, body: turn(session, round) });
            expect(res.status).toBe(201);
            return { at: Date.parse(res.body.recorded_at), id: res.body.id as string, agent: who.agent, session };
          }),
        ),
      );
      written.push(...batch);
    }
    const expected = written.filter((w) => w.agent === "alice").sort(newestFirst).map((w) => w.id);
    expect(expected).toHaveLength(18);

    const paged = await pageAll(alice.token, "", 4);
    expect(paged.ids).toEqual(expected);
    expect(paged.pages).toBe(5);

    const oneSession = await pageAll(alice.token, "&session_id=s-b", 4);
    expect(oneSession.ids).toEqual(written.filter((w) => w.agent === "alice" && w.session === "s-b").sort(newestFirst).map((w) => w.id));

    const bobs = await pageAll(alice.token, "&agent=bob", 7);
    expect(bobs.ids).toEqual(written.filter((w) => w.agent === "bob").sort(newestFirst).map((w) => w.id));
  });

  it("answers a cursor it did not issue with validation_failed, beside one it did", async () => {
    const page = await http(cairn.url, "GET", "/v1/memories/recent?limit=1&agent=bob", { token: alice.token });
    expect(page.body.next_cursor).toEqual(expect.any(String));
    const ok = await http(cairn.url, "GET", `/v1/memories/recent?limit=1&agent=bob&before=${page.body.next_cursor}`, { token: alice.token });
    expect(ok.status).toBe(200);
    const forged = await http(cairn.url, "GET", "/v1/memories/recent?before=bm90LWEtY3Vyc29y", { token: alice.token });
    expect(forged.status).toBe(400);
    expect(forged.body.errors).toEqual([{ path: "before", message: "is not a cursor this server issued" }]);
  });
});

describe("the recency scanner over real Chroma", () => {
  const NOW = Date.parse("2026-06-01T00:00:00Z");
  const YEAR = 365 * 24 * 3_600_000;
  let expected: string[];

  beforeAll(async () => {
    const collection = await cairn.runtime.store.collection(workspace, "turns");
    const stamps: number[] = [];
    // A burst of 600 in one second (more than one window holds), ties, and a sparse tail years back.
    for (let i = 0; i < 600; i++) stamps.push(NOW - 1000 + Math.floor(i / 3));
    for (let i = 0; i < 20; i++) stamps.push(NOW - 3 * YEAR - i * 7 * 24 * 3_600_000);
    stamps.push(NOW - 9 * YEAR, NOW + 5_000 /* a replica whose clock runs ahead */);
    const records = stamps.map((at, i) => ({
      id: `scan-${String(i).padStart(4, "0")}`,
      embedding: Array.from({ length: 512 }, (_, d) => (d === i % 512 ? 1 : 0)),
      document: `record ${i}`,
      metadata: { agent: "scanner", session_id: "scan", recorded_at: at, prompt_chars: 0, thought_chars: 0 } as Metadata,
    }));
    for (let i = 0; i < records.length; i += 200) await collection.add(records.slice(i, i + 200));
    expected = records
      .map((r) => ({ at: r.metadata.recorded_at as number, id: r.id }))
      .sort(newestFirst)
      .map((p) => p.id);
  });

  for (const limit of [1, 7, 100]) {
    it(`pages ${limit} at a time through bursts, ties and sparse years without gaps or repeats`, async () => {
      const scanner = new RecencyScanner(() => NOW);
      const collection = await cairn.runtime.store.collection(workspace, "turns");
      const seen: string[] = [];
      let before: Position | undefined;
      for (;;) {
        const page = await scanner.newestPage(collection, [{ agent: "scanner" }], limit, before, "scan");
        expect(page.records.length).toBeLessThanOrEqual(limit);
        seen.push(...page.records.map((r) => r.id));
        if (!page.more) break;
        const last = page.records.at(-1)!;
        // Through the opaque cursor, as a client would carry it.
        before = decodeCursor(encodeCursor({ at: last.metadata.recorded_at as number, id: last.id }), "before");
        if (limit === 1 && seen.length >= 40) break;
      }
      expect(seen).toEqual(expected.slice(0, seen.length));
      if (limit !== 1) expect(seen).toHaveLength(expected.length);
    });
  }
});
