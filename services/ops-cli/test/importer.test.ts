import { execFile } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../memory-core/src/config.js";
import { silentLogger } from "../../memory-core/src/logger.js";
import { startStack, type Stack } from "../../memory-core/src/stack.js";
import {
  chromaUrl,
  http,
  makeToken,
  mcpClient,
  sharedEmbedder,
  startCairn,
  turn,
  uniqueWorkspace,
} from "../../memory-core/test/support/harness.js";

const run = promisify(execFile);
const BIN = fileURLToPath(new URL("../bin/cairn.mjs", import.meta.url));

const running: Array<{ stop(): Promise<void> }> = [];
afterEach(async () => {
  for (const r of running.splice(0)) await r.stop();
});

describe("the importer role", () => {
  it("writes in bulk and reads, never reviews or administers, and is no teammate", async () => {
    const workspace = uniqueWorkspace("imp");
    const importer = makeToken(workspace, "historian", "importer");
    const agent = makeToken(workspace, "dev");
    const admin = makeToken(workspace, "lead", "admin");
    const cairn = await startCairn([importer, agent, admin]);
    running.push({ stop: () => cairn.close() });

    expect((await http(cairn.url, "GET", "/v1/caller", { token: importer.token })).body.role).toBe("importer");
    const batch = await http(cairn.url, "POST", "/v1/memories/batch", {
      token: importer.token,
      body: { memories: [turn("history-1", 1), turn("history-1", 2)] },
    });
    expect(batch.status).toBe(200);
    expect(batch.body.stored).toBe(2);
    const id = batch.body.results[0].id as string;
    // What it imports waits for a person's review, as any import does.
    const stored = await http(cairn.url, "GET", `/v1/memories/${id}`, { token: importer.token });
    expect(stored.status).toBe(200);
    expect(stored.body.source).toBe("import");
    // An agent may not write in bulk; the importer may not review or read the audit log; an admin may do both.
    expect((await http(cairn.url, "POST", "/v1/memories/batch", { token: agent.token, body: { memories: [turn("x", 1)] } })).status).toBe(
      403,
    );
    const verdict = { decision: "approve", reason: "read and checked" };
    expect((await http(cairn.url, "POST", `/v1/memories/${id}/review`, { token: importer.token, body: verdict })).status).toBe(403);
    expect((await http(cairn.url, "GET", "/v1/audit", { token: importer.token })).status).toBe(403);
    expect((await http(cairn.url, "POST", `/v1/memories/${id}/review`, { token: admin.token, body: verdict })).status).toBe(200);

    // Its tool list holds the bulk write and the agent tools, and no admin tool; an agent's has no bulk write.
    const tools = async (token: string) => {
      const client = await mcpClient(cairn.url, token);
      const names = (await client.listTools()).tools.map((t) => t.name);
      await client.close();
      return names;
    };
    const importerTools = await tools(importer.token);
    expect(importerTools).toEqual(expect.arrayContaining(["add_memories", "add_memory", "query_raw_memories", "mark_outdated"]));
    expect(importerTools).not.toContain("review_memory");
    expect(importerTools).not.toContain("get_audit_log");
    const agentTools = await tools(agent.token);
    expect(agentTools).toContain("add_memory");
    expect(agentTools).not.toContain("add_memories");

    // The team is the agents who work, not the history brought in.
    expect((await http(cairn.url, "POST", "/v1/memories", { token: agent.token, body: turn("work-1", 1) })).status).toBe(201);
    const team = await http(cairn.url, "GET", "/v1/team", { token: agent.token });
    expect(team.status).toBe(200);
    expect(team.body.agents.map((a: { agent: string }) => a.agent)).toEqual(["dev"]);
  });

  it("the README's import command works as written after a first start: it imports as the generated importer", async () => {
    const home = await mkdtemp(join(tmpdir(), "cairn-importer-"));
    const stack: Stack = await startStack({
      config: loadConfig({ CAIRN_PORT: "0", CAIRN_CHROMA_URL: chromaUrl().toString() }, home),
      log: silentLogger,
      embedder: await sharedEmbedder(),
    });
    running.push(stack);
    const importerToken = stack.generatedTokens!.find((t) => t.role === "importer")!;
    const agentToken = stack.generatedTokens!.find((t) => t.role === "agent")!;
    expect(importerToken.agent).toBe("importer");

    const repo = await mkdtemp(join(tmpdir(), "cairn-importer-repo-"));
    const git = (...args: string[]) =>
      run("git", ["-c", "user.name=Dev", "-c", "user.email=dev@example.com", ...args], {
        cwd: repo,
        env: { PATH: process.env.PATH ?? "" },
      });
    await git("init", "-q", "-b", "main");
    await writeFile(join(repo, "cache.ts"), "export const ttl = 60;\n");
    await git("add", ".");
    await run(
      "git",
      ["-c", "user.name=Dev", "-c", "user.email=dev@example.com", "commit", "-q", "-m", "Cache: a 60 s TTL for session lookups"],
      {
        cwd: repo,
        env: { PATH: process.env.PATH ?? "", GIT_AUTHOR_DATE: "2024-05-01T10:00:00Z", GIT_COMMITTER_DATE: "2024-05-01T10:00:00Z" },
      },
    );

    // As written in the README: no token given; the CLI runs where `npm start` keeps its data (.cairn here).
    const imported = await run(process.execPath, [BIN, "import", "git", "--repo", repo, "--url", stack.url.href], {
      cwd: home,
      env: { PATH: process.env.PATH ?? "" },
    });
    expect(imported.stdout).toContain("1 commits, 1 stored");
    const recent = await http(stack.url, "GET", "/v1/memories/recent?agent=importer&limit=5", { token: agentToken.token });
    expect(recent.body.turns).toHaveLength(1);
    // It says when the change happened (the commit's time) beside when it was stored.
    expect(recent.body.turns[0].occurred_at).toBe("2024-05-01T10:00:00Z");
    expect(recent.body.turns[0].recorded_at.slice(0, 4)).toBe(new Date().toISOString().slice(0, 4));
    // The importer's history is there for the team, and the importer is not a teammate.
    expect((await http(stack.url, "POST", "/v1/memories", { token: agentToken.token, body: turn("after-import", 1) })).status).toBe(201);
    const team = await http(stack.url, "GET", "/v1/team", { token: agentToken.token });
    expect(team.body.agents.map((a: { agent: string }) => a.agent)).toEqual(["agent"]);
    // A turn that does not say when it happened has no occurred_at.
    const own = await http(stack.url, "GET", "/v1/memories/recent?limit=5", { token: agentToken.token });
    expect(own.body.turns[0].recorded_at).toBeDefined();
    expect(own.body.turns[0]).not.toHaveProperty("occurred_at");

    // Without a tokens file there, and no token, it says what to do.
    const elsewhere = await mkdtemp(join(tmpdir(), "cairn-importer-none-"));
    const refused = await run(process.execPath, [BIN, "import", "git", "--repo", repo, "--url", stack.url.href], {
      cwd: elsewhere,
      env: { PATH: process.env.PATH ?? "" },
    }).then(
      () => ({ code: 0, stderr: "" }),
      (error: { code: number; stderr: string }) => error,
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("CAIRN_IMPORT_TOKEN");
  });
});
