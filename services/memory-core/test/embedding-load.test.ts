import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import yaml from "js-yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOpenAIStub, wordVector, type OpenAIStub } from "../../../testing/openai-stub.js";
import { withBatching } from "../src/embeddings/batching.js";
import { representativeText } from "../src/embeddings/bounded-text.js";
import { LOCAL_TEXT_CHARS, LocalEmbedder } from "../src/embeddings/local.js";
import { createOpenAIEmbedder } from "../src/embeddings/openai.js";
import { silentLogger } from "../src/logger.js";
import { chromaUrl, http, makeToken, sharedEmbedder, uniqueWorkspace } from "./support/harness.js";
import { startMemoryCoreProcess, type MemoryCoreProcess } from "./support/processes.js";

/** Ordinary words, `chars` characters of them, different for each seed. */
function words(chars: number, seed: number): string {
  const vocabulary = ["lock", "ordering", "cache", "retry", "helper", "queue", "flush", "decision", "measured", "importer"];
  let text = "";
  for (let i = 0; text.length < chars; i++) text += `${vocabulary[(i * 7 + seed * 3 + (i >> 3)) % vocabulary.length]} `;
  return text.slice(0, chars).trimEnd();
}

describe("batching", () => {
  let stub: OpenAIStub;
  beforeAll(async () => {
    stub = await startOpenAIStub({ dimension: 16 });
  });
  afterAll(() => stub?.close());

  it("hands the inner embedder calls of at most its bound, and answers a call made after a large one first", async () => {
    const inner = await createOpenAIEmbedder({ baseUrl: stub.baseUrl, model: "stub-16", apiKey: undefined }, silentLogger);
    const embedder = withBatching(inner, 16);
    const before = stub.requests.length;
    const large = Array.from({ length: 200 }, (_, i) => `bulk import note ${i}`);
    const answered: string[] = [];
    const bulk = embedder.embed(large).then((vectors) => {
      answered.push("bulk");
      return vectors;
    });
    // Made once the bulk call's first share is with the inner embedder.
    await new Promise((resolve) => setImmediate(resolve));
    const query = embedder.embed(["the lock ordering query"]).then((vectors) => {
      answered.push("query");
      return vectors;
    });
    const [bulkVectors, queryVectors] = await Promise.all([bulk, query]);
    expect(answered).toEqual(["query", "bulk"]);
    expect(bulkVectors).toEqual(large.map((t) => wordVector(t, 16)));
    expect(queryVectors).toEqual([wordVector("the lock ordering query", 16)]);
    const sizes = stub.requests.slice(before).map((r) => (r.body.input as string[]).length);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(201);
    expect(Math.max(...sizes)).toBe(16);
  });
});

describe("the local embedder", () => {
  it("embeds a text longer than its bound as its representative part, which keeps its opening and its ending", async () => {
    const embedder = await sharedEmbedder();
    const long = `${words(32_000, 1)} closing verdict zebra`;
    const part = representativeText(long, LOCAL_TEXT_CHARS);
    expect(part.length).toBeLessThanOrEqual(LOCAL_TEXT_CHARS);
    expect(part.startsWith(long.slice(0, 40))).toBe(true);
    expect(part.endsWith("closing verdict zebra")).toBe(true);
    const short = words(300, 2);
    expect(representativeText(short, LOCAL_TEXT_CHARS)).toBe(short);
    const [ofLong, ofPart, ofShort] = await embedder.embed([long, part, short]);
    expect(ofLong).toEqual(ofPart);
    expect(ofLong).toHaveLength(512);
    expect(ofShort).not.toEqual(ofLong);
  });

  it("replaces its idle model thread once the heap grew past the bound, and embeds alike on the new one", async () => {
    const embedder = await LocalEmbedder.start({ recycleAboveBytes: 0, recycleAfterIdleMs: 0 });
    try {
      const texts = ["pin the flaky retry helper", "the lock ordering decision"];
      const first = await embedder.embed(texts);
      expect(embedder.threadsStarted).toBe(1);
      for (let i = 0; i < 600 && embedder.threadsStarted === 1; i++) await sleep(50);
      expect(embedder.threadsStarted).toBe(2);
      expect(await embedder.embed(texts)).toEqual(first);
      expect(first[0]).not.toEqual(first[1]);
    } finally {
      await embedder.close();
    }
    await expect(embedder.embed(["after close"])).rejects.toMatchObject({ code: "unavailable" });
  });
});

