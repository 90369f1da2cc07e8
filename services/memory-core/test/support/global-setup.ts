import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { startEmbeddedChroma } from "../../src/embedded/chroma-server.js";

declare module "vitest" {
  export interface ProvidedContext {
    chromaUrl: string;
  }
}

/**
 * One real Chroma server for the whole run, from the chromadb npm CLI; each test file uses its own workspaces.
 * The run's scratch (Chroma's data, every test's data dirs and the processes they start) goes under one directory
 * of its own, the temporary directory of the test workers and their children, removed when the run ends.
 */
export default async function setup(project: TestProject) {
  const outerTmp = process.env.TMPDIR;
  const scratch = await mkdtemp(join(tmpdir(), "cairn-test-run-"));
  process.env.TMPDIR = scratch;
  const chroma = await startEmbeddedChroma({ path: join(scratch, "chroma", "data"), logFile: join(scratch, "chroma", "chroma.log") });
  project.provide("chromaUrl", chroma.url.toString());
  return async () => {
    await chroma.stop();
    if (outerTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = outerTmp;
    await rm(scratch, { recursive: true, force: true });
  };
}
