import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import yaml from "js-yaml";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { createLogger, silentLogger } from "../src/logger.js";
import { startStack, type Stack } from "../src/stack.js";
import { describeStartError } from "../src/start-errors.js";
import { freePort, startEmbeddedChroma } from "../src/embedded/chroma-server.js";
import { startOpenAIStub } from "../../../testing/openai-stub.js";
import { ChromaFaults } from "./support/chroma-faults.js";
import { expectNoLeak } from "./support/no-leak.js";
import { alive } from "./support/processes.js";
import { chromaUrl, http, makeToken, mcpClient, sharedEmbedder, startCairn, turn, uniqueWorkspace } from "./support/harness.js";

const running: Stack[] = [];
afterEach(async () => {
  for (const stack of running.splice(0)) await stack.stop();
});

const embeddedConfig = (dataDir: string) => loadConfig({ CAIRN_DATA_DIR: dataDir, CAIRN_PORT: "0" });

describe("the embedded default (npm start)", () => {
  it("writes a tokens file on first start, and finds every memory again after a restart", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "cairn-stack-"));
    const first = await startStack({ config: embeddedConfig(dataDir), log: silentLogger, embedder: await sharedEmbedder() });
    running.push(first);
    expect(first.embeddedChroma).toBe(true);
    const agent = first.generatedTokens?.find((t) => t.role === "agent");
    expect(agent).toBeDefined();
    expect(await readFile(join(dataDir, "tokens.yaml"), "utf8")).toContain(agent!.token);

    const ids: string[] = [];
    for (let n = 1; n <= 12; n++) {
      const body =
        n === 7
          ? {
              session_id: "restart-1",
              prompt: "Profile the nightly export job.",
              thought: "The CSV writer flushes on every row.",
              response: "Buffered the CSV writer.",
            }
          : turn(`restart-${n % 3}`, n);
      const res = await http(first.url, "POST", "/v1/memories", { token: agent!.token, body });
      expect(res.status).toBe(201);
      ids.push(res.body.id);
    }
    await running.pop()!.stop();
    expect((await fetch(new URL("/healthz", first.url)).catch(() => undefined))?.ok).not.toBe(true);

    const second = await startStack({ config: embeddedConfig(dataDir), log: silentLogger, embedder: await sharedEmbedder() });
    running.push(second);
    expect(second.generatedTokens).toBeUndefined();
    const recent = await http(second.url, "GET", "/v1/memories/recent?limit=100", { token: agent!.token });
    expect(recent.status).toBe(200);
    expect(recent.body.turns.map((t: { id: string }) => t.id).sort()).toEqual([...ids].sort());
    const found = await http(second.url, "POST", "/v1/memories/query", {
      token: agent!.token,
      body: { query: "why was the nightly CSV export slow" },
    });
    expect(found.body.hits[0].memory.id).toBe(ids[6]);
  });

  it("tells a Chroma that answers with errors from one that cannot be reached", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "cairn-stack-5xx-"));
    const failing = await ChromaFaults.start(chromaUrl());
    failing.set(() => ({ status: 500, body: JSON.stringify({ error: "InternalError", message: "Error executing plan" }) }));
    try {
      const embedder = await sharedEmbedder();
      const start = (url: URL) =>
        startStack({
          config: loadConfig({
            CAIRN_DATA_DIR: dataDir,
            CAIRN_PORT: "0",
            CAIRN_CHROMA_URL: url.toString(),
            CAIRN_TOKENS_FILE: join(dataDir, "t.yaml"),
          }),
          log: silentLogger,
          embedder,
        }).catch((e) => e);
      await writeFile(
        join(dataDir, "t.yaml"),
        `tokens:\n  - token: ${"c".repeat(40)}\n    workspace: ws-5xx\n    agent: dev\n    role: agent\n`,
      );
      const answering = describeStartError(await start(failing.url));
      expect(answering).not.toMatch(/cannot be reached/);
      expect(answering).toMatch(/failed to answer/);
      const nobody = new URL(failing.url);
      await failing.stop();
      expect(describeStartError(await start(nobody))).toMatch(/^Chroma cannot be reached/);
    } finally {
      await failing.stop().catch(() => undefined);
    }
  });

  it("refuses a second start on a data dir that a running Cairn owns", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "cairn-stack-busy-"));
    running.push(await startStack({ config: embeddedConfig(dataDir), log: silentLogger, embedder: await sharedEmbedder() }));
    const error = await startStack({ config: embeddedConfig(dataDir), log: silentLogger, embedder: await sharedEmbedder() }).catch(
      (e) => e,
    );
    expect(describeStartError(error)).toMatch(/^CAIRN_DATA_DIR: another Cairn process/);
  });

  it("refuses a missing tokens file that the operator named", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "cairn-stack-tokens-"));
    const config = loadConfig({ CAIRN_DATA_DIR: dataDir, CAIRN_PORT: "0", CAIRN_TOKENS_FILE: join(dataDir, "nope.yaml") });
    const error = await startStack({ config, log: silentLogger, embedder: await sharedEmbedder() }).catch((e) => e);
    expect(describeStartError(error)).toBe("CAIRN_TOKENS_FILE: names a file that does not exist");
  });
});

