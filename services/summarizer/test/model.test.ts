import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOpenAIStub, type OpenAIStub } from "../../../testing/openai-stub.js";
import {
  addTurns,
  chatEnv,
  expectContractOutput,
  http,
  makeToken,
  startCairn,
  storedSummary,
  summarizerOver,
  turn,
  uniqueWorkspace,
} from "./support.js";

const workspace = uniqueWorkspace("summ-model");
const alice = makeToken(workspace, "alice");
const bob = makeToken(workspace, "bob");
let cairn: Awaited<ReturnType<typeof startCairn>>;
let stub: OpenAIStub;

beforeAll(async () => {
  stub = await startOpenAIStub({ dimension: 8 });
  cairn = await startCairn([alice, bob]);
});
afterAll(async () => {
  await cairn?.close();
  await stub?.close();
});

describe("summaries written by a chat model", () => {
  it("asks for structured output, stores it with its coverage, and query_summaries finds it", async () => {
    stub.chat.set({ kind: "structured" });
    const [, second] = await addTurns(cairn.url, alice.token, [
      {
        session_id: "model-redis",
        prompt: "Move token refresh to a Redis stream.",
        thought: "Polling costs 40 ms per request.",
        response: "Prototype written.",
      },
      {
        session_id: "model-redis",
        prompt: "Benchmark the stream.",
        thought: "p95 is 38 ms.",
        response: "Kept the stream.",
        kind: "decision",
      },
    ]);
    await addTurns(cairn.url, bob.token, [turn("model-redis", 3)]);
    const summarizer = summarizerOver(cairn.runtime, workspace, chatEnv(stub.baseUrl));
    const before = stub.chat.calls;
    await summarizer.runOnce();
    expect(stub.chat.calls - before).toBe(1);
    const request = stub.chat.bodies.at(-1);
    expect(request.response_format.type).toBe("json_schema");
    expect(request.messages.at(-1).content).toContain("p95 is 38 ms");

    const summary = await storedSummary(cairn.url, alice.token, "model-redis");
    const secondTurn = await http(cairn.url, "GET", `/v1/memories/${second}`, { token: alice.token });
    expect(summary).toMatchObject({
      session_id: "model-redis",
      agents: ["alice", "bob"],
      method: "model",
      model: "stub-chat",
      turn_count: 3,
      title: "Model summary: Move token refresh to a Redis stream.",
      decisions: [{ decision: "Chose the approach the session settled on", evidence: "the stub read it in the turns" }],
      next_steps: ["Ask a real model"],
    });
    expect(Date.parse(summary!.covered_through)).toBeGreaterThan(Date.parse(secondTurn.body.recorded_at));
    expect(summary!.first_turn_at <= summary!.last_turn_at).toBe(true);

    const found = await http(cairn.url, "POST", "/v1/summaries/query", { token: bob.token, body: { query: "token refresh redis stream" } });
    expect(found.status).toBe(200);
    expectContractOutput("query_summaries", found.body);
    expect(found.body.hits[0].summary).toMatchObject({
      session_id: "model-redis",
      method: "model",
      covered_through: summary!.covered_through,
    });
    const byAgent = await http(cairn.url, "POST", "/v1/summaries/query", {
      token: bob.token,
      body: { query: "token refresh redis stream", agent: "carol" },
    });
    expect(byAgent.body.hits).toEqual([]);
    await summarizer.stop();
  });

  it("asks again after a malformed answer, then falls back to an extractive summary", async () => {
    stub.chat.set({ kind: "malformed" });
    await addTurns(cairn.url, alice.token, [
      {
        session_id: "model-malformed",
        prompt: "Choose a queue for the export jobs.",
        thought: "We decided to use SQS because the team already runs it.",
        response: "Queue created. Next step: move the nightly export onto it.",
      },
    ]);
    const summarizer = summarizerOver(cairn.runtime, workspace, chatEnv(stub.baseUrl, { CAIRN_CHAT_RETRIES: "2" }));
    const before = stub.chat.calls;
    await summarizer.runOnce();
    expect(stub.chat.calls - before).toBe(3);
    const summary = await storedSummary(cairn.url, alice.token, "model-malformed");
    expect(summary).toMatchObject({ method: "extractive", model: cairn.runtime.embedder.model, turn_count: 1 });
    expect(summary!.summary).toContain("We decided to use SQS");
    expect(summary!.next_steps).toEqual(["Next step: move the nightly export onto it."]);
    await summarizer.stop();
  });

  it("reads an answer fenced in prose, as servers without structured output send it", async () => {
    stub.chat.set({ kind: "fenced" });
    await addTurns(cairn.url, alice.token, [turn("model-fenced", 1)]);
    const summarizer = summarizerOver(cairn.runtime, workspace, chatEnv(stub.baseUrl));
    await summarizer.runOnce();
    expect(await storedSummary(cairn.url, alice.token, "model-fenced")).toMatchObject({
      method: "model",
      title: "Model summary: Task 1 in model-fenced",
    });
    await summarizer.stop();
  });

  it("asks a server that refuses json_schema with json_object, and keeps asking that way", async () => {
    stub.chat.set({ kind: "no-json-schema" });
    await addTurns(cairn.url, alice.token, [turn("model-format-1", 1), turn("model-format-2", 1)]);
    // One session at a time, so that the second request is sent after the first learned the refusal.
    const summarizer = summarizerOver(cairn.runtime, workspace, chatEnv(stub.baseUrl, { CAIRN_SUMMARY_CONCURRENCY: "1" }));
    const before = stub.chat.calls;
    await summarizer.runOnce();
    const formats = stub.chat.bodies.slice(before).map((b) => b.response_format?.type);
    expect(formats).toEqual(["json_schema", "json_object", "json_object"]);
    expect(await storedSummary(cairn.url, alice.token, "model-format-1")).toMatchObject({ method: "model" });
    expect(await storedSummary(cairn.url, alice.token, "model-format-2")).toMatchObject({ method: "model" });
    await summarizer.stop();
  });

  it("falls back to extractive when the model is down or times out, and the worker keeps running", async () => {
    stub.chat.set({ kind: "down" });
    await addTurns(cairn.url, alice.token, [turn("model-down", 1)]);
    // The background loop, polling: it must survive the failures and pick up the next session.
    const summarizer = summarizerOver(
      cairn.runtime,
      workspace,
      chatEnv(stub.baseUrl, {
        CAIRN_SUMMARY_WORKER: "on",
        CAIRN_SUMMARY_POLL_MS: "50",
        CAIRN_CHAT_RETRIES: "1",
        CAIRN_CHAT_TIMEOUT_MS: "300",
      }),
    );
    const down = await waitForSummary("model-down");
    expect(down).toMatchObject({ method: "extractive", turn_count: 1 });

    stub.chat.set({ kind: "slow", ms: 3_000 });
    await addTurns(cairn.url, alice.token, [turn("model-slow", 1)]);
    const slow = await waitForSummary("model-slow");
    expect(slow).toMatchObject({ method: "extractive" });

    stub.chat.set({ kind: "structured" });
    await addTurns(cairn.url, alice.token, [turn("model-back", 1)]);
    expect(await waitForSummary("model-back")).toMatchObject({ method: "model", model: "stub-chat" });
    await summarizer.stop();
  });

  it("summarizes a session too long for the model's context in parts, then combines them", async () => {
    stub.chat.set({ kind: "context-limit", maxChars: 3_000 });
    const long = Array.from({ length: 12 }, (_, n) => ({
      session_id: "model-long",
      prompt: `Step ${n}: migrate table ${n} of the billing schema.`,
      thought: `Table ${n} holds ${n * 1000} rows; copying in batches of 500 keeps locks short. `.repeat(4),
      response: `Table ${n} migrated and verified with a row count.`,
    }));
    await addTurns(cairn.url, alice.token, long);
    const summarizer = summarizerOver(cairn.runtime, workspace, chatEnv(stub.baseUrl, { CAIRN_CHAT_CONTEXT_TOKENS: "4096" }));
    const before = stub.chat.calls;
    await summarizer.runOnce();
    const bodies = stub.chat.bodies.slice(before);
    const answered = bodies.filter((b) => b.messages.map((m: { content: string }) => m.content).join("\n").length <= 3_000);
    const refused = bodies.length - answered.length;
    expect(refused).toBeGreaterThan(0);
    expect(answered.filter((b) => /part \d+ of \d+/.test(b.messages.at(-1).content)).length).toBeGreaterThan(1);
    expect(answered.some((b) => b.messages.at(-1).content.includes("consecutive parts"))).toBe(true);
    const summary = await storedSummary(cairn.url, alice.token, "model-long");
    expect(summary).toMatchObject({ method: "model", turn_count: 12 });
    await summarizer.stop();
  });
});

/** Polls get_session until the background worker has written the summary (the test timeout bounds it). */
async function waitForSummary(sessionId: string) {
  for (;;) {
    const summary = await storedSummary(cairn.url, alice.token, sessionId);
    if (summary) return summary;
    await new Promise((r) => setTimeout(r, 100));
  }
}
