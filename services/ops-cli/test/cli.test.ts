import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ChromaClient } from "chromadb";
import yaml from "js-yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOpenAIStub } from "../../../testing/openai-stub.js";
import { startEmbeddedChroma, type EmbeddedChroma } from "../../memory-core/src/embedded/chroma-server.js";
import { createEmbedder } from "../../memory-core/src/embeddings/create.js";
import { silentLogger } from "../../memory-core/src/logger.js";
import {
  chromaUrl,
  http,
  makeToken,
  startCairn,
  turn,
  uniqueWorkspace,
  type TestCairn,
  type TestToken,
} from "../../memory-core/test/support/harness.js";
import { ChromaFaults } from "../../memory-core/test/support/chroma-faults.js";
import { Checksums } from "../src/backup-format.js";
import { cairnCli } from "./support/run-cli.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cairn-ops-cli-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function tokensFile(name: string, tokens: TestToken[]): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, yaml.dump({ tokens }));
  return file;
}

const add = async (cairn: TestCairn, token: TestToken, body: Record<string, unknown>) => {
  const res = await http(cairn.url, "POST", "/v1/memories", { token: token.token, body });
  expect(res.status).toBe(201);
  return res.body.id as string;
};

/** Everything a workspace holds as export_records lists it; the slot numbers and write ids are the store's own. */
async function snapshot(cairn: TestCairn, admin: TestToken) {
  const out: Record<string, unknown[]> = {};
  for (const collection of ["turns", "summaries", "tombstones"]) {
    const records: Array<{ id: string; metadata: Record<string, unknown> }> = [];
    let after: string | null = null;
    do {
      const page: { body: { records: typeof records; next_cursor: string | null } } = await http(
        cairn.url,
        "GET",
        `/v1/admin/records?collection=${collection}&limit=500${after ? `&after=${after}` : ""}`,
        { token: admin.token },
      );
      records.push(...page.body.records);
      after = page.body.next_cursor;
    } while (after);
    out[collection] = records
      .map(({ metadata: { seq: _seq, write_id: _writeId, ...metadata }, ...rest }) => ({ ...rest, metadata }))
      .sort((a, b) => (a.id < b.id ? -1 : 1));
  }
  return out;
}

/**
 * Equal records, and vectors equal to float32 precision: Chroma 1.0 writes vectors to JSON with 7-8
 * significant digits, so a vector read out and stored again may move by one unit in its last place.
 */
function expectSameRecords(actual: Record<string, unknown[]>, expected: Record<string, unknown[]>) {
  const split = (snap: Record<string, unknown[]>) => {
    const vectors = new Map<string, number[]>();
    const records = Object.fromEntries(
      Object.entries(snap).map(([collection, list]) => [
        collection,
        (list as Array<{ id: string; embedding?: number[] }>).map(({ embedding, ...rest }) => {
          if (embedding) vectors.set(`${collection}/${rest.id}`, embedding);
          return rest;
        }),
      ]),
    );
    return { records, vectors };
  };
  const a = split(actual);
  const e = split(expected);
  expect(a.records).toEqual(e.records);
  expect([...a.vectors.keys()].sort()).toEqual([...e.vectors.keys()].sort());
  expect(e.vectors.size).toBeGreaterThan(0);
  for (const [key, vector] of e.vectors) {
    const other = a.vectors.get(key)!;
    expect(other).toHaveLength(vector.length);
    const drift = Math.max(...vector.map((v, i) => Math.abs(v - other[i]!)));
    expect(drift).toBeLessThan(1e-6);
  }
}

const summary = (sessionId: string, title: string, agents: string[]) => ({
  session_id: sessionId,
  agents,
  title,
  summary: `${title}: what was decided and why.`,
  decisions: [{ decision: title, evidence: "measured" }],
  open_questions: [],
  next_steps: ["ship it"],
  turn_count: 2,
  first_turn_at: "2026-11-01T10:00:00.000Z",
  last_turn_at: "2026-11-01T11:00:00.000Z",
  method: "extractive" as const,
  generated_at: "2026-11-01T12:00:00.000Z",
});