describe("Ctrl-C in a terminal, or the terminal closed", () => {
  it.each(["SIGINT", "SIGHUP"] as const)(
    "%s to the group stops memory-core before its embedded Chroma, so the lexical snapshots are written, and leaves no Chroma behind",
    async (signal) => {
      const stub = await startOpenAIStub({ dimension: 16 });
      try {
        const dataDir = await mkdtemp(join(tmpdir(), "cairn-ctrlc-"));
        const port = await freePort();
        const main = fileURLToPath(new URL("../../server/src/main.ts", import.meta.url));
        // A process group of its own, as a terminal's foreground job: Ctrl-C signals every process in it.
        const child = spawn(process.execPath, ["--import", "tsx", main], {
          env: {
            PATH: process.env.PATH ?? "",
            HOME: process.env.HOME ?? "",
            CAIRN_DATA_DIR: dataDir,
            CAIRN_PORT: String(port),
            CAIRN_HOST: "127.0.0.1",
            CAIRN_EMBEDDINGS: "openai",
            CAIRN_EMBEDDINGS_BASE_URL: stub.baseUrl,
            CAIRN_EMBEDDINGS_MODEL: "stub-embed",
          },
          stdio: ["ignore", "pipe", "pipe"],
          detached: true,
        });
        let output = "";
        child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
        child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
        const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
        const url = new URL(`http://127.0.0.1:${port}`);
        await expect
          .poll(
            () =>
              fetch(new URL("/readyz", url)).then(
                (r) => r.ok,
                () => false,
              ),
            { timeout: 110_000, interval: 200 },
          )
          .toBe(true);
        const tokens = (
          yaml.load(await readFile(join(dataDir, "tokens.yaml"), "utf8")) as {
            tokens: Array<{ token: string; role: string; workspace: string }>;
          }
        ).tokens;
        const agent = tokens.find((t) => t.role === "agent")!;
        const written = await http(url, "POST", "/v1/memories", { token: agent.token, body: turn("ctrl-c", 1) });
        expect(written.status).toBe(201);
        const chroma = chromaPid(join(dataDir, "chroma"));

        process.kill(-child.pid!, signal);
        expect(await exited).toBe(0);
        expect(output).toContain('"message":"lexical snapshot written"');
        expect(output).not.toContain("lexical snapshot not written");
        expect(output).not.toContain("the embedded chroma stopped");
        const snapshot = await readFile(join(dataDir, "lexical", encodeURIComponent(agent.workspace), "turns.snap"), "utf8");
        expect(snapshot).toContain(written.body.id);
        // Its Chroma went with it, stopped by memory-core.
        await expect.poll(() => alive(chroma), { timeout: 30_000 }).toBe(false);
      } finally {
        await stub.close();
      }
    },
  );
});

