import { mkdir, mkdtemp, readFile, readdir, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { LexicalIndexes } from "../src/lexical/indexes.js";
import { SNAPSHOT_FORMAT } from "../src/lexical/snapshot.js";
import type { Logger } from "../src/logger.js";
import { DEFAULT_TUNING } from "../src/retrieval/retrieval-tuning.js";
import type { ChromaStore } from "../src/store/chroma-store.js";
import { http, makeToken, startCairn, turn, uniqueWorkspace, type TestCairn } from "./support/harness.js";
import { openStorage } from "../src/storage.js";

/**
 * Lexical index snapshots (lexical/snapshot.ts): a restart loads the index from its snapshot and catches up
 * from the change feed; a snapshot that does not fit or does not read whole is ignored and the index is built
 * from Chroma. Every index below is compared with one built cold from Chroma over the same data.
 */

const alice = makeToken(uniqueWorkspace("snap"), "alice");
const workspace = alice.workspace;
let cairn: TestCairn;
let store: ChromaStore;

interface Line {
  message: string;
  fields: Record<string, unknown> | undefined;
}
function capture(): { log: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const push = (message: string, fields?: Record<string, unknown>) => lines.push({ message, fields });
  return { log: { info: push, warn: push, error: push }, lines };
}

const QUERIES = [
  "password swordfish",
  "zeppelin hangar",
  "flaky login test",
  "cache stampede after deploy",
  "Reasoning for step 7",
  "migration rollback",
];

const open: LexicalIndexes[] = [];
function catalog(options: { dir?: string; log?: Logger } = {}): LexicalIndexes {
  const indexes = new LexicalIndexes(openStorage(store), DEFAULT_TUNING, {
    ...(options.log ? { log: options.log } : {}),
    ...(options.dir ? { snapshots: { dir: options.dir, everyMs: 0 } } : {}),
  });
  open.push(indexes);
  return indexes;
}

/** The answers of a catalog to QUERIES; the catalog is closed after (saving its snapshot when it has a directory). */
async function answers(indexes: LexicalIndexes) {
  const index = await indexes.snapshot(workspace, "turns");
  const out: Record<string, Array<{ id: string; score: number }>> = {};
  for (const q of QUERIES) out[q] = (await index.query(q, 20, [])).map((h) => ({ id: h.id, score: h.score }));
  const size = index.size;
  await indexes.close();
  return { out, size };
}

async function add(body: Record<string, unknown>): Promise<string> {
  const res = await http(cairn.url, "POST", "/v1/memories", { token: alice.token, body });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

async function forget(id: string): Promise<void> {
  const res = await http(cairn.url, "POST", `/v1/memories/${id}/forget`, { token: alice.token, body: { reason: "pasted a secret" } });
  expect(res.status).toBe(200);
}

const snapFile = (dir: string) => join(dir, encodeURIComponent(workspace), "turns.snap");

let dir: string;
let secret: string;
const early: string[] = [];
const late: string[] = [];

beforeAll(async () => {
  cairn = await startCairn([alice]);
  store = cairn.runtime.store;
  for (let n = 1; n <= 30; n++) {
    const thought =
      n % 3 === 0 ? `cache stampede after deploy ${n}` : n % 3 === 1 ? `flaky login test on run ${n}` : `migration rollback rehearsal ${n}`;
    early.push(await add(turn(`snap-${n % 4}`, n, { thought })));
  }
  secret = await add(turn("snap-secret", 99, { thought: "flaky login test: the password is hunter2-swordfish" }));
  // The first life: built from Chroma, saved on close.
  dir = await mkdtemp(join(tmpdir(), "cairn-snap-"));
  const { log, lines } = capture();
  const first = catalog({ dir, log });
  const before = await answers(first);
  expect(before.out["password swordfish"]!.map((h) => h.id)).toContain(secret);
  expect(lines.map((l) => l.message)).toContain("lexical snapshot written");
  expect((await readFile(snapFile(dir), "utf8")).includes("swordfish")).toBe(true);
  // After the snapshot: new writes, and a forget of a record the snapshot holds.
  late.push(await add(turn("snap-late", 1, { thought: "moved the zeppelin into the north hangar" })));
  late.push(await add(turn("snap-late", 2, { thought: "zeppelin hangar doors jammed after the cache stampede" })));
  await forget(secret);
}, 120_000);

afterAll(async () => {
  for (const indexes of open.splice(0)) await indexes.close();
  await cairn?.close();
});

describe("a restart over a lexical snapshot", () => {
  it("answers what a cold rebuild answers, with the writes made after the snapshot, without what was forgotten", async () => {
    const { log, lines } = capture();
    const restarted = await answers(catalog({ dir, log }));
    const cold = await answers(catalog());
    expect(lines.find((l) => l.message === "lexical index loaded from snapshot")?.fields).toMatchObject({ records: 31 });
    expect(restarted).toEqual(cold);
    expect(restarted.size).toBe(32); // 30 + 2 late - 1 forgotten
    // Caught up from the feed: the writes after the snapshot are found...
    expect(
      restarted.out["zeppelin hangar"]!.map((h) => h.id)
        .slice(0, 2)
        .sort(),
    ).toEqual([...late].sort());
    // ...the forgotten one, in the snapshot and found before the restart, is not; its siblings are.
    expect(restarted.out["flaky login test"]!.map((h) => h.id)).toContain(early[0]);
    expect(restarted.out["flaky login test"]!.map((h) => h.id)).not.toContain(secret);
    expect(restarted.out["password swordfish"]!.map((h) => h.id)).not.toContain(secret);

    // Closed, it saved the index it caught up: no forgotten content in the new snapshot, and no temporary file.
    expect(lines.map((l) => l.message)).toContain("lexical snapshot written");
    const text = await readFile(snapFile(dir), "utf8");
    expect(text).toContain(early[0]);
    expect(text).toContain("zeppelin");
    expect(text).not.toContain(secret);
    expect(text).not.toContain("swordfish");
    expect(await readdir(join(dir, encodeURIComponent(workspace)))).toEqual(["turns.snap"]);
  });

  it("ignores a corrupt or cut-short snapshot with a log line, and answers as a cold rebuild", async () => {
    const whole = await readFile(snapFile(dir));
    const cold = await answers(catalog());
    expect(cold.out["zeppelin hangar"]!.map((h) => h.id)).toContain(late[0]);

    // The intact file loads.
    const intact = capture();
    expect(await answers(catalog({ dir, log: intact.log }))).toEqual(cold);
    expect(intact.lines.map((l) => l.message)).toContain("lexical index loaded from snapshot");

    const flipped = Buffer.from(whole);
    const at = flipped.indexOf("zeppelin");
    expect(at).toBeGreaterThan(0);
    flipped[at] = "Z".charCodeAt(0); // still valid JSON: only the checksum tells
    const halves = whole.subarray(0, Math.floor(whole.length / 2));
    for (const [bytes, reason] of [
      [flipped, /checksum mismatch/],
      [halves, /malformed/], // cut in the middle of a line
      [whole.subarray(0, whole.lastIndexOf("\n", whole.length - 2) + 1), /cut short/], // the trailer alone missing
    ] as const) {
      await writeFile(snapFile(dir), bytes);
      const { log, lines } = capture();
      expect(await answers(catalog({ dir, log }))).toEqual(cold);
      const ignored = lines.find((l) => l.message === "lexical snapshot ignored; index built from Chroma");
      expect(ignored?.fields?.reason).toMatch(reason);
      expect(lines.map((l) => l.message)).not.toContain("lexical index loaded from snapshot");
    }
    await writeFile(snapFile(dir), whole);
  });

  it("ignores a snapshot of another format, text analysis, collection or feed", async () => {
    const whole = await readFile(snapFile(dir), "utf8");
    const newline = whole.indexOf("\n");
    const header = JSON.parse(whole.slice(0, newline));
    const cold = await answers(catalog());
    for (const [change, reason] of [
      [{ format: SNAPSHOT_FORMAT + 1 }, "format"],
      [{ analysis: header.analysis + 1 }, "text analysis"],
      [{ collectionId: "another" }, "another Chroma collection"],
      [{ embedding: { model: "other-model", dimension: 3 } }, "embedding"],
      [{ position: header.position + 1000 }, "beyond the feed"],
    ] as const) {
      await writeFile(snapFile(dir), JSON.stringify({ ...header, ...change }) + whole.slice(newline));
      const { log, lines } = capture();
      expect(await answers(catalog({ dir, log }))).toEqual(cold);
      const ignored = lines.find((l) => l.message === "lexical snapshot ignored; index built from Chroma");
      expect(ignored?.fields?.reason).toContain(reason);
    }
    // The same file with its own header loads.
    await writeFile(snapFile(dir), whole);
    const { log, lines } = capture();
    expect(await answers(catalog({ dir, log }))).toEqual(cold);
    expect(lines.map((l) => l.message)).toContain("lexical index loaded from snapshot");
  });
});

describe("the background pass", () => {
  it("rewrites a snapshot that holds a memory forgotten since, and leaves an unchanged one be", async () => {
    const own = await mkdtemp(join(tmpdir(), "cairn-snap-pass-"));
    const doomed = await add(turn("snap-pass", 1, { thought: "the staging password is tangerine-gazebo" }));
    const { log, lines } = capture();
    const indexes = new LexicalIndexes(openStorage(store), DEFAULT_TUNING, {
      log,
      snapshots: { dir: own, everyMs: 0, minChanges: 1_000_000, maxAgeMs: 3_600_000 },
    });
    open.push(indexes);
    const index = await indexes.snapshot(workspace, "turns");
    expect((await index.query("tangerine gazebo", 5, [])).map((h) => h.id)).toContain(doomed);
    // Temporary files of writers killed mid-write: the one an hour old goes with the next write, a fresh one stays.
    await mkdir(join(own, encodeURIComponent(workspace)), { recursive: true });
    const stale = `${snapFile(own)}.1-dead.tmp`;
    const fresh = `${snapFile(own)}.2-live.tmp`;
    await writeFile(stale, "half");
    await writeFile(fresh, "half");
    await utimes(stale, new Date(Date.now() - 2 * 3_600_000), new Date(Date.now() - 2 * 3_600_000));
    await indexes.persist("due"); // never written: written now
    expect(await readFile(snapFile(own), "utf8")).toContain("tangerine");
    expect((await readdir(join(own, encodeURIComponent(workspace)))).sort()).toEqual(["turns.snap", "turns.snap.2-live.tmp"]);
    const written = () => lines.filter((l) => l.message === "lexical snapshot written").length;
    expect(written()).toBe(1);
    await indexes.persist("due"); // nothing changed: not written again
    expect(written()).toBe(1);
    const kept = await add(turn("snap-pass", 2, { thought: "an ordinary note" }));
    await indexes.persist("due"); // one change, far below minChanges: not yet
    expect(written()).toBe(1);
    await forget(doomed);
    await indexes.persist("due"); // a record left: written at once, without it
    expect(written()).toBe(2);
    const text = await readFile(snapFile(own), "utf8");
    expect(text).not.toContain("tangerine");
    expect(text).toContain(kept);
    expect((await (await indexes.snapshot(workspace, "turns")).query("tangerine gazebo", 5, [])).map((h) => h.id)).not.toContain(doomed);
  });

  it("turns records into the snapshot's lines on the ranking thread, not on the thread that answers requests", async () => {
    const own = await mkdtemp(join(tmpdir(), "cairn-snap-thread-"));
    const indexes = new LexicalIndexes(openStorage(store), DEFAULT_TUNING, { snapshots: { dir: own, everyMs: 0 } });
    open.push(indexes);
    const index = await indexes.snapshot(workspace, "turns");
    // What this thread stringifies while the snapshot is written; the ranking thread has a JSON of its own.
    const stringify = vi.spyOn(JSON, "stringify");
    let calls: unknown[][];
    try {
      await indexes.persist("due");
    } finally {
      calls = [...stringify.mock.calls];
      stringify.mockRestore();
    }
    const lines = (await readFile(snapFile(own), "utf8")).trimEnd().split("\n");
    const records = lines.slice(1, -1).map((line) => JSON.parse(line) as [string, ...unknown[]]);
    // Every record is in the file, as its line...
    expect(records.length).toBe(index.size);
    expect(records.map((r) => r[0])).toEqual(expect.arrayContaining(early));
    // ...and none was made here: only the header and the trailer were.
    const recordIds = new Set(records.map((r) => r[0]));
    const madeHere = calls.filter(([value]) => Array.isArray(value) && recordIds.has(value[0] as string));
    expect(madeHere).toEqual([]);
    expect(calls.some(([value]) => (value as { end?: boolean } | undefined)?.end === true)).toBe(true);
  });

  it("leaves a snapshot it has just written be for a while, however much changed, unless a memory left it", async () => {
    // A clock that moves on a second at every reading: by it, every write takes some seconds.
    let clock = Date.now();
    const passes = async (restAfterWrite: number) => {
      const own = await mkdtemp(join(tmpdir(), "cairn-snap-rest-"));
      const { log, lines } = capture();
      const indexes = new LexicalIndexes(openStorage(store), DEFAULT_TUNING, {
        log,
        now: () => (clock += 1000),
        snapshots: { dir: own, everyMs: 0, minChanges: 1, maxAgeMs: 3_600_000, restAfterWrite },
      });
      open.push(indexes);
      const written = () => lines.filter((l) => l.message === "lexical snapshot written").length;
      await indexes.snapshot(workspace, "turns");
      await indexes.persist("due"); // never written: written now
      const first = written();
      await add(turn(`snap-rest-${restAfterWrite}`, 1, { thought: "a change past minChanges" }));
      await indexes.persist("due");
      const afterChange = written();
      const doomed = await add(turn(`snap-rest-${restAfterWrite}`, 2, { thought: "the vault code is marmalade-orbit" }));
      await indexes.persist("due");
      await forget(doomed);
      await indexes.persist("due");
      const afterForget = written();
      await indexes.close();
      return { first, afterChange, afterForget, text: await readFile(snapFile(own), "utf8") };
    };
    // Resting for a thousand times as long as the write took: a change past minChanges waits...
    const resting = await passes(1000);
    expect(resting).toMatchObject({ first: 1, afterChange: 1 });
    // ...but a memory that left is written out at once.
    expect(resting.afterForget).toBe(2);
    expect(resting.text).not.toContain("marmalade");
    // Not resting, the same change is written at the next pass.
    const eager = await passes(0);
    expect(eager).toMatchObject({ first: 1, afterChange: 2 });
    expect(eager.afterForget).toBeGreaterThan(eager.afterChange);
    expect(eager.text).not.toContain("marmalade");
  });
});

describe("memory-core restarted with an index directory", () => {
  it("answers hybrid queries as a cold start does, and finds writes made while it was down", async () => {
    const bob = makeToken(uniqueWorkspace("snap-stack"), "bob");
    const indexDir = await mkdtemp(join(tmpdir(), "cairn-snap-stack-"));
    const ask = async (c: TestCairn, query: string) => {
      const res = await http(c.url, "POST", "/v1/memories/query", { token: bob.token, body: { query } });
      expect(res.status).toBe(200);
      return (res.body.hits as Array<{ memory: { id: string }; score: number }>).map((h) => ({ id: h.memory.id, score: h.score }));
    };
    const first = await startCairn([bob], { indexDir });
    for (let n = 1; n <= 12; n++) {
      const res = await http(first.url, "POST", "/v1/memories", {
        token: bob.token,
        body: turn(`stack-${n % 2}`, n, { thought: n === 5 ? "the nightly CSV export flushes on every row" : `tuning step ${n}` }),
      });
      expect(res.status).toBe(201);
    }
    await first.close(); // saves the snapshot
    const files = await readdir(join(indexDir, encodeURIComponent(bob.workspace)));
    expect(files.sort()).toEqual(["summaries.snap", "turns.snap"]);
    // Written while no indexed memory-core runs.
    const other = await startCairn([bob]);
    const late = await http(other.url, "POST", "/v1/memories", {
      token: bob.token,
      body: turn("stack-late", 1, { thought: "why the nightly CSV export was slow: unbuffered writes" }),
    });
    expect(late.status).toBe(201);
    await other.close();

    const { log, lines } = capture();
    const restarted = await startCairn([bob], { indexDir, runtimeLog: log });
    const cold = await startCairn([bob]);
    try {
      for (const query of ["why was the nightly CSV export slow", "tuning step"]) {
        const warm = await ask(restarted, query);
        expect(warm.length).toBeGreaterThan(0);
        expect(warm).toEqual(await ask(cold, query));
      }
      expect((await ask(restarted, "nightly CSV export unbuffered")).map((h) => h.id)).toContain(late.body.id);
      const loaded = lines.filter((l) => l.message === "lexical index loaded from snapshot").map((l) => l.fields?.collection);
      expect(loaded.sort()).toEqual(["summaries", "turns"]);
    } finally {
      await restarted.close();
      await cold.close();
    }
  }, 120_000);
});
