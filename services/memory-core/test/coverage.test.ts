import { readdir, readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { operationIds } from "./support/contract-schemas.js";

/**
 * Every contract operation must be exercised over REST and over MCP: the transport suites name their blocks
 * `<operationId> over REST` and `<operationId> over MCP`, and this test fails for any operation without both.
 */
describe("test coverage of the contract", () => {
  it("has a REST and an MCP test block for every operation", async () => {
    const dir = new URL("./", import.meta.url);
    const files = (await readdir(dir)).filter((f) => f.endsWith(".test.ts"));
    const sources = (await Promise.all(files.map((f) => readFile(new URL(f, dir), "utf8")))).join("\n");
    const missing = operationIds().flatMap((id) =>
      ["REST", "MCP"].filter((transport) => !sources.includes(`describe("${id} over ${transport}"`)).map((t) => `${id} over ${t}`),
    );
    expect(operationIds().length).toBeGreaterThan(0);
    expect(missing).toEqual([]);
  });
});