describe("cairn backup and restore", () => {
  const alpha = uniqueWorkspace("alpha");
  const beta = uniqueWorkspace("beta");
  const alphaDev = makeToken(alpha, "dev");
  const alphaReviewer = makeToken(alpha, "reviewer");
  const alphaOps = makeToken(alpha, "ops", "admin");
  const betaDev = makeToken(beta, "dev");
  const betaOps = makeToken(beta, "ops", "admin");
  const tokens = [alphaDev, alphaReviewer, alphaOps, betaDev, betaOps];
  let source: TestCairn;
  let freshChroma: EmbeddedChroma;
  let fresh: TestCairn;
  let forgotten: string;

  beforeAll(async () => {
    source = await startCairn(tokens);
    for (let n = 1; n <= 12; n++) {
      await add(
        source,
        n % 3 === 0 ? alphaReviewer : alphaDev,
        turn(`alpha-${n % 4}`, n, { prompt: `Garnet ledger reconciliation, part ${n}`, tags: [`part-${n}`] }),
      );
    }
    forgotten = await add(source, alphaDev, turn("alpha-0", 99, { prompt: "the staging password is swordfish" }));
    await http(source.url, "POST", `/v1/memories/${forgotten}/forget`, { token: alphaDev.token, body: { reason: "a secret" } });
    for (let n = 1; n <= 4; n++) await add(source, betaDev, turn("beta-1", n, { prompt: `Cobalt deploy pipeline, stage ${n}` }));
    await source.runtime.services.writes.putSummary(alpha, summary("alpha-1", "Garnet ledger reconciled nightly", ["dev", "reviewer"]));
    freshChroma = await startEmbeddedChroma({ path: join(dir, "fresh-chroma"), logFile: join(dir, "fresh-chroma.log") });
    fresh = await startCairn(tokens, { chroma: freshChroma.url });
  });
  afterAll(async () => {
    await source?.close();
    await fresh?.close();
    await freshChroma?.stop();
  });

  it("backs up every workspace of the tokens file and restores them into a fresh stack: same records, found by the same queries", async () => {
    const file = join(dir, "backup.ndjson");
    const both = await tokensFile("both.yaml", tokens);
    const made = await cairnCli(["backup", "--out", file, "--tokens-file", both, "--url", source.url.toString()]);
    expect(made.stderr).not.toContain(alphaOps.token);
    expect(made.code).toBe(0);
    expect(made.stdout).toContain(`backed up ${alpha}: 12 turns, 1 summaries, 1 tombstones`);
    expect(made.stdout).toContain(`backed up ${beta}: 4 turns, 0 summaries, 0 tombstones`);
    // A backup holds every memory of the workspaces: readable by its owner only, whatever the umask.
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const lines = (await readFile(file, "utf8"))
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ type: "header", format: "cairn-backup", version: 1 });
    const manifest = lines.at(-1);
    expect(manifest).toMatchObject({ type: "manifest", records: 18, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(manifest.workspaces.find((w: { workspace: string }) => w.workspace === alpha)).toMatchObject({
      counts: { turns: 12, summaries: 1, tombstones: 1 },
      stamps: { turns: { model: "use-lite-512", dimension: 512 }, summaries: { model: "use-lite-512", dimension: 512 } },
    });
    expect(JSON.stringify(lines)).not.toContain("swordfish");

    const restored = await cairnCli(["restore", "--in", file, "--tokens-file", both, "--url", fresh.url.toString()]);
    expect(restored.stderr).toContain("restore");
    expect(restored.code).toBe(0);
    expect(restored.stdout).toContain(
      `restored ${alpha}: tombstones 1 stored, 0 skipped; turns 12 stored, 0 skipped; summaries 1 stored, 0 skipped`,
    );

    for (const admin of [alphaOps, betaOps]) expectSameRecords(await snapshot(fresh, admin), await snapshot(source, admin));
    for (const [token, query] of [
      [alphaDev, "garnet ledger reconciliation part 7"],
      [alphaReviewer, "ledger reconciliation part 9"],
      [betaDev, "cobalt deploy pipeline stage 3"],
    ] as const) {
      const there = await http(source.url, "POST", "/v1/memories/query", { token: token.token, body: { query, limit: 5 } });
      const here = await http(fresh.url, "POST", "/v1/memories/query", { token: token.token, body: { query, limit: 5 } });
      expect(here.body.hits.length).toBeGreaterThan(0);
      expect(here.body.hits.map((h: { memory: { id: string } }) => h.memory.id)).toEqual(
        there.body.hits.map((h: { memory: { id: string } }) => h.memory.id),
      );
      expect(here.body.hits[0].matched_by).toEqual(there.body.hits[0].matched_by);
      // The vectors came back with the records: meaning alone finds the same memories in the restored stack.
      const bySense = { query, limit: 5, mode: "semantic" };
      const senseThere = await http(source.url, "POST", "/v1/memories/query", { token: token.token, body: bySense });
      const senseHere = await http(fresh.url, "POST", "/v1/memories/query", { token: token.token, body: bySense });
      expect(senseHere.body.hits.length).toBeGreaterThan(0);
      expect(senseHere.body.hits.map((h: { memory: { id: string } }) => h.memory.id)).toEqual(
        senseThere.body.hits.map((h: { memory: { id: string } }) => h.memory.id),
      );
    }
    for (const token of [alphaDev, alphaReviewer, betaDev]) {
      const there = await http(source.url, "GET", "/v1/memories/recent?limit=100", { token: token.token });
      const here = await http(fresh.url, "GET", "/v1/memories/recent?limit=100", { token: token.token });
      expect(here.body.turns.length).toBeGreaterThan(0);
      expect(here.body.turns).toEqual(there.body.turns);
    }
    const summaryHere = await http(fresh.url, "POST", "/v1/summaries/query", {
      token: alphaDev.token,
      body: { query: "garnet ledger nightly" },
    });
    expect(summaryHere.body.hits[0].summary.title).toBe("Garnet ledger reconciled nightly");
    expect((await http(fresh.url, "GET", `/v1/memories/${forgotten}`, { token: alphaDev.token })).status).toBe(410);
    // Writing the forgotten turn again is refused in the restored stack as in the original.
    const rewrite = await http(fresh.url, "POST", "/v1/memories", {
      token: alphaDev.token,
      body: turn("alpha-0", 99, { prompt: "the staging password is swordfish" }),
    });
    expect(rewrite.status).toBe(410);

    const verified = await cairnCli(["verify", "--tokens-file", both, "--url", fresh.url.toString()]);
    expect(verified.stdout).toContain(`workspace ${alpha}: healthy`);
    expect(verified.code).toBe(0);

    // Restoring twice stores nothing twice.
    const before = await snapshot(fresh, alphaOps);
    const again = await cairnCli(["restore", "--in", file, "--tokens-file", both, "--url", fresh.url.toString()]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(
      `restored ${alpha}: tombstones 0 stored, 1 skipped; turns 0 stored, 12 skipped; summaries 0 stored, 1 skipped`,
    );
    expect(await snapshot(fresh, alphaOps)).toEqual(before);
    const recent = await http(fresh.url, "GET", "/v1/memories/recent?limit=100", { token: alphaDev.token });
    expect(recent.body.turns).toHaveLength(8);
    const audit = await http(fresh.url, "GET", "/v1/audit?limit=500", { token: alphaOps.token });
    expect(audit.body.entries.filter((e: { action: string }) => e.action === "restore")).toHaveLength(12);

    // A workspace of the backup without a token is refused before anything is sent; --workspace picks one.
    const alphaOnly = await tokensFile("alpha.yaml", [alphaOps]);
    const partial = await cairnCli(["restore", "--in", file, "--tokens-file", alphaOnly, "--url", fresh.url.toString()]);
    expect(partial.code).toBe(2);
    expect(partial.stderr.trim()).toBe(
      `cairn: no admin token for workspace ${beta} of the backup: pass a --tokens-file that holds one, or --workspace to restore only some`,
    );
    const picked = await cairnCli([
      "restore",
      "--in",
      file,
      "--tokens-file",
      alphaOnly,
      "--workspace",
      alpha,
      "--url",
      fresh.url.toString(),
    ]);
    expect(picked.code).toBe(0);
    expect(picked.stdout).toContain(`restored ${alpha}: tombstones 0 stored, 1 skipped; turns 0 stored, 12 skipped`);
    expect(picked.stdout).not.toContain(beta);
    const unknown = await cairnCli([
      "restore",
      "--in",
      file,
      "--tokens-file",
      alphaOnly,
      "--workspace",
      "nope",
      "--url",
      fresh.url.toString(),
    ]);
    expect([unknown.code, unknown.stderr.trim()]).toEqual([2, `cairn: the backup holds no workspace nope (it holds ${alpha}, ${beta})`]);
  });

  it("refuses a damaged or cut-short backup with one line, and stores nothing from it", async () => {
    const file = join(dir, "single.ndjson");
    const made = await cairnCli(["backup", "--out", file, "--url", source.url.toString()], { CAIRN_ADMIN_TOKEN: betaOps.token });
    expect(made.code).toBe(0);
    const text = await readFile(file, "utf8");
    // The same workspace in another, empty stack, administered there by a token of its own.
    const gammaOps = makeToken(beta, "ops", "admin");

    const tampered = join(dir, "tampered.ndjson");
    await writeFile(tampered, text.replace("Cobalt deploy pipeline, stage 3", "Cobalt deploy pipeline, stage 8"));
    const cut = join(dir, "cut.ndjson");
    await writeFile(cut, text.split("\n").slice(0, 4).join("\n") + "\n");
    const other = join(dir, "other.ndjson");
    await writeFile(other, '{"hello":"world"}\n');

    const emptyChroma = await startEmbeddedChroma({ path: join(dir, "empty-chroma"), logFile: join(dir, "empty-chroma.log") });
    const empty = await startCairn([gammaOps], { chroma: emptyChroma.url });
    try {
      for (const [damaged, why] of [
        [tampered, "its sha256 does not match the manifest"],
        [cut, "it has no manifest"],
        [other, "the first line is not its header"],
      ] as const) {
        const refused = await cairnCli(["restore", "--in", damaged, "--url", empty.url.toString(), "--token", gammaOps.token]);
        expect(refused.code).toBe(1);
        expect(refused.stderr).toContain(why);
        expect(refused.stderr).toContain("nothing was restored");
        expect(refused.stderr.trim().split("\n")).toHaveLength(1);
      }
      expect((await snapshot(empty, gammaOps)).turns).toEqual([]);
      // The intact file restores into the same empty stack.
      const fine = await cairnCli(["restore", "--in", file, "--url", empty.url.toString(), "--token", gammaOps.token]);
      expect(fine.code).toBe(0);
      expect((await snapshot(empty, gammaOps)).turns).toHaveLength(4);
    } finally {
      await empty.close();
      await emptyChroma.stop();
    }
  });
});

describe("cairn backup and restore of the mailbox", () => {
  const ws = uniqueWorkspace("mailbak");
  const crew = {
    alice: makeToken(ws, "alice"),
    bob: makeToken(ws, "bob"),
    carol: makeToken(ws, "carol"),
    ops: makeToken(ws, "ops", "admin"),
  };
  const tokens = Object.values(crew);
  let source: TestCairn;
  let freshChroma: EmbeddedChroma;
  let fresh: TestCairn;
  const sent: Record<string, string> = {};

  const send = async (from: TestToken, to: string, subject: string) => {
    const res = await http(source.url, "POST", "/v1/messages", {
      token: from.token,
      body: { to, subject, body: `${subject}: the details.` },
    });
    expect(res.status).toBe(201);
    sent[subject] = res.body.id as string;
  };
  const ack = async (reader: TestToken, subjects: string[]) => {
    const res = await http(source.url, "POST", "/v1/messages/ack", {
      token: reader.token,
      body: { message_ids: subjects.map((s) => sent[s]) },
    });
    expect(res.status).toBe(200);
  };
  type Box = { messages: Array<{ id: string; subject: string; read: boolean; body?: string }>; unread: number; next_cursor: string | null };
  /** An agent's inbox and sent box, whole, with bodies. */
  const boxes = async (cairn: TestCairn, reader: TestToken) => {
    const out: Box[] = [];
    for (const box of ["inbox", "sent"]) {
      const res = await http<Box>(cairn.url, "GET", `/v1/messages?box=${box}&limit=50&detail=full`, { token: reader.token });
      expect(res.status).toBe(200);
      out.push(res.body);
    }
    return out;
  };
  const mail = async (cairn: TestCairn) => {
    const res = await http(cairn.url, "GET", "/v1/admin/records?collection=messages&limit=500", { token: crew.ops.token });
    expect(res.status).toBe(200);
    return (res.body.records as Array<{ id: string }>).sort((a, b) => (a.id < b.id ? -1 : 1));
  };

  beforeAll(async () => {
    source = await startCairn(tokens);
    await send(crew.alice, "bob", "Finish the migration");
    await send(crew.ops, "team", "Freeze on Friday");
    await send(crew.bob, "alice", "Migration blocked");
    await send(crew.carol, "team", "Runbook updated");
    await send(crew.alice, "bob", "Try the batch path");
    await ack(crew.bob, ["Finish the migration", "Freeze on Friday"]);
    await ack(crew.alice, ["Runbook updated"]);
    freshChroma = await startEmbeddedChroma({ path: join(dir, "mail-fresh-chroma"), logFile: join(dir, "mail-fresh-chroma.log") });
    fresh = await startCairn(tokens, { chroma: freshChroma.url });
  });
  afterAll(async () => {
    await source?.close();
    await fresh?.close();
    await freshChroma?.stop();
  });

  it("restores every message, read mark and box order into a fresh stack, and a second restore stores nothing", async () => {
    const file = join(dir, "mail-backup.ndjson");
    const tokensAt = await tokensFile("mail.yaml", [crew.ops]);
    const made = await cairnCli(["backup", "--out", file, "--tokens-file", tokensAt, "--url", source.url.toString()]);
    expect(made.code).toBe(0);
    // 5 messages; read marks: bob's 2, alice's 1, and each team message's sender's own (2).
    expect(made.stdout).toContain(`backed up ${ws}: 0 turns, 0 summaries, 0 tombstones, 10 messages and read marks`);
    const manifest = JSON.parse((await readFile(file, "utf8")).trimEnd().split("\n").at(-1)!);
    expect(manifest.workspaces[0]).toMatchObject({ workspace: ws, counts: { turns: 0, summaries: 0, tombstones: 0, messages: 10 } });
    expect(manifest.records).toBe(10);

    // Nothing in the fresh stack before the restore; the source has what the test sent.
    expect((await boxes(fresh, crew.bob))[0]!.messages).toEqual([]);
    expect((await boxes(source, crew.bob))[0]!.messages.map((m) => m.subject)).toEqual([
      "Try the batch path",
      "Runbook updated",
      "Freeze on Friday",
      "Finish the migration",
    ]);

    const restored = await cairnCli(["restore", "--in", file, "--tokens-file", tokensAt, "--url", fresh.url.toString()]);
    expect(restored.code).toBe(0);
    // The senders' marks of their team messages are left as those are posted again: present, so skipped.
    expect(restored.stdout).toContain(
      `restored ${ws}: tombstones 0 stored, 0 skipped; turns 0 stored, 0 skipped; summaries 0 stored, 0 skipped; messages 8 stored, 2 skipped`,
    );

    const unread: Record<string, number> = {};
    for (const [name, token] of Object.entries(crew)) {
      const there = await boxes(source, token);
      const here = await boxes(fresh, token);
      expect(here).toEqual(there);
      expect(here[0]!.messages.length + here[1]!.messages.length).toBeGreaterThan(0);
      unread[name] = here[0]!.unread;
    }
    // Read state came back as it was: some read, some not, per reader.
    expect(unread).toEqual({ alice: 2, bob: 2, carol: 1, ops: 1 });
    const bobs = (await boxes(fresh, crew.bob))[0]!.messages;
    expect(bobs.filter((m) => m.read).map((m) => m.subject)).toEqual(["Freeze on Friday", "Finish the migration"]);
    expect(bobs.filter((m) => !m.read).map((m) => m.subject)).toEqual(["Try the batch path", "Runbook updated"]);
    expect(bobs.find((m) => m.subject === "Try the batch path")!.body).toBe("Try the batch path: the details.");
    const listed = await mail(fresh);
    expect(listed).toHaveLength(10);
    expect(listed).toEqual(await mail(source));

    // Restoring twice stores nothing twice: same records, same boxes, same unread counts.
    const again = await cairnCli(["restore", "--in", file, "--tokens-file", tokensAt, "--url", fresh.url.toString()]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("messages 0 stored, 10 skipped");
    expect(await mail(fresh)).toEqual(listed);
    for (const token of tokens) expect(await boxes(fresh, token)).toEqual(await boxes(source, token));
  });
});

describe("cairn restore of a backup holding a damaged record", () => {
  it("refuses the file naming line, record and field, restores nothing; repaired and backed up again, it restores", async () => {
    const ws = uniqueWorkspace("dmgbk");
    const dev = makeToken(ws, "dev");
    const ops = makeToken(ws, "ops", "admin");
    const source = await startCairn([dev, ops]);
    const emptyChroma = await startEmbeddedChroma({ path: join(dir, "dmg-chroma"), logFile: join(dir, "dmg-chroma.log") });
    const empty = await startCairn([ops], { chroma: emptyChroma.url });
    try {
      const ids: string[] = [];
      for (let n = 1; n <= 3; n++) ids.push(await add(source, dev, turn("dmg", n, { prompt: `Amber cache eviction, part ${n}` })));
      // One turn damaged in the source store, behind memory-core's back: a time no Date holds.
      const chroma = new ChromaClient({ host: chromaUrl().hostname, port: Number(chromaUrl().port), ssl: false, database: ws });
      const turns = await chroma.getCollection({ name: "turns", embeddingFunction: null } as never);
      await turns.update({ ids: [ids[1]!], metadatas: [{ recorded_at: 8_640_000_000_000_001 }] });

      const file = join(dir, "damaged-record.ndjson");
      const sourceArgs = ["--url", source.url.toString(), "--token", ops.token];
      expect((await cairnCli(["backup", "--out", file, ...sourceArgs])).code).toBe(0);
      const refused = await cairnCli(["restore", "--in", file, "--url", empty.url.toString(), "--token", ops.token]);
      expect(refused.code).toBe(1);
      const said = refused.stderr.trim();
      expect(said.split("\n")).toHaveLength(1);
      expect(said).toContain(`holds a damaged record at line`);
      expect(said).toContain(`turns ${ids[1]} of ${ws}`);
      expect(said).toContain("recorded_at is 8640000000000001");
      expect(said).toContain("nothing was restored");
      expect((await snapshot(empty, ops)).turns).toEqual([]);

      const repaired = await cairnCli(["repair", "--apply", ...sourceArgs]);
      expect(repaired.code).toBe(0);
      expect(repaired.stdout).toContain("1 damaged records moved into quarantine");
      expect(repaired.stdout).toContain(`after repair, workspace ${ws}: healthy`);
      expect((await cairnCli(["backup", "--out", file, ...sourceArgs])).code).toBe(0);
      const restored = await cairnCli(["restore", "--in", file, "--url", empty.url.toString(), "--token", ops.token]);
      expect(restored.code).toBe(0);
      expect(restored.stdout).toContain(`restored ${ws}: tombstones 0 stored, 0 skipped; turns 2 stored, 0 skipped`);
      expect(((await snapshot(empty, ops)).turns as Array<{ id: string }>).map((t) => t.id).sort()).toEqual([ids[0], ids[2]].sort());
    } finally {
      await source.close();
      await empty.close();
      await emptyChroma.stop();
    }
  });
});

describe("cairn restore of a backup with a line of the wrong shape", () => {
  it("refuses a header, record or manifest line not of its type's shape, restores nothing; the same file resealed as it was restores", async () => {
    const ws = uniqueWorkspace("shape");
    const dev = makeToken(ws, "dev");
    const ops = makeToken(ws, "ops", "admin");
    const source = await startCairn([dev, ops]);
    const emptyChroma = await startEmbeddedChroma({ path: join(dir, "shape-chroma"), logFile: join(dir, "shape-chroma.log") });
    const empty = await startCairn([ops], { chroma: emptyChroma.url });
    try {
      for (let n = 1; n <= 2; n++) await add(source, dev, turn("shape", n, { prompt: `Jade queue backpressure, part ${n}` }));
      const file = join(dir, "shape.ndjson");
      expect((await cairnCli(["backup", "--out", file, "--url", source.url.toString(), "--token", ops.token])).code).toBe(0);
      const written: any[] = (await readFile(file, "utf8"))
        .trimEnd()
        .split("\n")
        .map((line) => JSON.parse(line));
      expect(written.map((v) => v.type)).toEqual(["header", "record", "record", "manifest"]);

      /** The lines with `edit` applied, and the manifest's checksums made to match them: only the shape is wrong. */
      const resealed = async (name: string, edit: (lines: any[]) => void) => {
        const lines = structuredClone(written);
        edit(lines);
        const manifest = lines.pop();
        const checksums = new Checksums();
        const texts = lines.map((value) => {
          const text = JSON.stringify(value);
          checksums.line(text, value);
          return text;
        });
        const sums = checksums.result();
        manifest.sha256 = sums.sha256;
        manifest.workspaces[0].sha256 = sums.workspaces.get(ws)!.sha256;
        const out = join(dir, `${name}.ndjson`);
        await writeFile(out, [...texts, JSON.stringify(manifest)].join("\n") + "\n");
        return out;
      };
      const cases: Array<[string, (lines: any[]) => void, string]> = [
        ["document", (l) => (l[2].record.document = 42), "line 3 is not a record line"],
        ["vector", (l) => (l[2].record.embedding = "0.1,0.2"), "line 3 is not a record line"],
        ["header", (l) => (l[0].created_at = 20261203), "line 1 is not a header line"],
        ["manifest", (l) => (l[3].workspaces[0].counts = "2"), "line 4 is not a manifest line"],
      ];
      for (const [name, edit, why] of cases) {
        const refused = await cairnCli([
          "restore",
          "--in",
          await resealed(name, edit),
          "--url",
          empty.url.toString(),
          "--token",
          ops.token,
        ]);
        expect([name, refused.code]).toEqual([name, 1]);
        const said = refused.stderr.trim();
        expect(said.split("\n")).toHaveLength(1);
        expect(said).toContain(`is damaged or not a cairn backup: ${why}; nothing was restored`);
        expect((await snapshot(empty, ops)).turns).toEqual([]);
      }
      // A record of the right shape that memory-core's import would refuse: refused before anything is sent.
      const unwritable: Array<[string, (lines: any[]) => void, string]> = [
        ["no-validity", (l) => delete l[2].record.metadata.valid_until, "valid_until is missing"],
        ["summary-id", (l) => (l[2].record.id = `s_${"0".repeat(32)}`), "id does not start with t_"],
      ];
      for (const [name, edit, why] of unwritable) {
        const refused = await cairnCli([
          "restore",
          "--in",
          await resealed(name, edit),
          "--url",
          empty.url.toString(),
          "--token",
          ops.token,
        ]);
        expect([name, refused.code]).toEqual([name, 1]);
        expect(refused.stderr).toContain("holds a damaged record at line 3");
        expect(refused.stderr).toContain(why);
        expect((await snapshot(empty, ops)).turns).toEqual([]);
      }
      // The same resealing with nothing changed restores both turns.
      const fine = await cairnCli([
        "restore",
        "--in",
        await resealed("intact", () => {}),
        "--url",
        empty.url.toString(),
        "--token",
        ops.token,
      ]);
      expect(fine.code).toBe(0);
      expect(fine.stdout).toContain(`restored ${ws}: tombstones 0 stored, 0 skipped; turns 2 stored, 0 skipped`);
      expect((await snapshot(empty, ops)).turns).toHaveLength(2);
    } finally {
      await source.close();
      await empty.close();
      await emptyChroma.stop();
    }
  });
});

describe("cairn verify", () => {
  it("passes a healthy store and catches a damaged one (a turn deleted behind memory-core's back, a wrong stamp)", async () => {
    const good = uniqueWorkspace("good");
    const bad = uniqueWorkspace("bad");
    const goodDev = makeToken(good, "dev");
    const goodOps = makeToken(good, "ops", "admin");
    const badDev = makeToken(bad, "dev");
    const badOps = makeToken(bad, "ops", "admin");
    const cairn = await startCairn([goodDev, goodOps, badDev, badOps]);
    try {
      const victims: string[] = [];
      for (let n = 1; n <= 3; n++) {
        await add(cairn, goodDev, turn("v", n));
        victims.push(await add(cairn, badDev, turn("v", n)));
      }
      const both = await tokensFile("verify.yaml", [goodOps, badOps]);
      const healthy = await cairnCli(["verify", "--tokens-file", both, "--url", cairn.url.toString()]);
      expect(healthy.code).toBe(0);
      expect(healthy.stdout).toContain(`workspace ${bad}: healthy`);

      const chroma = new ChromaClient({
        host: chromaUrl().hostname,
        port: Number(chromaUrl().port),
        ssl: false,
        tenant: "default_tenant",
        database: bad,
      });
      const turns = await chroma.getCollection({ name: "turns", embeddingFunction: null } as never);
      await turns.delete({ ids: [victims[1]!] });
      await turns.modify({ metadata: { embedding_model: "some-older-model", embedding_dim: 512 } });

      const caught = await cairnCli(["verify", "--tokens-file", both, "--url", cairn.url.toString()]);
      expect(caught.code).toBe(1);
      expect(caught.stdout).toContain(`workspace ${good}: healthy`);
      expect(caught.stdout).toContain(`workspace ${bad}: PROBLEMS FOUND`);
      expect(caught.stdout).toContain("stamp_mismatch: 1");
      expect(caught.stdout).toContain("dangling_slot: 2");
      expect(caught.stdout).toContain(victims[1]);
      expect(caught.stdout).not.toContain(victims[0]);
      const json = await cairnCli(["verify", "--json", "--token", badOps.token, "--url", cairn.url.toString()]);
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout)[0].problem_counts).toEqual({ stamp_mismatch: 1, dangling_slot: 2 });
    } finally {
      await cairn.close();
    }
  });
});

