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

/** One real Chroma server for the whole run, from the chromadb npm CLI; each test file uses its own workspaces. */
export default async function setup(project: TestProject) {
  const dir = await mkdtemp(join(tmpdir(), "cairn-test-chroma-"));
  const chroma = await startEmbeddedChroma({ path: join(dir, "data"), logFile: join(dir, "chroma.log") });
  project.provide("chromaUrl", chroma.url.toString());
  return async () => {
    await chroma.stop();
    await rm(dir, { recursive: true, force: true });
  };
}
