import { readdir, readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { operationIds } from "./support/contract-schemas.js";

/**
 * Every contract operation must be exercised over REST and over MCP: the transport suites (of any service) name their blocks
 * `<operationId> over REST` and `<operationId> over MCP`, and this test fails for any operation without both.
 */
describe("test coverage of the contract", () => {
  it("has a REST and an MCP test block for every operation", async () => {
    // Every service's tests count: an operation served through another package (summarize_session) is tested there.
    const services = new URL("../../", import.meta.url);
    const dirs = (await readdir(services, { withFileTypes: true }))
      .filter((d) => d.isDirectory())
      .map((d) => new URL(`${d.name}/test/`, services));
    const sources = (
      await Promise.all(
        dirs.map(async (dir) => {
          const files = (await readdir(dir).catch(() => [])).filter((f) => f.endsWith(".test.ts"));
          return Promise.all(files.map((f) => readFile(new URL(f, dir), "utf8")));
        }),
      )
    )
      .flat()
      .join("\n");
    const missing = operationIds().flatMap((id) =>
      ["REST", "MCP"].filter((transport) => !sources.includes(`describe("${id} over ${transport}"`)).map((t) => `${id} over ${t}`),
    );
    expect(operationIds().length).toBeGreaterThan(0);
    expect(missing).toEqual([]);
  });
});