describe("cairn reembed", () => {
  it("moves a workspace to a new embedding model, resumes an interrupted run, and queries work again", async () => {
    const ws = uniqueWorkspace("model");
    const dev = makeToken(ws, "dev");
    const ops = makeToken(ws, "ops", "admin");
    const local = await startCairn([dev, ops]);
    const ids: string[] = [];
    try {
      for (let n = 1; n <= 9; n++) ids.push(await add(local, dev, turn("m", n, { prompt: `Onyx cache eviction policy, variant ${n}` })));
      await local.runtime.services.writes.putSummary(ws, summary("m", "Onyx cache eviction settled", ["dev"]));
    } finally {
      await local.close();
    }
    const stub = await startOpenAIStub({ dimension: 32 });
    const embedder = await createEmbedder({ kind: "openai", baseUrl: stub.baseUrl, model: "stub-32", apiKey: undefined }, silentLogger);
    const cairn = await startCairn([dev, ops], { embedder, maintenance: true });
    try {
      const refused = await http(cairn.url, "GET", "/v1/memories/recent", { token: dev.token });
      expect([refused.status, refused.body.code]).toEqual([503, "reembed_required"]);
      const stale = await cairnCli(["verify", "--token", ops.token, "--url", cairn.url.toString()]);
      expect(stale.code).toBe(1);
      expect(stale.stdout).toContain("stamp_mismatch: 2");

      // A workspace waiting for re-embedding can still be backed up, vectors of the old model and all.
      const file = join(dir, "before-reembed.ndjson");
      const saved = await cairnCli(["backup", "--out", file, "--token", ops.token, "--url", cairn.url.toString()]);
      expect(saved.code).toBe(0);
      const manifest = JSON.parse((await readFile(file, "utf8")).trimEnd().split("\n").at(-1)!);
      expect(manifest.workspaces[0]).toMatchObject({
        counts: { turns: 9, summaries: 1 },
        stamps: { turns: { model: "use-lite-512", dimension: 512 } },
      });

      // A run that stopped after one batch of four (as if interrupted): the progress is kept in Chroma.
      const embeddedTexts = () => stub.requests.filter((r) => r.path === "/v1/embeddings").flatMap((r) => [r.body.input].flat()).length;
      const beforeRun = embeddedTexts();
      const partial = await http(cairn.url, "POST", "/v1/admin/reembed", { token: ops.token, body: { limit: 4 } });
      expect(partial.body).toMatchObject({ done: false, processed: 4 });

      const run = await cairnCli(["reembed", "--batch", "3", "--url", cairn.url.toString()], { CAIRN_ADMIN_TOKEN: ops.token });
      expect(run.code).toBe(0);
      expect(run.stderr).toContain("resuming, 4 of 10 records already re-embedded");
      expect(run.stderr).toMatch(/100% \(10\/10\)/);
      expect(run.stdout).toContain(`reembedded ${ws}: 6 records embedded in this run, 10 in all (resumed at 4)`);
      // Every record was embedded once: nothing the interrupted run did was done again.
      expect(embeddedTexts() - beforeRun).toBe(10);

      const hit = await http(cairn.url, "POST", "/v1/memories/query", {
        token: dev.token,
        body: { query: "onyx cache eviction variant 6" },
      });
      expect(hit.status).toBe(200);
      expect(hit.body.hits[0].memory.id).toBe(ids[5]);
      const summaries = await http(cairn.url, "POST", "/v1/summaries/query", {
        token: dev.token,
        body: { query: "onyx eviction settled" },
      });
      expect(summaries.body.hits[0].summary.title).toBe("Onyx cache eviction settled");
      const recent = await http(cairn.url, "GET", "/v1/memories/recent", { token: dev.token });
      expect(recent.body.turns.map((t: { id: string }) => t.id)).toEqual([...ids].reverse());
      const healthy = await cairnCli(["verify", "--token", ops.token, "--url", cairn.url.toString()]);
      expect(healthy.stdout).toContain("openai:stub-32 (32)");
      expect(healthy.code).toBe(0);
      const noop = await cairnCli(["reembed", "--token", ops.token, "--url", cairn.url.toString()]);
      expect(noop.code).toBe(0);
      expect(noop.stdout).toContain("0 records embedded in this run, 10 in all");
    } finally {
      await cairn.close();
      await stub.close();
    }
  });
});

