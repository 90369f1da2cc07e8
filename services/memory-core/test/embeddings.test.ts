import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOpenAIStub, wordVector, type OpenAIStub } from "../../../testing/openai-stub.js";
import { createEmbedder } from "../src/embeddings/create.js";
import type { Embedder } from "../src/embeddings/embedder.js";
import { silentLogger } from "../src/logger.js";
import { http, makeToken, startCairn, turn, uniqueWorkspace } from "./support/harness.js";
import { expectNoLeak } from "./support/no-leak.js";

describe("the OpenAI-compatible embedder", () => {
  let stub: OpenAIStub;
  let embedder: Embedder;
  const calls = () => stub.requests.filter((r) => r.path === "/v1/embeddings").length;
  beforeAll(async () => {
    stub = await startOpenAIStub({ dimension: 16 });
    embedder = await createEmbedder({ kind: "openai", baseUrl: stub.baseUrl, model: "stub-16", apiKey: undefined }, silentLogger);
  });
  afterAll(() => stub?.close());

  it("embeds in input order, in batches, with the server's vectors", async () => {
    const texts = Array.from({ length: 130 }, (_, i) => `lock ordering note ${i}`);
    const before = calls();
    const vectors = await embedder.embed(texts);
    expect(calls() - before).toBe(2); // 128 inputs per request
    expect(vectors).toHaveLength(130);
    expect(vectors[129]).toEqual(wordVector(texts[129]!, 16));
    expect(vectors[0]).not.toEqual(vectors[129]);
  });

  it("tries again after a busy answer and dropped connections, and then embeds", async () => {
    // The second try's pooled connection is dropped and sent once more at once on a new one (json-client.ts),
    // which is dropped too: only the embedder's own retry gets the answer.
    stub.embeddings.failNext("busy", "down", "down");
    const before = calls();
    const [vector] = await embedder.embed(["retry after the model loads"]);
    expect(calls() - before).toBe(4);
    expect(vector).toEqual(wordVector("retry after the model loads", 16));
  });

  it("answers unavailable when the server keeps failing; the next call works", async () => {
    stub.embeddings.failNext("busy", "busy", "busy");
    const before = calls();
    const failure = await embedder.embed(["never embedded"]).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(calls() - before).toBe(3);
    expect(failure).toMatchObject({ code: "unavailable", status: 503 });
    expect(await embedder.embed(["embedded now"])).toEqual([wordVector("embedded now", 16)]);
  });

  it("puts vectors listed out of order back in input order", async () => {
    stub.embeddings.failNext("reordered");
    const texts = ["first lock", "second cache", "third queue"];
    expect(await embedder.embed(texts)).toEqual(texts.map((t) => wordVector(t, 16)));
    expect(stub.requests.at(-1)!.body.input).toEqual(texts);
  });

  it("refuses, without trying again, a reply with fewer vectors than inputs", async () => {
    stub.embeddings.failNext("short");
    const before = calls();
    await expect(embedder.embed(["one", "two"])).rejects.toMatchObject({ code: "unavailable" });
    expect(calls() - before).toBe(1);
    expect(await embedder.embed(["one", "two"])).toEqual([wordVector("one", 16), wordVector("two", 16)]);
  });

  it("through the API: a query while the model is down answers 503 and what was stored stays", async () => {
    const dev = makeToken(uniqueWorkspace("embed-down"), "dev");
    const cairn = await startCairn([dev], { embedder });
    try {
      const body = turn("embed-down", 1, { prompt: "pin the flaky retry helper" });
      const stored = await http(cairn.url, "POST", "/v1/memories", { token: dev.token, body });
      expect(stored.status).toBe(201);
      stub.embeddings.failNext("busy", "busy", "busy");
      const down = await http(cairn.url, "POST", "/v1/memories/query", { token: dev.token, body: { query: "flaky retry helper" } });
      expect([down.status, down.body.code]).toEqual([503, "unavailable"]);
      expectNoLeak(down.text, [dev.token, new URL(stub.baseUrl).port]);
      const up = await http(cairn.url, "POST", "/v1/memories/query", { token: dev.token, body: { query: "flaky retry helper" } });
      expect(up.status).toBe(200);
      expect(up.body.hits.map((h: { memory: { id: string } }) => h.memory.id)).toEqual([stored.body.id]);
    } finally {
      await cairn.close();
    }
  });
});
