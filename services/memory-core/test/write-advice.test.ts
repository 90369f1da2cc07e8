import { readdir, readFile } from "node:fs/promises";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { writeAdvice } from "../src/records/write-advice.js";
import { http, makeToken, mcpClient, uniqueWorkspace, useCairn } from "./support/harness.js";

const workspace = uniqueWorkspace("advice");
const alice = makeToken(workspace, "alice");
const cairn = useCairn([alice]);

/** Every add_memory call the runbooks show, by its session: the runbooks' good entries and their one bad one. */
async function runbookEntries(): Promise<Array<Record<string, any>>> {
  const dir = new URL("../../../runbooks/", import.meta.url);
  const entries: Array<Record<string, any>> = [];
  for (const file of (await readdir(dir)).filter((f) => f.endsWith(".md"))) {
    const text = await readFile(new URL(file, dir), "utf8");
    for (const [, block] of text.matchAll(/```json\n([\s\S]*?)```/g)) {
      const call = JSON.parse(block!) as { tool: string; arguments: Record<string, any> };
      if (call.tool === "add_memory") entries.push(call.arguments);
    }
  }
  return entries;
}

const advice = (entry: Record<string, any>) => writeAdvice({ refs: [], checks: [], ...entry } as any);

describe("advice on writing", () => {
  it("has nothing to say about the runbooks' good entries, and names what their bad one lacks", async () => {
    const entries = await runbookEntries();
    const bad = entries.filter((e) => e.session_id === "s1");
    const good = entries.filter((e) => e.session_id !== "s1");
    expect(bad).toHaveLength(1);
    expect(good.length).toBeGreaterThanOrEqual(3);
    for (const entry of good) expect(advice(entry), entry.prompt).toEqual([]);
    const said = advice(bad[0]!).join(" ");
    expect(said).toContain("No next step");
    expect(said).toContain("Nothing names a file, ticket or commit");
  });

  it("spots a log of commands, and a decision with no evidence; the same entries written well get no advice", () => {
    const log = {
      prompt: "AUTH-412 refresh",
      thought: "$ git pull\n$ npm ci\n$ npm test -- auth\n$ git push",
      response: "npm run deploy\nNext: watch the dashboard.",
    };
    expect(advice(log).join(" ")).toContain("log of commands");
    expect(advice({ ...log, thought: `${log.thought}\nDecided to deploy because the auth tests pass on 7b9e0c2.` })).toEqual([]);

    const bare = {
      kind: "decision",
      prompt: "AUTH-412 queue",
      thought: "Decided: a Redis stream for refreshes.",
      response: "Next: wire it in src/auth/refresh.ts.",
    };
    expect(advice(bare).join(" ")).toContain("A decision with no evidence");
    expect(advice({ ...bare, thought: "Decided: a Redis stream for refreshes; p95 38 ms measured on staging." })).toEqual([]);
    expect(advice({ ...bare, checks: [{ name: "auth tests", status: "passed" }] })).toEqual([]);
  });
});

describe("advice with add_memory", () => {
  it("comes back with the write (REST and MCP) when the entry will recall badly, and the write is stored all the same", async () => {
    const weak = {
      session_id: "advice-1",
      prompt: "fix the refresh thing",
      thought: "Tried two approaches; the second works better.",
      response: "Done.",
    };
    const res = await http(cairn.url, "POST", "/v1/memories", { token: alice.token, body: weak });
    expect(res.status).toBe(201);
    expect(res.body.advice.join(" ")).toContain("No next step");
    expect((await http(cairn.url, "GET", `/v1/memories/${res.body.id}`, { token: alice.token })).status).toBe(200);
    // A retry is answered with the same advice.
    expect((await http(cairn.url, "POST", "/v1/memories", { token: alice.token, body: weak })).body.advice).toEqual(res.body.advice);

    const client = await mcpClient(cairn.url, alice.token);
    try {
      const good = {
        session_id: "advice-2",
        prompt: "AUTH-412: dead-letter queue for failed refreshes",
        thought: "Decided: a second Redis stream; 0 lost in 10,000 refreshes at 5% failures (npm run bench -- refresh).",
        response: "Done in src/auth/refresh-dlq.ts. Next: replay tooling.",
        refs: ["AUTH-412"],
      };
      const result = (await client.callTool({ name: "add_memory", arguments: good })) as { structuredContent?: any };
      expect(result.structuredContent.id).toMatch(/^t_/);
      expect(result.structuredContent).not.toHaveProperty("advice");
      const weakOver = (await client.callTool({ name: "add_memory", arguments: { ...weak, session_id: "advice-3" } })) as {
        structuredContent?: any;
      };
      expect(weakOver.structuredContent.advice.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });
});

/** The figure and identifier patterns as first written, tried at every character: the oracle of the ones in use. */
const REFERENCE_EVIDENCE =
  /\d+(?:[.,]\d+)?\s?(?:ms|s|%|x|kb|mb|gb|rps|qps|req\/s)\b|\b(?:p9\d|p50|measured|benchmark|bench|profiled?|tests? (?:pass|fail)\w*|reproduced)\b|https?:\/\//i;
const REFERENCE_IDENTIFIER =
  /[\w.-]+\/[\w./-]+|\b\w+\.(?:ts|js|py|go|rs|java|rb|sql|ya?ml|json|md|tsx|jsx|sh|toml)\b|\b[A-Z][A-Z0-9]+-\d+\b|#\d+\b|\b[0-9a-f]{7,40}\b|`[^`]+`/;

describe("write advice on any text", () => {
  it("asks for evidence and for an identifier exactly when the first patterns found none (property)", () => {
    const pieces = fc.oneof(
      fc.constantFrom("a", "Z", "7", "0", ".", ",", "-", "/", "_", " ", "\n", "ms", "s", "%", "kb", "x", "#", "`"),
      fc.constantFrom("src/a.ts", "40 ms", "1.5s", "AUTH-412", "#12", "abc1234", "measured", "https://x", "a.-/b", "9,5 %"),
      fc.string({ maxLength: 6 }),
    );
    const texts = fc.array(pieces, { maxLength: 30 }).map((parts) => parts.join(""));
    fc.assert(
      fc.property(texts, (text) => {
        const advice = writeAdvice({ prompt: "Decide.", thought: text, response: "Next: ship.", kind: "decision" }).join("\n");
        const whole = ["Decide.", text, "Next: ship."].join("\n");
        expect(advice.includes("A decision with no evidence")).toBe(!REFERENCE_EVIDENCE.test(whole));
        expect(advice.includes("Nothing names a file")).toBe(!REFERENCE_IDENTIFIER.test(whole));
      }),
      { numRuns: 2000, seed: 20261204 },
    );
  });
});
