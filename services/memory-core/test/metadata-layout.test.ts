import { describe, expect, it } from "vitest";
import { TURN_FILTER_KEYS } from "../src/store/chroma-store.js";
import { chromaClient, http, makeToken, turn, uniqueWorkspace, useCairn } from "./support/harness.js";

/**
 * A turn's metadata in Chroma: the keys filters name on their own, the rest packed into `fields`
 * (store/metadata-layout.ts). Turns stored flat (every key its own, the text as Chroma's document) read, filter and
 * take corrections too, and a text kept unstamped under `text` reads as well.
 */

const workspace = uniqueWorkspace("layout");
const dev = makeToken(workspace, "dev");
const cairn = useCairn([dev]);

const rawTurns = () => chromaClient(workspace).getCollection({ name: "turns", embeddingFunction: null } as never);

const add = async (body: Record<string, unknown>) => {
  const res = await http(cairn.url, "POST", "/v1/memories", { token: dev.token, body });
  expect(res.status).toBe(201);
  return res.body.id as string;
};
const read = async (id: string) => {
  const res = await http(cairn.url, "GET", `/v1/memories/${id}`, { token: dev.token });
  expect(res.status).toBe(200);
  return res.body;
};
const search = async (filters: Record<string, unknown>) => {
  const res = await http(cairn.url, "POST", "/v1/memories/query", {
    token: dev.token,
    body: { query: "packed metadata layout decision", limit: 10, ...filters },
  });
  expect(res.status).toBe(200);
  return (res.body.hits as Array<{ memory: { id: string } }>).map((h) => h.memory.id);
};

const extra = {
  kind: "decision",
  tags: ["layout", "chroma"],
  refs: ["src/store/metadata-layout.ts"],
  checks: [{ name: "unit", command: "npm test", status: "passed", commit: "abc1234" }],
  model: "some-model",
};

