import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import yaml from "js-yaml";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startOpenAIStub, type OpenAIStub } from "../../../testing/openai-stub.js";
import { startEmbeddedChroma } from "../src/embedded/chroma-server.js";
import { lockName } from "../src/embedded/data-dir.js";
import { http, turn } from "./support/harness.js";
import { alive, freePort, startMemoryCoreProcess, type MemoryCoreProcess } from "./support/processes.js";

// memory-core as `npm start` runs it (services/server/src/main.ts, a child process) over an embedded Chroma of its
// own, on a data dir of each test's own. Chroma processes are found by their command line in /proc, as an
// operator would find them with ps.

let stub: OpenAIStub;
beforeAll(async () => {
  stub = await startOpenAIStub({ dimension: 16 });
});
afterAll(async () => {
  await stub.close();
});

const started: MemoryCoreProcess[] = [];
const bare: ChildProcess[] = [];
afterEach(async () => {
  for (const core of started.splice(0)) await core.stop();
  for (const child of bare.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

const env = (dataDir: string) => ({
  CAIRN_DATA_DIR: dataDir,
  CAIRN_EMBEDDINGS: "openai",
  CAIRN_EMBEDDINGS_BASE_URL: stub.baseUrl,
  CAIRN_EMBEDDINGS_MODEL: "stub-embed",
});

async function startCore(dataDir: string, logFile = join(dataDir, "..", "memory-core.log")): Promise<MemoryCoreProcess> {
  const core = await startMemoryCoreProcess({ env: env(dataDir), logFile });
  started.push(core);
  return core;
}

async function agentToken(dataDir: string): Promise<string> {
  const tokens = (yaml.load(await readFile(join(dataDir, "tokens.yaml"), "utf8")) as { tokens: Array<{ token: string; role: string }> })
    .tokens;
  return tokens.find((t) => t.role === "agent")!.token;
}

/** Every live process running the chromadb CLI on `path` (`cli.mjs run --path <path>`); an exited, unreaped one has no command line. */
function chromaPids(path: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    let args: string[];
    let cwd: string;
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      cwd = readlinkSync(`/proc/${entry}/cwd`);
    } catch {
      continue;
    }
    const at = args.indexOf("--path");
    const given = at >= 0 ? args[at + 1] : undefined;
    if (!args.includes("run") || !args.some((arg) => arg.endsWith("cli.mjs")) || given === undefined) continue;
    if ((isAbsolute(given) ? given : resolve(cwd, given)) === path) found.push(Number(entry));
  }
  return found;
}

/** A Chroma started as the chromadb CLI runs it, with nothing tying it to this process: the shape a killed start leaves. */
async function startBareChroma(path: string): Promise<number> {
  const library = createRequire(import.meta.url).resolve("chromadb");
  const cli = join(dirname(library), "..", "cli.mjs");
  const port = await freePort();
  const child = spawn(process.execPath, [cli, "run", "--path", path, "--host", "127.0.0.1", "--port", String(port)], {
    stdio: "ignore",
    detached: true,
  });
  bare.push(child);
  await expect
    .poll(
      () =>
        fetch(`http://127.0.0.1:${port}/api/v2/heartbeat`).then(
          (r) => r.ok,
          () => false,
        ),
      { timeout: 60_000, interval: 200 },
    )
    .toBe(true);
  return child.pid!;
}

describe("the embedded Chroma's life", () => {
  it("ends with a SIGKILLed memory-core, and the next start on the data dir runs the only Chroma there, over the same store", async () => {
    const dataDir = join(await mkdtemp(join(tmpdir(), "cairn-life-")), "data");
    const chromaPath = join(dataDir, "chroma");
    const core = await startCore(dataDir);
    const token = await agentToken(dataDir);
    const written = await http(core.url, "POST", "/v1/memories", { token, body: turn("life", 1) });
    expect(written.status).toBe(201);
    const [first, ...others] = chromaPids(chromaPath);
    expect(others).toEqual([]);
    expect(alive(first!)).toBe(true);

    await core.kill();
    await expect.poll(() => chromaPids(chromaPath), { timeout: 60_000, interval: 100 }).toEqual([]);

    await core.restart();
    const now = chromaPids(chromaPath);
    expect(now).toHaveLength(1);
    expect(now[0]).not.toBe(first);
    const owner = JSON.parse(await readFile(join(dataDir, "embedded.json"), "utf8"));
    expect(owner).toMatchObject({ chroma_pid: now[0], chroma_path: chromaPath });
    const recent = await http(core.url, "GET", "/v1/memories/recent", { token });
    expect(recent.body.turns.map((t: { id: string }) => t.id)).toEqual([written.body.id]);

    await core.stop();
    await expect.poll(() => chromaPids(chromaPath), { timeout: 60_000, interval: 100 }).toEqual([]);
  });

  it("stops a Chroma left running on the data dir before it starts its own, and no process that is not that Chroma", async () => {
    const root = await mkdtemp(join(tmpdir(), "cairn-left-"));
    const dataDir = join(root, "data");
    const chromaPath = join(dataDir, "chroma");
    const elsewhere = join(root, "other", "chroma");
    await mkdir(dataDir, { recursive: true });
    const left = await startBareChroma(chromaPath);
    const other = await startBareChroma(elsewhere);
    // A process that names the data path on its command line but is no Chroma, and that the owner record (of an
    // owner that is gone: a pid no process has) names as its Chroma, as a reused pid would.
    const decoy = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)", "run", "--path", chromaPath], { stdio: "ignore" });
    bare.push(decoy);
    await writeFile(
      join(dataDir, "embedded.json"),
      JSON.stringify({ pid: 2 ** 22 + 1, chroma_url: "http://127.0.0.1:9/", chroma_pid: decoy.pid, chroma_path: chromaPath }),
    );
    expect(chromaPids(chromaPath)).toEqual([left]);
    expect(chromaPids(elsewhere)).toEqual([other]);
    expect(alive(decoy.pid!)).toBe(true);

    const core = await startCore(dataDir);
    const now = chromaPids(chromaPath);
    expect(now).toHaveLength(1);
    expect(now).not.toContain(left);
    expect(alive(left)).toBe(false);
    expect(chromaPids(elsewhere)).toEqual([other]);
    expect([decoy.exitCode, decoy.signalCode]).toEqual([null, null]);
    const token = await agentToken(dataDir);
    expect((await http(core.url, "POST", "/v1/memories", { token, body: turn("left", 1) })).status).toBe(201);
  });

  it("lets exactly one of two starts at once on one data dir run, and the other says why in one line", async () => {
    const root = await mkdtemp(join(tmpdir(), "cairn-race-"));
    const dataDir = join(root, "data");
    const chromaPath = join(dataDir, "chroma");
    // Sampled all through the race: a second Chroma on the data path at any moment is the fault, however it ends.
    let most = 0;
    let racing = true;
    const watch = (async () => {
      while (racing) {
        most = Math.max(most, chromaPids(chromaPath).length);
        await new Promise((done) => setTimeout(done, 20));
      }
    })();
    const logs = [join(root, "a.log"), join(root, "b.log")];
    const results = await Promise.allSettled(logs.map((log) => startCore(dataDir, log)));
    racing = false;
    await watch;

    const won = results.filter((r) => r.status === "fulfilled");
    const lost = results.flatMap((r, i) => (r.status === "rejected" ? [logs[i]!] : []));
    expect([won.length, lost.length]).toEqual([1, 1]);
    const busy = /^cairn: CAIRN_DATA_DIR: another Cairn process( \(pid \d+\))? is running on this data dir$/m;
    await expect.poll(() => readFile(lost[0]!, "utf8")).toMatch(busy);
    const output = await readFile(lost[0]!, "utf8");
    expect(output).not.toMatch(/^\s+at /m);
    expect(most).toBe(1);
    expect(chromaPids(chromaPath)).toHaveLength(1);
    const core = (won[0] as PromiseFulfilledResult<MemoryCoreProcess>).value;
    const token = await agentToken(dataDir);
    expect((await http(core.url, "POST", "/v1/memories", { token, body: turn("race", 1) })).status).toBe(201);
  });

  it("serves a stdio MCP client through the Chroma of the running memory-core on the same data dir, starting none", async () => {
    const dataDir = join(await mkdtemp(join(tmpdir(), "cairn-life-stdio-")), "data");
    const chromaPath = join(dataDir, "chroma");
    const core = await startCore(dataDir);
    const token = await agentToken(dataDir);
    const before = chromaPids(chromaPath);
    expect(before).toHaveLength(1);

    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ["--import", "tsx", fileURLToPath(new URL("../src/stdio.ts", import.meta.url))],
      env: { PATH: process.env.PATH ?? "", ...env(dataDir), CAIRN_TOKEN: token },
      stderr: "pipe",
    });
    const client = new Client({ name: "cairn-life-stdio", version: "0.0.0" });
    await client.connect(transport, { timeout: 110_000 });
    try {
      const written = await client.callTool({ name: "add_memory", arguments: turn("life-stdio", 1) });
      expect(written.isError).toBeFalsy();
      expect(chromaPids(chromaPath)).toEqual(before);
    } finally {
      await client.close();
    }
    const recent = await http(core.url, "GET", "/v1/memories/recent", { token });
    expect(recent.body.turns.map((t: { session_id: string }) => t.session_id)).toEqual(["life-stdio"]);
  });

  it("has a stdio MCP process wait for the Chroma of a start that holds the data dir, and use it", async () => {
    const dataDir = join(await mkdtemp(join(tmpdir(), "cairn-life-wait-")), "data");
    const chromaPath = join(dataDir, "chroma");
    await mkdir(dataDir, { recursive: true });
    const token = "w".repeat(40);
    await writeFile(join(dataDir, "tokens.yaml"), yaml.dump({ tokens: [{ token, workspace: "life-wait", agent: "dev", role: "agent" }] }));
    // This test is the start that holds the data dir and has not started its Chroma yet: it holds the lock.
    const lock = createServer((socket) => socket.destroy());
    let asked = 0;
    lock.on("connection", () => asked++);
    const name = await lockName(dataDir);
    await new Promise<void>((done) => lock.listen({ path: name }, done));
    try {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: ["--import", "tsx", fileURLToPath(new URL("../src/stdio.ts", import.meta.url))],
        env: { PATH: process.env.PATH ?? "", ...env(dataDir), CAIRN_TOKEN: token },
        stderr: "pipe",
      });
      let stderr = "";
      transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
      const client = new Client({ name: "cairn-life-wait", version: "0.0.0" });
      let failed: unknown;
      const connected = client.connect(transport, { timeout: 110_000 }).catch((error: unknown) => (failed = error));
      // The stdio process found the data dir held and asks the lock whether its holder still runs.
      await expect.poll(() => asked > 0 || failed !== undefined, { timeout: 110_000, interval: 100 }).toBe(true);
      expect(failed, stderr).toBeUndefined();
      expect(chromaPids(chromaPath)).toEqual([]);

      const chroma = await startEmbeddedChroma({ path: chromaPath, logFile: join(dataDir, "logs", "chroma.log") });
      try {
        await writeFile(join(dataDir, "embedded.json"), JSON.stringify({ pid: process.pid, chroma_url: chroma.url.toString() }));
        await connected;
        expect(failed, stderr).toBeUndefined();
        try {
          const written = await client.callTool({ name: "add_memory", arguments: turn("life-wait", 1) });
          expect(written.isError, stderr).toBeFalsy();
          expect(chromaPids(chromaPath)).toEqual([chroma.pid]);
        } finally {
          await client.close();
        }
      } finally {
        await chroma.stop();
      }
    } finally {
      lock.close();
    }
  });
});
