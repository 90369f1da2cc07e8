import { existsSync } from "node:fs";
import { mkdtemp, readFile, stat, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeAtomically } from "@cairn/loader/atomic-write";
import yaml from "js-yaml";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../memory-core/src/config.js";
import type { Logger } from "../../memory-core/src/logger.js";
import { startStack, type Stack } from "../../memory-core/src/stack.js";
import { chromaUrl, http, makeToken, mcpClient, sharedEmbedder, turn, uniqueWorkspace } from "../../memory-core/test/support/harness.js";
import { cairnCli } from "./support/run-cli.js";

const running: Stack[] = [];
afterEach(async () => {
  for (const stack of running.splice(0)) await stack.stop();
});

function capturingLog(): { log: Logger; errors: string[]; infos: string[] } {
  const errors: string[] = [];
  const infos: string[] = [];
  const line = (message: string, fields?: Record<string, unknown>) => `${message} ${JSON.stringify(fields ?? {})}`;
  return {
    log: { info: (m, f) => infos.push(line(m, f)), warn() {}, error: (m, f) => errors.push(line(m, f)) },
    errors,
    infos,
  };
}

async function serving(tokensFile: string, log: Logger) {
  const dir = await mkdtemp(join(tmpdir(), "cairn-tokens-"));
  const stack = await startStack({
    config: loadConfig({ CAIRN_DATA_DIR: dir, CAIRN_PORT: "0", CAIRN_TOKENS_FILE: tokensFile, CAIRN_CHROMA_URL: chromaUrl().toString() }),
    log,
    embedder: await sharedEmbedder(),
  });
  running.push(stack);
  return stack;
}

const recentStatus = async (stack: Stack, token: string) => (await http(stack.url, "GET", "/v1/memories/recent?limit=5", { token })).status;

