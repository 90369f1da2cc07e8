import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkRoutes, checkToolCalls, CONTRACT_PATH, compileInputValidators, loadContract, renderReference } from "../src/index.js";

const REFERENCE = new URL("../../docs/contract.md", import.meta.url);

describe("the contract reference (docs/contract.md)", () => {
  it("is a fresh render of the contract (run `npm run docs:contract` after editing the contract)", async () => {
    const committed = await readFile(REFERENCE, "utf8");
    expect(committed).toBe(renderReference(await loadContract()));
  });

  it("renders differently as soon as the contract changes, so a stale reference is caught", async () => {
    const original = await readFile(CONTRACT_PATH, "utf8");
    const marker =
      "description: Turns per page.\n          schema:\n            type: integer\n            minimum: 1\n            maximum: 100";
    expect(original).toContain(marker);
    const dir = await mkdtemp(join(tmpdir(), "cairn-reference-"));
    try {
      const edited = join(dir, "memory-core.yaml");
      await writeFile(edited, original.replace(marker, marker.replace("maximum: 100", "maximum: 99")));
      const fresh = renderReference(await loadContract(edited));
      const current = renderReference(await loadContract());
      expect(fresh).not.toBe(current);
      expect(fresh).toContain("| `limit` | query | integer | no | 1–99 | `20` | Turns per page. |");
      expect(current).toContain("| `limit` | query | integer | no | 1–100 | `20` | Turns per page. |");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("renders the same bytes every time", async () => {
    const contract = await loadContract();
    expect(renderReference(contract)).toBe(renderReference(await loadContract()));
  });

  it("has one example call per operation, each valid input, and only routes of the contract", async () => {
    const contract = await loadContract();
    const reference = await readFile(REFERENCE, "utf8");
    const { calls, problems } = checkToolCalls(reference, contract, compileInputValidators(contract));
    expect(problems).toEqual([]);
    expect(calls.map((c) => c.tool).sort()).toEqual(contract.operations.map((op) => op.operationId).sort());
    const routes = checkRoutes(reference, contract);
    expect(routes.problems).toEqual([]);
    // Every operation's route appears at least in its heading and its curl example.
    expect(routes.routes.length).toBeGreaterThanOrEqual(2 * contract.operations.length);
  });
});
