import { spawn } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import yaml from "js-yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addTurns, chromaUrl, makeToken, startCairn, storedSummary, turn, uniqueWorkspace } from "./support.js";

const workspace = uniqueWorkspace("summ-alone");
const alice = makeToken(workspace, "alice");
let cairn: Awaited<ReturnType<typeof startCairn>>;

beforeAll(async () => {
  cairn = await startCairn([alice]);
});
afterAll(() => cairn?.close());

describe("the summarizer as its own process (npm run summarizer)", () => {
  it("summarizes what memory-core stored in the shared Chroma, and stops cleanly on SIGTERM", async () => {
    await addTurns(cairn.url, alice.token, [turn("alone-1", 1), turn("alone-1", 2)]);
    expect(await storedSummary(cairn.url, alice.token, "alone-1")).toBeNull();

    const dir = await mkdtemp(join(tmpdir(), "cairn-summarizer-"));
    const tokensFile = join(dir, "tokens.yaml");
    await writeFile(tokensFile, yaml.dump({ tokens: [alice] }));
    const entry = fileURLToPath(new URL("../src/main.ts", import.meta.url));
    const child = spawn(process.execPath, ["--import", "tsx", entry], {
      env: {
        PATH: process.env.PATH ?? "",
        CAIRN_CHROMA_URL: chromaUrl().toString(),
        CAIRN_TOKENS_FILE: tokensFile,
        CAIRN_DATA_DIR: dir,
        CAIRN_SUMMARY_IDLE_MS: "0",
        CAIRN_SUMMARY_POLL_MS: "100",
      },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    try {
      let summary = await storedSummary(cairn.url, alice.token, "alone-1");
      while (!summary && child.exitCode === null) {
        await new Promise((r) => setTimeout(r, 200));
        summary = await storedSummary(cairn.url, alice.token, "alone-1");
      }
      expect(summary).toMatchObject({ session_id: "alone-1", turn_count: 2, method: "extractive", agents: ["alice"] });
    } finally {
      child.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
    expect(stderr).toContain('"message":"stopping"');
  });
});
