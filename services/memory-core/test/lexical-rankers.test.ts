import { afterEach, describe, expect, it } from "vitest";
import type { Condition } from "../src/records/filters.js";
import { LexicalIndexes } from "../src/lexical/indexes.js";
import { RankingHost, RankingThreadStopped } from "../src/lexical/ranking-host.js";
import { Ranking, type RankedDocument } from "../src/lexical/ranking.js";
import { DEFAULT_TUNING } from "../src/retrieval/retrieval-tuning.js";
import { http, makeToken, turn, uniqueWorkspace, useCairn } from "./support/harness.js";
import { openStorage } from "../src/storage.js";

const options = { boosts: DEFAULT_TUNING.turnFields, bm25: DEFAULT_TUNING.bm25, neighbourShare: DEFAULT_TUNING.neighbourShare };

function document(i: number, session: string, thought: string): RankedDocument {
  return {
    id: `r${i}`,
    fields: { agent: "alice", prompt: `step ${i}`, thought, response: "done", labels: "" },
    facts: { agent: "alice", session_id: session, valid_from: i, valid_until: 8.64e15 },
  };
}

const rankers: RankingHost[] = [];
const started = () => {
  const r = new RankingHost();
  rankers.push(r);
  return r;
};
afterEach(async () => {
  for (const r of rankers.splice(0)) await r.close();
});

describe("the lexical ranking thread", () => {
  it("answers as the same ranking in this thread would, after every change made before the query", async () => {
    const ranker = started().create(options);
    const local = new Ranking(options);
    const changes: Array<(target: { put(d: RankedDocument): void; remove(id: string): void }) => void> = [];
    for (let i = 0; i < 60; i++) {
      const thought = i % 3 === 0 ? `cache stampede after deploy ${i}` : i % 3 === 1 ? `flaky login test ${i}` : `cache warmup job ${i}`;
      changes.push((t) => t.put(document(i, `s${i % 7}`, thought)));
    }
    changes.push((t) => t.remove("r3"));
    changes.push((t) => t.put(document(6, "s6", "flaky login test, no cache any more")));
    for (const change of changes) {
      change(ranker);
      change(local);
    }
    const valid: Condition[] = [{ field: "valid_until", op: "gt", value: Date.now() }];
    for (const query of [
      { text: "cache stampede deploy", limit: 10, conditions: valid },
      { text: "flaky login", limit: 5, conditions: [] },
      { text: "cache", limit: 8, conditions: [], among: ["r0", "r2", "r5", "r6", "r9"] },
    ]) {
      const remote = await ranker.query(query);
      expect(remote.length).toBeGreaterThan(0);
      expect(remote).toEqual(local.query(query));
    }
    const stampede = (await ranker.query({ text: "stampede", limit: 30, conditions: [] })).map((h) => h.id);
    expect(stampede).toContain("r0");
    expect(stampede).not.toContain("r3"); // removed
    expect(stampede).not.toContain("r6"); // replaced by a version without the word
  });

  it("fails the queries of a stopped thread, and the next ranking starts another", async () => {
    const r = started();
    const before = r.create(options);
    before.put(document(1, "s1", "cache stampede"));
    expect((await before.query({ text: "stampede", limit: 5, conditions: [] })).map((h) => h.id)).toEqual(["r1"]);
    await r.close();
    expect(before.alive).toBe(false);
    await expect(before.query({ text: "stampede", limit: 5, conditions: [] })).rejects.toBeInstanceOf(RankingThreadStopped);
    const after = r.create(options);
    expect(after.alive).toBe(true);
    after.put(document(2, "s1", "cache stampede again"));
    expect((await after.query({ text: "stampede", limit: 5, conditions: [] })).map((h) => h.id)).toEqual(["r2"]);
  });
});

describe("an index whose ranking thread stopped", () => {
  const alice = makeToken(uniqueWorkspace("rankers"), "alice");
  const cairn = useCairn([alice]);

  it("is built again from Chroma on its next read, and finds what it found before", async () => {
    // Two sessions, so that turn context does not bring one turn along with the other.
    const written: string[] = [];
    for (const [i, thought] of ["The stampede came from a cold cache after deploy.", "Login test is flaky under load."].entries()) {
      const res = await http(cairn.url, "POST", "/v1/memories", { token: alice.token, body: turn(`rankers-${i}`, 1, { thought }) });
      expect(res.status).toBe(201);
      written.push(res.body.id);
    }
    const store = cairn.runtime.store;
    const r = started();
    const catalog = new LexicalIndexes(openStorage(store), DEFAULT_TUNING, { rankers: r });
    const search = async (text: string) =>
      (await catalog.read(alice.workspace, "turns", (index) => index.query(text, 5, []))).value.map((h) => h.id);
    const found = await search("stampede");
    expect(found).toEqual([written[0]]);
    expect(await search("quicksilver")).toEqual([]);
    await r.close();
    expect(await search("stampede")).toEqual(found);
    expect(await search("quicksilver")).toEqual([]);
  });
});