describe("a turn's metadata in Chroma", () => {
  it("keeps the filtered keys on their own and the rest in one, and reads back whole", async () => {
    const id = await add({ ...turn("layout-packed", 1), ...extra, prompt: "A packed metadata layout decision." });
    const raw = await (await rawTurns()).get({ ids: [id], include: ["metadatas", "documents"] as never });
    const stored = raw.metadatas[0] as Record<string, unknown>;
    expect(Object.keys(stored).sort()).toEqual([...TURN_FILTER_KEYS.filter((k) => k !== "review_state"), "fields", "stamped_text"].sort());
    expect(JSON.parse(String(stored.fields))).toMatchObject({ tags: JSON.stringify(extra.tags), model: "some-model", seq: 0 });
    // The text is a key of its own, not Chroma's document (which Chroma would index for full-text search).
    expect(stored.stamped_text).toContain("A packed metadata layout decision.");
    expect(raw.documents[0] ?? "").toBe("");

    const memory = await read(id);
    expect(memory).toMatchObject({ id, kind: "decision", tags: extra.tags, refs: extra.refs, model: "some-model", check_status: "passed" });
    expect(memory).toMatchObject({ prompt: "A packed metadata layout decision.", thought: turn("layout-packed", 1).thought });
    expect(memory.checks).toEqual(extra.checks);
    expect(memory).not.toHaveProperty("stamped_text");
    expect(memory).not.toHaveProperty("text");
    expect(await search({ kind: "decision", check_status: "passed" })).toContain(id);
    expect(await search({ kind: "attempt" })).not.toContain(id);

    // A correction rewrites the metadata; Chroma merges it into the record's keys, and the text stays.
    const outdated = await http(cairn.url, "POST", `/v1/memories/${id}/outdated`, { token: dev.token, body: { reason: "superseded" } });
    expect(outdated.status).toBe(200);
    expect(await read(id)).toMatchObject({ outdated: true, prompt: memory.prompt, thought: memory.thought, response: memory.response });
  });

  it("writes the strings no filter names so that they sort in the order written, whatever they say", async () => {
    // Chroma indexes every metadata string by its value; a text or a JSON object sorts at a random place there.
    // Prompts in reverse alphabetical order, written one after another.
    const prompts = ["Zebra crossing decision.", "Middle ground decision.", "Aardvark decision."];
    const ids: string[] = [];
    for (const [i, prompt] of prompts.entries()) {
      ids.push(await add({ ...turn("layout-order", i + 1), prompt }));
      await new Promise((resolve) => setTimeout(resolve, 5)); // a write stamp counts milliseconds
    }
    const raw = await (await rawTurns()).get({ ids, include: ["metadatas"] as never });
    const stored = (id: string) => raw.metadatas[raw.ids.indexOf(id)] as Record<string, unknown>;
    const inWriteOrder = (key: string) => ids.map((id) => String(stored(id)[key]));
    const sorted = (values: string[]) => [...values].sort();
    // Sorted as an index sorts them, the stored strings come in the order they were written...
    expect(sorted(inWriteOrder("stamped_text"))).toEqual(inWriteOrder("stamped_text"));
    expect(sorted(inWriteOrder("fields"))).toEqual(inWriteOrder("fields"));
    // ...where the texts they hold sort the other way round; each reads back whole.
    const texts = inWriteOrder("stamped_text").map((text) => text.slice(9));
    expect(texts.map((text, i) => text.startsWith(prompts[i]!))).toEqual([true, true, true]);
    expect(sorted(texts)).toEqual([...texts].reverse());
    for (const [i, id] of ids.entries())
      expect(await read(id)).toMatchObject({ prompt: prompts[i], thought: turn("layout-order", i + 1).thought });

    // The ledger packs its entries alike: the agent's slots for these turns sort in the order written too.
    const slots = await chromaClient(workspace).getCollection({ name: "ledger-slots", embeddingFunction: null } as never);
    const slotFields = (await slots.get({ include: ["metadatas"] as never })).metadatas.map((m) => String(m?.fields));
    const ours = ids.map((id) => slotFields.find((fields) => fields.includes(id)));
    expect(ours.every((fields) => fields !== undefined)).toBe(true);
    expect(sorted(ours as string[])).toEqual(ours);
  });

  it("reads a turn whose text is kept unstamped under `text`", async () => {
    const id = await add({ ...turn("layout-unstamped", 1), ...extra, prompt: "An unstamped layout decision." });
    const before = await read(id);
    const turns = await rawTurns();
    const raw = await turns.get({ ids: [id], include: ["metadatas", "embeddings"] as never });
    const { stamped_text, ...rest } = raw.metadatas[0] as Record<string, string | number | boolean>;
    await turns.delete({ ids: [id] });
    await turns.add({ ids: [id], embeddings: raw.embeddings as number[][], metadatas: [{ ...rest, text: String(stamped_text).slice(9) }] });
    const old = (await turns.get({ ids: [id], include: ["metadatas"] as never })).metadatas[0]!;
    expect(Object.keys(old)).toContain("text");
    expect(Object.keys(old)).not.toContain("stamped_text");
    expect(await read(id)).toEqual(before);
    expect(before).toMatchObject({ prompt: "An unstamped layout decision.", thought: turn("layout-unstamped", 1).thought });
  });

  it("reads, filters and corrects a turn stored flat", async () => {
    const id = await add({ ...turn("layout-flat", 1), ...extra, prompt: "A flat metadata layout decision." });
    const before = await read(id);
    // Rewrite it flat: every key of its own, no `fields`.
    const turns = await rawTurns();
    const raw = await turns.get({ ids: [id], include: ["metadatas", "documents", "embeddings"] as never });
    const packed = raw.metadatas[0] as Record<string, string | number | boolean>;
    // And the text as Chroma's document.
    const { fields, stamped_text, ...own } = packed;
    const { "": _stamp, ...unpacked } = JSON.parse(String(fields)) as Record<string, string | number | boolean>;
    const flat = { ...own, ...unpacked };
    const text = String(stamped_text).slice(9);
    await turns.delete({ ids: [id] });
    await turns.add({ ids: [id], embeddings: raw.embeddings as number[][], documents: [String(text)], metadatas: [flat] });
    const old = await turns.get({ ids: [id], include: ["metadatas", "documents"] as never });
    expect(Object.keys(old.metadatas[0]!)).toContain("tags");
    expect(Object.keys(old.metadatas[0]!)).not.toContain("stamped_text");
    expect(old.documents[0]).toContain("A flat metadata layout decision.");

    expect(await read(id)).toEqual(before);
    expect(await search({ kind: "decision", session_id: "layout-flat" })).toEqual([id]);
    expect(await search({ kind: "attempt", session_id: "layout-flat" })).toEqual([]);

    const outdated = await http(cairn.url, "POST", `/v1/memories/${id}/outdated`, {
      token: dev.token,
      body: { reason: "the layout changed" },
    });
    expect(outdated.status).toBe(200);
    const after = await read(id);
    expect(after).toMatchObject({ outdated: true, tags: extra.tags, refs: extra.refs, checks: extra.checks, model: "some-model" });
    expect(after.corrections).toHaveLength(1);
    expect(after).toMatchObject({ prompt: before.prompt, thought: before.thought, response: before.response });
    // The rewrite packed what it wrote; the old keys stay beside it, and the packed ones are read.
    const rewritten = (await turns.get({ ids: [id], include: ["metadatas"] as never })).metadatas[0] as Record<string, unknown>;
    expect(rewritten).toHaveProperty("tags");
    expect(JSON.parse(String(rewritten.fields))).toHaveProperty("corrections");
  });

  it("refuses a filter on a packed key inside the store, where it would match nothing", async () => {
    await add({ ...turn("layout-where", 1), ...extra });
    const turns = await cairn.runtime.store.collection(workspace, "turns");
    expect((await turns.get({ where: { session_id: "layout-where" } })).map((r) => r.metadata.model)).toEqual(["some-model"]);
    await expect(turns.get({ where: { $and: [{ session_id: "layout-where" }, { model: "some-model" }] } })).rejects.toMatchObject({
      code: "internal",
    });
  });

  it("keeps no document for a record without text (the ledger's), and keeps a text given as Chroma's document", async () => {
    const id = await add(turn("layout-documents", 1, { thought: "a turn, so that the ledger takes a slot" }));
    const slots = await chromaClient(workspace).getCollection({ name: "ledger-slots", embeddingFunction: null } as never);
    const stored = await slots.get({ include: ["documents", "metadatas"] as never });
    expect(stored.ids.length).toBeGreaterThan(0);
    expect(stored.documents.filter((d: string | null) => d !== null)).toEqual([]);
    // The ledger reads its slots without documents: the turn is listed.
    const recent = await http(cairn.url, "GET", "/v1/memories/recent?session_id=layout-documents", { token: dev.token });
    expect(recent.status).toBe(200);
    expect(recent.body.turns.map((t: { id: string }) => t.id)).toEqual([id]);
    // A collection whose text is Chroma's document keeps it, beside a record without text.
    const summaries = await cairn.runtime.store.collection(workspace, "summaries");
    // The fields every reader of a summary relies on (a record without them reads as damaged, and is left out).
    const sound = { session_id: "layout-docs", first_turn_at: 1, last_turn_at: 2, generated_at: 3 };
    await summaries.add([
      {
        id: "layout-doc-1",
        embedding: Array(cairn.runtime.store.stamp.dimension).fill(0.1),
        document: "a summary's text",
        metadata: sound,
      },
      { id: "layout-doc-2", embedding: Array(cairn.runtime.store.stamp.dimension).fill(0.2), document: "", metadata: sound },
    ]);
    const read = await summaries.get({ ids: ["layout-doc-1", "layout-doc-2"], withDocuments: true });
    expect(Object.fromEntries(read.map((r) => [r.id, r.document]))).toEqual({ "layout-doc-1": "a summary's text", "layout-doc-2": "" });
  });
});
