import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WarmUpError } from "../src/runtime.js";
import { describeStartError } from "../src/start-errors.js";
import { ChromaFaults } from "./support/chroma-faults.js";
import { chromaUrl, http, makeToken, startCairn, storeTurnsAndStop, uniqueWorkspace, warningsLog } from "./support/harness.js";

/**
 * memory-core's start over a store whose first reads Chroma is slow to answer (a large store loads its indexes
 * then): the warm-up is tried again while Chroma answers its heartbeat, and the start fails when it does not.
 */

const workspace = uniqueWorkspace("warmup");
const dev = makeToken(workspace, "dev");
let faults: ChromaFaults;

beforeAll(async () => {
  faults = await ChromaFaults.start(chromaUrl());
  await storeTurnsAndStop(dev, "warmup", 3, { chroma: faults.url });
});
afterAll(() => faults.stop());

describe("a start whose first reads Chroma does not answer in time", () => {
  it("warms up again while Chroma answers its heartbeat, then serves", async () => {
    let cut = 0;
    faults.set((call) => (call.verb === "get" && cut++ < 2 ? "cut" : "pass"));
    const { log, warnings } = warningsLog();
    const cairn = await startCairn([dev], { chroma: faults.url, runtimeLog: log });
    try {
      expect(cut).toBeGreaterThanOrEqual(2);
      expect(warnings.filter((w) => w.includes("warming up again")).length).toBeGreaterThanOrEqual(1);
      const recent = await http(cairn.url, "GET", "/v1/memories/recent?limit=10", { token: dev.token });
      expect(recent.status).toBe(200);
      expect(recent.body.turns).toHaveLength(3);
    } finally {
      await cairn.close();
      faults.set(() => "pass");
    }
  });

  it("gives up after a bounded number of attempts, saying Chroma answers but its first reads did not", async () => {
    let cut = 0;
    faults.set((call) => {
      if (call.verb !== "get") return "pass";
      cut++;
      return "cut";
    });
    const { log, warnings } = warningsLog();
    try {
      const error = await startCairn([dev], { chroma: faults.url, runtimeLog: log }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(WarmUpError);
      const line = describeStartError(error);
      expect(line).toContain(`workspace "${workspace}"`);
      expect(line).toMatch(/^Chroma answers, but did not answer the first reads/);
      expect(line).not.toMatch(/cannot be reached|CAIRN_CHROMA_URL/);
      // Bounded: one warning per attempt but the last, the reads cut every time.
      expect(warnings.filter((w) => w.includes("warming up again")).length).toBe((error as WarmUpError).attempts - 1);
      expect(cut).toBeGreaterThanOrEqual((error as WarmUpError).attempts);
    } finally {
      faults.set(() => "pass");
    }
    // The store is as it was: a start once Chroma answers serves the same turns.
    const cairn = await startCairn([dev], { chroma: faults.url });
    try {
      const recent = await http(cairn.url, "GET", "/v1/memories/recent?limit=10", { token: dev.token });
      expect(recent.body.turns).toHaveLength(3);
    } finally {
      await cairn.close();
    }
  });

  it("fails when Chroma does not answer its heartbeat either", async () => {
    let gets = 0;
    faults.set((call) => {
      if (call.verb === "get") gets++;
      // Chroma answers the start's first heartbeat, then goes away at its first read.
      return call.verb === "get" || (call.verb === "heartbeat" && gets > 0) ? "cut" : "pass";
    });
    const { log, warnings } = warningsLog();
    try {
      await expect(startCairn([dev], { chroma: faults.url, runtimeLog: log })).rejects.toMatchObject({ code: "unavailable" });
      expect(gets).toBeGreaterThanOrEqual(1);
      expect(faults.calls.some((c) => c.verb === "heartbeat")).toBe(true);
      expect(warnings.filter((w) => w.includes("warming up again"))).toEqual([]);
    } finally {
      faults.set(() => "pass");
    }
  });
});