describe("cairn tokens: added and revoked while memory-core serves", () => {
  it("a token added by the CLI is served within seconds, over REST and MCP, in a known and in a new workspace; a revoked one gets 401; nothing else is disturbed", async () => {
    const workspace = uniqueWorkspace("tok");
    const first = makeToken(workspace, "first");
    const dir = await mkdtemp(join(tmpdir(), "cairn-tokens-file-"));
    const file = join(dir, "tokens.yaml");
    await writeFile(file, yaml.dump({ tokens: [first] }));
    const { log, errors } = capturingLog();
    const stack = await serving(file, log);
    expect(await recentStatus(stack, first.token)).toBe(200);

    const added = await cairnCli(["tokens", "add", "--agent", "second", "--tokens-file", file]);
    expect(added.code).toBe(0);
    const token = added.stdout.trim();
    expect(token).toMatch(/^cairn_/);
    // The file keeps only the token's hash, and stays private to its owner.
    const text = await readFile(file, "utf8");
    expect(text).not.toContain(token);
    expect(text).toContain("agent: second");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    await expect.poll(() => recentStatus(stack, token)).toBe(200);
    const write = await http(stack.url, "POST", "/v1/memories", { token, body: turn("tokens-1", 1) });
    expect(write.status).toBe(201);
    const client = await mcpClient(stack.url, token);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("add_memory");
    await client.close();

    // A workspace the server did not know at start is readied, then served.
    const elsewhere = uniqueWorkspace("tok-new");
    const other = await cairnCli(["tokens", "add", "--agent", "third", "--workspace", elsewhere, "--tokens-file", file]);
    expect(other.code).toBe(0);
    const otherToken = other.stdout.trim();
    await expect.poll(() => recentStatus(stack, otherToken)).toBe(200);
    const there = await http(stack.url, "POST", "/v1/memories", { token: otherToken, body: turn("tokens-2", 1) });
    expect(there.status).toBe(201);
    // Workspaces stay apart: the new workspace's memory is its own.
    expect((await http(stack.url, "GET", `/v1/memories/${there.body.id}`, { token: otherToken })).status).toBe(200);
    expect((await http(stack.url, "GET", `/v1/memories/${there.body.id}`, { token: first.token })).status).toBe(404);

    const listed = await cairnCli(["tokens", "list", "--json", "--tokens-file", file]);
    expect(JSON.parse(listed.stdout).map((r: { agent: string }) => r.agent)).toEqual(["first", "second", "third"]);
    expect(listed.stdout).not.toContain(token);
    expect(listed.stdout).not.toContain(first.token);

    const revoked = await cairnCli(["tokens", "revoke", "--agent", "second", "--tokens-file", file]);
    expect(revoked.code).toBe(0);
    await expect.poll(() => recentStatus(stack, token)).toBe(401);
    expect(await recentStatus(stack, first.token)).toBe(200);
    expect(await recentStatus(stack, otherToken)).toBe(200);
    // What the revoked agent wrote stays.
    const kept = await http(stack.url, "GET", `/v1/memories/${write.body.id}`, { token: first.token });
    expect(kept.status).toBe(200);
    expect(errors).toEqual([]);
  });

  it("a file that does not parse is refused with one log line and the last good set stays in force", async () => {
    const workspace = uniqueWorkspace("tok");
    const first = makeToken(workspace, "first");
    const dir = await mkdtemp(join(tmpdir(), "cairn-tokens-file-"));
    const file = join(dir, "tokens.yaml");
    await writeFile(file, yaml.dump({ tokens: [first] }));
    const { log, errors, infos } = capturingLog();
    const stack = await serving(file, log);

    const later = makeToken(workspace, "later");
    // Rewritten as `cairn tokens` writes it (a temporary file, then a rename): a plain write truncates first, and a
    // look between the truncation and the write would read, and refuse, a half-written file as well.
    await writeAtomically(file, `${yaml.dump({ tokens: [first, later] })}\n  - this: [is not yaml`);
    await expect.poll(() => errors.length).toBe(1);
    expect(errors[0]).toContain("not applied");
    expect(errors[0]).not.toContain(first.token);
    expect(await recentStatus(stack, first.token)).toBe(200);
    expect(await recentStatus(stack, later.token)).toBe(401);

    // Mended, it applies; the refusal was said once, not at every look.
    await writeAtomically(file, yaml.dump({ tokens: [first, later] }));
    await expect.poll(() => recentStatus(stack, later.token)).toBe(200);
    expect(errors).toHaveLength(1);
    expect(infos.some((line) => line.startsWith("tokens file applied"))).toBe(true);
  });

  it("the CLI refuses what would leave the file unusable, and says what to do", async () => {
    const dir = await mkdtemp(join(tmpdir(), "cairn-tokens-file-"));
    const file = join(dir, "tokens.yaml");
    expect((await cairnCli(["tokens", "add", "--agent", "solo", "--tokens-file", file])).code).toBe(0);
    const again = await cairnCli(["tokens", "add", "--agent", "solo", "--tokens-file", file]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("cairn tokens revoke --agent solo");
    const last = await cairnCli(["tokens", "revoke", "--agent", "solo", "--tokens-file", file]);
    expect(last.code).toBe(1);
    expect(last.stderr).toContain("last tokens");
    expect(await readFile(file, "utf8")).toContain("agent: solo");
    const bad = await cairnCli(["tokens", "add", "--agent", "x y", "--tokens-file", file]);
    expect(bad.code).toBe(2);
    const role = await cairnCli(["tokens", "add", "--agent", "ok", "--role", "root", "--tokens-file", file]);
    expect(role.code).toBe(2);
    expect(role.stderr).toContain("--role must be one of agent, importer, admin");
    // The default file is the data dir's, as memory-core finds it.
    const inDataDir = await cairnCli(["tokens", "add", "--agent", "env"], { CAIRN_DATA_DIR: join(dir, "data") });
    expect(inDataDir.code).toBe(0);
    expect(await readFile(join(dir, "data", "tokens.yaml"), "utf8")).toContain("agent: env");
  });
});

describe("a start that fails", () => {
  it("leaves no tokens file it never printed (port taken); a start that succeeds keeps and prints its own", async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as { port: number }).port;
    const dataDir = await mkdtemp(join(tmpdir(), "cairn-tokens-start-"));
    const config = (p: number) => loadConfig({ CAIRN_DATA_DIR: dataDir, CAIRN_PORT: String(p), CAIRN_CHROMA_URL: chromaUrl().toString() });
    const { log } = capturingLog();
    const failed = await startStack({ config: config(port), log, embedder: await sharedEmbedder() }).catch((e: Error) => e);
    blocker.close();
    expect(failed).toBeInstanceOf(Error);
    expect((failed as Error).message).toContain("already in use");
    expect(existsSync(join(dataDir, "tokens.yaml"))).toBe(false);

    const started = await startStack({ config: config(0), log, embedder: await sharedEmbedder() });
    running.push(started);
    expect(started.generatedTokens?.map((t) => t.role)).toEqual(["admin", "agent", "importer"]);
    expect(await readFile(join(dataDir, "tokens.yaml"), "utf8")).toContain(started.generatedTokens![0]!.token);
  });
});
