import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { checkRoutes, checkToolCalls, compileInputValidators, loadContract } from "@cairn/openapi";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const RUNBOOKS = join(ROOT, "runbooks");
const AGENT_RUNBOOKS = ["recovery-after-compaction.md", "fresh-start.md", "before-design-review-or-ticket.md", "end-of-turn.md"];

const contract = await loadContract();
const validators = compileInputValidators(contract);

async function markdownFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) =>
      e.isDirectory() ? markdownFiles(join(dir, e.name)) : Promise.resolve(e.name.endsWith(".md") ? [join(dir, e.name)] : []),
    ),
  );
  return nested.flat().sort();
}

describe("the runbooks", () => {
  it("write every tool call as valid input of a contract operation, and every REST route as a contract route", async () => {
    const files = await markdownFiles(RUNBOOKS);
    expect(files.length).toBeGreaterThanOrEqual(AGENT_RUNBOOKS.length);
    const problems: string[] = [];
    let calls = 0;
    for (const file of files) {
      const text = await readFile(file, "utf8");
      const checked = checkToolCalls(text, contract, validators);
      const routes = checkRoutes(text, contract);
      calls += checked.calls.length;
      for (const p of [...checked.problems, ...routes.problems]) problems.push(`${relative(ROOT, file)}:${p.line}: ${p.message}`);
    }
    expect(problems).toEqual([]);
    expect(calls).toBeGreaterThan(20);
  });

  it("give each agent runbook its tool calls, with the tools each procedure is about", async () => {
    const toolsOf = async (name: string) =>
      checkToolCalls(await readFile(join(RUNBOOKS, name), "utf8"), contract, validators).calls.map((c) => c.tool);
    expect(await toolsOf("recovery-after-compaction.md")).toEqual(
      expect.arrayContaining(["query_recent_turns", "query_raw_memories", "query_summaries", "get_memory", "get_session"]),
    );
    // Recovery asks recent turns first, then raw memories, then summaries.
    const recovery = await toolsOf("recovery-after-compaction.md");
    expect(recovery.indexOf("query_recent_turns")).toBeLessThan(recovery.indexOf("query_raw_memories"));
    expect(recovery.indexOf("query_raw_memories")).toBeLessThan(recovery.indexOf("query_summaries"));
    expect(await toolsOf("fresh-start.md")).toEqual(expect.arrayContaining(["query_recent_turns", "query_summaries", "add_memory"]));
    // Both read the inbox and mark what they read.
    for (const name of ["recovery-after-compaction.md", "fresh-start.md"]) {
      expect(await toolsOf(name)).toEqual(expect.arrayContaining(["query_inbox", "ack_messages"]));
    }
    expect(await toolsOf("before-design-review-or-ticket.md")).toEqual(
      expect.arrayContaining(["query_raw_memories", "query_summaries", "assess_change"]),
    );
    // A good and a bad example, both valid calls: what makes them good or bad is their content.
    expect((await toolsOf("end-of-turn.md")).filter((t) => t === "add_memory").length).toBeGreaterThanOrEqual(2);
  });
});

describe("the runbook check", () => {
  const right = [
    "```json",
    '{"tool": "query_raw_memories", "arguments": {"query": "AUTH-412", "mode": "lexical", "limit": 10}}',
    "```",
    "REST: `POST /v1/memories/query`, then `GET /v1/sessions/2026-11-29-auth`.",
  ].join("\n");

  it("passes a call and a route that match the contract", () => {
    expect(checkToolCalls(right, contract, validators)).toMatchObject({ calls: [{ tool: "query_raw_memories", line: 1 }], problems: [] });
    expect(checkRoutes(right, contract)).toMatchObject({ routes: [{ method: "POST" }, { method: "GET" }], problems: [] });
  });

  it("rejects what drifted from the contract: a misspelled argument, a value outside an enum or a limit, an unknown tool, a wrong route", () => {
    const wrong = [
      right.replace('"limit": 10', '"limt": 10'),
      right.replace('"mode": "lexical"', '"mode": "keyword"'),
      right.replace('"limit": 10', '"limit": 500'),
      right.replace('"query_raw_memories"', '"search_memories"'),
      right.replace('{"tool"', '{"tool_name"'),
      right.replace('"limit": 10}}', '"limit": 10}'),
    ];
    const messages = wrong.map((text) => checkToolCalls(text, contract, validators).problems.map((p) => p.message));
    expect(messages).toEqual([
      ["query_raw_memories: limt is not a field of this operation"],
      [expect.stringMatching(/^query_raw_memories: mode /)],
      ["query_raw_memories: limit must be <= 100"],
      ["search_memories is not an operation of the contract"],
      [expect.stringMatching(/must be exactly/)],
      [expect.stringMatching(/not valid JSON/)],
    ]);
    expect(checkRoutes(right.replace("POST /v1/memories/query", "POST /v1/memory/query"), contract).problems).toEqual([
      { line: 4, message: "POST /v1/memory/query is not a route of the contract" },
    ]);
    expect(checkRoutes(right.replace("GET /v1/sessions", "DELETE /v1/sessions"), contract).problems).toHaveLength(1);
  });
});
