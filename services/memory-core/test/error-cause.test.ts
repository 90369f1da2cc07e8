import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import yaml from "js-yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "../src/auth/principal.js";
import { parseTokensFile, TokenRegistry } from "../src/auth/tokens.js";
import { asCairnError, CairnError } from "../src/errors.js";
import { ChromaFaults } from "./support/chroma-faults.js";
import { chromaUrl, http, makeToken, mcpClient, startCairn, turn, uniqueWorkspace, type TestCairn } from "./support/harness.js";

/**
 * A failure below memory-core (Chroma refusing a request, Chroma out of reach) becomes a CairnError that keeps
 * the failure as its ES2022 `cause`, for the logs, while the REST problem and the MCP tool error carry only the
 * code, detail and hint written for the caller: never the cause's words.
 */

// What Chroma says when it refuses: the words must reach the cause and must not reach any answer.
const CHROMA_WORDS = "chroma-internal-marker /var/lib/chroma/segment-7f3a";

const workspace = uniqueWorkspace("cause");
const dev = makeToken(workspace, "dev");
const principal = new TokenRegistry(parseTokensFile(yaml.dump({ tokens: [dev] }))).resolve(dev.token) as Principal;

let faults: ChromaFaults;
let cairn: TestCairn;
let mcp: Client;

beforeAll(async () => {
  faults = await ChromaFaults.start(chromaUrl());
  cairn = await startCairn([dev], { chroma: faults.url });
  const stored = await http(cairn.url, "POST", "/v1/memories", { token: dev.token, body: turn("s-cause", 1) });
  expect(stored.status).toBe(201);
  mcp = await mcpClient(cairn.url, dev.token);
});

afterAll(async () => {
  faults.set(() => "pass");
  await mcp?.close();
  await cairn?.close();
  await faults?.stop();
});

/** The error the executor rejects with, for a read while `faults` refuses or cuts Chroma's calls. */
async function failedRead(): Promise<CairnError> {
  const error: unknown = await cairn.runtime.executor.execute("query_recent_turns", { limit: 5 }, principal, "rest").then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CairnError);
  return error as CairnError;
}

/** The words of an error and of every cause below it. */
function words(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e !== undefined && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    parts.push(String((e as Error)?.message ?? e), String((e as { detail?: unknown }).detail ?? ""));
  }
  return parts.join(" | ");
}

describe("a CairnError keeps the failure it stands for", () => {
  it("Chroma refusing a read: internal, Chroma's words on the cause, none in the REST problem or the MCP tool error", async () => {
    faults.set(() => ({ status: 400, body: JSON.stringify({ error: "InvalidArgumentError", message: CHROMA_WORDS }) }));
    try {
      const error = await failedRead();
      expect([error.code, error.status]).toEqual(["internal", 500]);
      expect(error.cause).toBeInstanceOf(Error);
      expect(words(error.cause)).toContain("chroma-internal-marker");

      const rest = await http(cairn.url, "GET", "/v1/memories/recent?limit=5", { token: dev.token });
      expect([rest.status, rest.body.code]).toEqual([500, "internal"]);
      expect(Object.keys(rest.body).sort()).toEqual(["code", "detail", "hint", "status", "title", "type"]);
      expect(rest.text).not.toContain("chroma-internal-marker");
      expect(rest.text).not.toContain("/var/lib");

      const tool = await mcp.callTool({ name: "query_recent_turns", arguments: { limit: 5 } });
      const text = (tool.content as Array<{ text: string }>)[0]!.text;
      expect([tool.isError, JSON.parse(text).code]).toEqual([true, "internal"]);
      expect(text).not.toContain("chroma-internal-marker");
      expect(text).not.toContain("cause");
    } finally {
      faults.set(() => "pass");
    }
    // The same read, Chroma answering again: the turn is there (the refusal above was Chroma's, not the data's).
    const again = await http(cairn.url, "GET", "/v1/memories/recent?limit=5", { token: dev.token });
    expect([again.status, again.body.turns.length]).toEqual([200, 1]);
  });

  it("Chroma out of reach: unavailable, with the connection's failure as the cause and none in the answers", async () => {
    faults.set(() => "cut");
    try {
      const error = await failedRead();
      expect([error.code, error.status]).toEqual(["unavailable", 503]);
      expect(error.cause).toBeInstanceOf(Error);
      const cause = (error.cause as Error).name;
      expect(["Unreachable", "ChromaConnectionError"]).toContain(cause);

      const rest = await http(cairn.url, "GET", "/v1/memories/recent?limit=5", { token: dev.token });
      expect([rest.status, rest.body.code]).toEqual([503, "unavailable"]);
      expect(Object.keys(rest.body).sort()).toEqual(["code", "detail", "hint", "status", "title", "type"]);
      expect(rest.body.detail).toBe("The memory store cannot be reached right now.");
      expect(rest.text).not.toContain(cause);

      const tool = await mcp.callTool({ name: "query_recent_turns", arguments: { limit: 5 } });
      const text = (tool.content as Array<{ text: string }>)[0]!.text;
      expect([tool.isError, JSON.parse(text).code]).toEqual([true, "unavailable"]);
      expect(JSON.parse(text).detail).toBe("The memory store cannot be reached right now.");
      expect(text).not.toContain(cause);
    } finally {
      faults.set(() => "pass");
    }
  });

  it("an unknown failure becomes internal with the failure kept as its cause", () => {
    const failure = new RangeError("offset 12 out of range in /srv/cairn/index");
    const error = asCairnError(failure);
    expect([error.code, error.cause]).toEqual(["internal", failure]);
    expect(JSON.stringify(error.toProblem())).not.toContain("/srv/cairn");
    // A CairnError stays as it is.
    expect(asCairnError(error)).toBe(error);
  });
});