describe("heavy writes through a memory-core process", () => {
  const workspace = uniqueWorkspace("embed-load");
  const importer = makeToken(workspace, "importer", "admin");
  const reader = makeToken(workspace, "reader");
  let dir: string;
  let core: MemoryCoreProcess;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "cairn-embedding-load-"));
    await writeFile(join(dir, "tokens.yaml"), yaml.dump({ tokens: [importer, reader] }));
    core = await startMemoryCoreProcess({
      logFile: join(dir, "memory-core.log"),
      env: {
        CAIRN_DATA_DIR: join(dir, "core"),
        CAIRN_TOKENS_FILE: join(dir, "tokens.yaml"),
        CAIRN_CHROMA_URL: chromaUrl().toString(),
        CAIRN_SUMMARY_WORKER: "off",
      },
    });
  });
  afterAll(async () => {
    await core?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("answers /healthz and another caller's query_recent_turns while a bulk batch and three long writes embed", async () => {
    const earlier = await http(core.url, "POST", "/v1/memories", {
      token: reader.token,
      body: { session_id: "reader-1", prompt: "Pin the retry helper", thought: "It flakes.", response: "Pinned." },
    });
    expect(earlier.status).toBe(201);
    const long = (n: number) => ({
      session_id: `long-${n}`,
      prompt: words(32_767, n),
      thought: words(32_767, n + 10),
      response: words(32_767, n + 20),
    });
    // Ten passes of the local model: long enough for every probe, in a test that runs on two shared cores.
    const batch = {
      memories: Array.from({ length: 160 }, (_, i) => ({
        session_id: "import-1",
        prompt: `Imported commit ${i}: ${words(240, i)}`,
        thought: words(170, i + 1),
        response: words(430, i + 2),
      })),
    };
    const order: string[] = [];
    const heavy = Promise.all([
      http(core.url, "POST", "/v1/memories/batch", { token: importer.token, body: batch }),
      ...[1, 2, 3].map((n) => http(core.url, "POST", "/v1/memories", { token: importer.token, body: long(n) })),
    ]).then((results) => {
      order.push("heavy");
      return results;
    });
    // One after the other, each sent once the one before was answered: the later ones are sent while the heavy
    // requests are with the server, whatever the first one met.
    const probes = (async () => {
      for (let i = 0; i < 3; i++) {
        const health = await http(core.url, "GET", "/healthz");
        order.push(`healthz ${health.status}`);
      }
      const recent = await http(core.url, "GET", "/v1/memories/recent", { token: reader.token });
      order.push(`recent ${recent.status} ${recent.body.turns.map((t: { id: string }) => t.id).join(",")}`);
    })();
    const [results] = await Promise.all([heavy, probes]);
    expect(order).toEqual(["healthz 200", "healthz 200", "healthz 200", `recent 200 ${earlier.body.id}`, "heavy"]);
    const [stored, ...longs] = results;
    expect([stored!.status, stored!.body.stored, stored!.body.failed]).toEqual([200, 160, 0]);
    expect(longs.map((r) => r.status)).toEqual([201, 201, 201]);
    const kept = await http(core.url, "GET", `/v1/memories/${longs[0]!.body.id}`, { token: importer.token });
    expect([kept.body.response, kept.body.truncated]).toEqual([long(1).response, false]);
    const found = await http(core.url, "POST", "/v1/memories/query", {
      token: reader.token,
      body: { query: batch.memories[7]!.response, session_id: "import-1" },
    });
    expect(found.status).toBe(200);
    expect(found.body.hits.length).toBeGreaterThan(0);
  }, 480_000);
});