describe("cairn's arguments", () => {
  it("answers bad or missing arguments with one clear line and exit 2; a bad token with exit 1", async () => {
    const cases: Array<[string[], string]> = [
      [[], "no command given"],
      [["vacuum"], 'unknown command "vacuum"'],
      [["backup", "--token", "x"], "backup: --out FILE is required"],
      [["restore", "--token", "x"], "restore: --in FILE is required"],
      [["backup", "--out"], "argument missing"],
      [["verify", "--colour"], "Unknown option '--colour'"],
      [["verify"], "no admin token"],
      [["verify", "--token", "a", "--tokens-file", "t.yaml"], "either --token or --tokens-file"],
      [["reembed", "--token", "x", "--batch", "many"], '--batch must be a whole number from 1 to 500, not "many"'],
      [["verify", "--token", "x", "--url", "ftp://host"], "--url must be an http(s) URL"],
      [["verify", "--tokens-file", join(dir ?? tmpdir(), "missing.yaml")], "--tokens-file: cannot read"],
      [["restore", "--in", join(dir ?? tmpdir(), "missing.ndjson"), "--token", "x"], "cannot read"],
    ];
    for (const [args, message] of cases) {
      const result = await cairnCli(args);
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.stderr).toContain(message);
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
      expect(result.stderr).not.toMatch(/\bat .*\(|node_modules/);
    }
    const help = await cairnCli(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("usage: cairn");

    const ws = uniqueWorkspace("args");
    const agent = makeToken(ws, "dev");
    const admin = makeToken(ws, "ops", "admin");
    const cairn = await startCairn([agent, admin]);
    try {
      const unknown = await cairnCli(["verify", "--token", "not-a-token", "--url", cairn.url.toString()]);
      expect([unknown.code, unknown.stderr.trim()]).toEqual([
        1,
        "cairn: memory-core does not know this token (401): check --token or the tokens file",
      ]);
      const notAdmin = await cairnCli(["verify", "--token", agent.token, "--url", cairn.url.toString()]);
      expect(notAdmin.code).toBe(1);
      expect(notAdmin.stderr).toContain("not an admin token");
      const fine = await cairnCli(["verify", "--token", admin.token, "--url", cairn.url.toString()]);
      expect(fine.code).toBe(0);
      const noServer = await cairnCli(["verify", "--token", admin.token, "--url", "http://127.0.0.1:9"]);
      expect(noServer.code).toBe(1);
      expect(noServer.stderr).toContain("cannot reach memory-core");
    } finally {
      await cairn.close();
    }
  });
});

describe("cairn repair", () => {
  it("lists what a write cut off and retried left behind, mends it with --apply, and has nothing left to do after", async () => {
    const ws = uniqueWorkspace("mend");
    const dev = makeToken(ws, "dev");
    const ops = makeToken(ws, "ops", "admin");
    const faults = await ChromaFaults.start(chromaUrl());
    const cairn = await startCairn([dev, ops], { chroma: faults.url });
    try {
      await add(cairn, dev, turn("m", 1));
      const body = turn("m", 2, { idempotency_key: "m-2" });
      const cut = faults.cutOnce((call) => call.verb === "add" && call.ids.some((id) => id.startsWith("t_")));
      expect((await http(cairn.url, "POST", "/v1/memories", { token: dev.token, body })).status).toBe(503);
      expect(cut.fired).toBe(true);
      const id = await add(cairn, dev, body);
      const args = ["--token", ops.token, "--url", cairn.url.toString()];

      const found = await cairnCli(["verify", ...args]);
      expect(found.code).toBe(1);
      expect(found.stdout).toContain("orphan_slot: 1");
      const dry = await cairnCli(["repair", ...args]);
      expect(dry.code).toBe(0);
      expect(dry.stdout).toContain("dry run:");
      expect(dry.stdout).toContain("1 memories concerned; run again with --apply to mend");
      expect((await cairnCli(["verify", ...args])).code).toBe(1);

      const applied = await cairnCli(["repair", "--apply", ...args]);
      expect(applied.code).toBe(0);
      expect(applied.stdout).toContain("repaired:");
      expect(applied.stdout).toContain(`after repair, workspace ${ws}: healthy`);
      expect((await cairnCli(["verify", ...args])).code).toBe(0);
      const again = JSON.parse((await cairnCli(["repair", "--apply", "--json", ...args])).stdout);
      expect(again.repairs[0]).toMatchObject({ applied: true, slots_retired: 0, audit_entries_written: 0, memories: 0 });
      const recent = await http(cairn.url, "GET", "/v1/memories/recent", { token: dev.token });
      expect(recent.body.turns.map((t: { id: string }) => t.id)[0]).toBe(id);
    } finally {
      await cairn.close();
      await faults.stop();
    }
  });
});