describe("an embedded Chroma that crashes", () => {
  it("is named in the log with how it ended, and requests answer 503 until a restart, which finds every memory", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "cairn-crash-"));
    const lines: string[] = [];
    const stack = await startStack({
      config: embeddedConfig(dataDir),
      log: createLogger("crash-test", (line) => lines.push(line)),
      embedder: await sharedEmbedder(),
    });
    running.push(stack);
    const agent = stack.generatedTokens!.find((t) => t.role === "agent")!;
    const written = await http(stack.url, "POST", "/v1/memories", { token: agent.token, body: turn("crash", 1) });
    expect(written.status).toBe(201);
    const recent = (s: Stack) => http(s.url, "GET", "/v1/memories/recent", { token: agent.token });
    expect((await recent(stack)).body.turns.map((t: { id: string }) => t.id)).toEqual([written.body.id]);
    const ended = () => lines.map((l) => JSON.parse(l)).filter((l) => l.message.startsWith("the embedded chroma stopped"));
    expect(ended()).toEqual([]);

    // Chroma 1.0 crashes this way (SIGSEGV) on a vector index damaged by a hard kill while it saved it.
    process.kill(chromaPid(join(dataDir, "chroma")), "SIGSEGV");
    await expect.poll(() => ended().length).toBe(1);
    expect(ended()[0]).toMatchObject({ level: "error", how: "signal SIGSEGV", log_file: join(dataDir, "logs", "chroma.log") });
    const refused = await recent(stack);
    expect([refused.status, refused.body.code]).toEqual([503, "unavailable"]);
    expectNoLeak(refused.text, [stack.chromaUrl.port]);
    expect(ended()).toHaveLength(1);

    // Its own stop is not a crash: a restart over the same store says nothing of the kind, and finds the turn.
    await running.pop()!.stop();
    lines.length = 0;
    const again = await startStack({
      config: embeddedConfig(dataDir),
      log: createLogger("crash-test", (line) => lines.push(line)),
      embedder: await sharedEmbedder(),
    });
    running.push(again);
    expect((await recent(again)).body.turns.map((t: { id: string }) => t.id)).toEqual([written.body.id]);
    await running.pop()!.stop();
    expect(ended()).toEqual([]);
  });
});

/** The process of the embedded Chroma serving `path`, found by its command line. */
function chromaPid(path: string): number {
  const pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  for (const pid of pids) {
    const command = (() => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      } catch {
        return [];
      }
    })();
    if (command.includes("run") && command.includes(path)) return Number(pid);
  }
  throw new Error(`no Chroma process serves ${path}`);
}

describe("embedding stamps", () => {
  it("refuses to start over collections embedded with another model, naming the fix", async () => {
    const workspace = uniqueWorkspace("stamp");
    const token = makeToken(workspace, "dev");
    // The workspace is first created by the local embedder (512 dimensions)...
    const local = await startCairn([token]);
    await http(local.url, "POST", "/v1/memories", { token: token.token, body: turn("stamp", 1) });
    await local.close();
    // ...then a start with an OpenAI-compatible model of another dimension must refuse it.
    const stub = await startOpenAIStub({ dimension: 16 });
    try {
      const dataDir = await mkdtemp(join(tmpdir(), "cairn-stamp-"));
      const tokensFile = join(dataDir, "tokens.yaml");
      const { writeFile } = await import("node:fs/promises");
      const yaml = (await import("js-yaml")).default;
      await writeFile(tokensFile, yaml.dump({ tokens: [token] }));
      const config = loadConfig({
        CAIRN_DATA_DIR: dataDir,
        CAIRN_PORT: "0",
        CAIRN_TOKENS_FILE: tokensFile,
        CAIRN_CHROMA_URL: chromaUrl().toString(),
        CAIRN_EMBEDDINGS: "openai",
        CAIRN_EMBEDDINGS_BASE_URL: stub.baseUrl,
        CAIRN_EMBEDDINGS_MODEL: "stub-embed",
      });
      const error = await startStack({ config, log: silentLogger }).catch((e) => e);
      const line = describeStartError(error);
      expect(line).toContain("use-lite-512 (512 dimensions)");
      expect(line).toContain("openai:stub-embed (16 dimensions)");
      expect(line).toContain("cairn reembed");
      // The same model that created the workspace starts fine over it.
      const fine = await startCairn([token]);
      expect((await http(fine.url, "GET", "/v1/memories/recent", { token: token.token })).body.turns).toHaveLength(1);
      await fine.close();

      // A fresh workspace under the OpenAI-compatible embedder works end to end, batched through the stub.
      const other = makeToken(uniqueWorkspace("stub"), "dev");
      await writeFile(tokensFile, yaml.dump({ tokens: [other] }));
      const stack = await startStack({ config, log: silentLogger });
      running.push(stack);
      const written = await http(stack.url, "POST", "/v1/memories", {
        token: other.token,
        body: { session_id: "stub", prompt: "kafka consumer lag alert", thought: "lag grew after the deploy", response: "rolled back" },
      });
      expect(written.status).toBe(201);
      await http(stack.url, "POST", "/v1/memories", {
        token: other.token,
        body: { session_id: "stub", prompt: "office plants", thought: "water them weekly", response: "done" },
      });
      const hit = await http(stack.url, "POST", "/v1/memories/query", { token: other.token, body: { query: "kafka consumer lag" } });
      expect(hit.body.hits[0].memory.id).toBe(written.body.id);
      expect(stub.requests.filter((r) => r.path === "/v1/embeddings").length).toBeGreaterThanOrEqual(4);
    } finally {
      await stub.close();
    }
  });
});

