import { execFileSync } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { describe, expect, it } from "vitest";

/** The test run keeps its scratch under one directory of its own, which its global setup removes at the end. */
describe("a test's scratch", () => {
  it("goes under the run's own directory, in this worker and in the processes it starts", async () => {
    const dir = await mkdtemp(join(tmpdir(), "cairn-scratch-"));
    expect(basename(dirname(dir))).toMatch(/^cairn-test-run-/);
    const child = execFileSync(process.execPath, ["-e", "process.stdout.write(require('node:os').tmpdir())"], { encoding: "utf8" });
    expect(child).toBe(tmpdir());
  });
});