describe("when Chroma goes away", () => {
  it("answers 503 unavailable without naming the host, and recovers nothing it did not have", async () => {
    const dir = await mkdtemp(join(tmpdir(), "cairn-down-"));
    const chroma = await startEmbeddedChroma({ path: join(dir, "data"), logFile: join(dir, "chroma.log") });
    const token = makeToken(uniqueWorkspace("down"), "dev");
    const cairn = await startCairn([token], { chroma: chroma.url });
    try {
      const before = await http(cairn.url, "POST", "/v1/memories", { token: token.token, body: turn("down", 1) });
      expect(before.status).toBe(201);
      const ready = await http(cairn.url, "GET", "/readyz");
      expect(ready.status).toBe(200);
      const found = await http(cairn.url, "POST", "/v1/memories/query", { token: token.token, body: { query: turn("down", 1).prompt } });
      expect(found.status).toBe(200);
      expect(found.body.hits.map((h: { memory: { id: string } }) => h.memory.id)).toContain(before.body.id);
      await chroma.stop();
      const write = await http(cairn.url, "POST", "/v1/memories", { token: token.token, body: turn("down", 2) });
      expect(write.status).toBe(503);
      expect(write.body.code).toBe("unavailable");
      // Every 503 says when to come back; a 201 before it did not.
      expect(write.headers.get("retry-after")).toBe("2");
      expect(before.headers.get("retry-after")).toBeNull();
      expectNoLeak(write.text, [token.token, chroma.url.port]);
      const read = await http(cairn.url, "GET", "/v1/memories/recent", { token: token.token });
      expect(read.status).toBe(503);
      expectNoLeak(read.text, [token.token, chroma.url.port]);
      // Queries read Chroma over a connection pool of their own (net/json-client.ts): the same answer.
      const search = await http(cairn.url, "POST", "/v1/memories/query", { token: token.token, body: { query: turn("down", 1).prompt } });
      expect([search.status, search.body.code]).toEqual([503, "unavailable"]);
      expect(search.headers.get("retry-after")).toBe("2");
      const client = await mcpClient(cairn.url, token.token);
      try {
        const overMcp = (await client.callTool({ name: "query_recent_turns", arguments: {} })) as {
          isError?: boolean;
          content: Array<{ text: string }>;
        };
        expect(overMcp.isError).toBe(true);
        expect(JSON.parse(overMcp.content[0]!.text)).toMatchObject({ code: "unavailable", status: 503, retry_after_s: 2 });
        const refused = (await client.callTool({ name: "query_recent_turns", arguments: { limit: 0 } })) as {
          isError?: boolean;
          content: Array<{ text: string }>;
        };
        expect(JSON.parse(refused.content[0]!.text)).not.toHaveProperty("retry_after_s");
      } finally {
        await client.close();
      }
      expectNoLeak(search.text, [token.token, chroma.url.port]);
      const notReady = await http(cairn.url, "GET", "/readyz");
      expect(notReady.status).toBe(503);
      expect(notReady.headers.get("retry-after")).toBe("2");
      expect(notReady.body.checks.chroma).toBe("failing");
    } finally {
      await cairn.close();
      await chroma.stop();
    }
  });
});
