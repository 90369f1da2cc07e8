import { execFile, execFileSync } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer, type Server } from "node:net";
import { fileURLToPath } from "node:url";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HOOK_OUTPUT_BYTES } from "../src/prompt-hook.js";
import { codingTurn } from "../../memory-core/test/fixtures/coding-turns.js";
import { http, makeToken, startCairn, uniqueWorkspace, type TestCairn } from "../../memory-core/test/support/harness.js";

const BIN = fileURLToPath(new URL("../bin/cairn-load.mjs", import.meta.url));
const workspace = uniqueWorkspace("prompt-hook");
const agent = makeToken(workspace, "backend-dev");
let cairn: TestCairn;
const ids: string[] = [];

/** The hook as a harness runs it: a child process, the hook's JSON on stdin. */
function hook(stdin: string, env: Record<string, string>, cwd?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, "--hook", "prompt"],
      { env: { PATH: process.env.PATH ?? "", ...env }, ...(cwd ? { cwd } : {}) },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin!.end(stdin);
  });
}
const submit = (prompt: string) => JSON.stringify({ session_id: "s", hook_event_name: "UserPromptSubmit", prompt });

beforeAll(async () => {
  cairn = await startCairn([agent]);
  for (let n = 0; n < 10; n++) {
    const res = await http(cairn.url, "POST", "/v1/memories", { token: agent.token, body: codingTurn(n) });
    ids.push(res.body.id);
  }
});
afterAll(() => cairn?.close());

describe("cairn-load --hook prompt", () => {
  it("points at the memories that bear on a prompt when Cairn is sure, within its budget, and says nothing for an unrelated one", async () => {
    const env = { CAIRN_URL: cairn.url.origin, CAIRN_TOKEN: agent.token };
    const related = await hook(submit("AUTH-412: the token refresh Redis stream consumer group needs a dead-letter queue"), env);
    expect(related.code).toBe(0);
    expect(Buffer.byteLength(related.stdout)).toBeLessThanOrEqual(HOOK_OUTPUT_BYTES);
    const output = JSON.parse(related.stdout);
    expect(output.hookSpecificOutput.hookEventName).toBe("UserPromptSubmit");
    const lines = output.hookSpecificOutput.additionalContext.split("\n").slice(1);
    expect(lines.length).toBeGreaterThanOrEqual(1);
    expect(lines.length).toBeLessThanOrEqual(3);
    // The AUTH-412 turns are the first subject: turns 0 and 5 of the fixture.
    expect([ids[0], ids[5]]).toContain(/t_[0-9a-f]{32}/.exec(lines[0])![0]);

    const unrelated = await hook(submit("Write a limerick about a giraffe who learns to play the cello"), env);
    expect([unrelated.code, unrelated.stdout]).toEqual([0, ""]);
    expect(unrelated.stderr).toContain("nothing here with high confidence");
  });

  it("prints nothing and exits 0 when Cairn is unreachable, refuses the token, is too slow, or the input is not the hook's", async () => {
    const prompt = submit("AUTH-412: the token refresh Redis stream consumer group needs a dead-letter queue");
    const closed = await hook(prompt, { CAIRN_URL: "http://127.0.0.1:9", CAIRN_TOKEN: agent.token });
    expect([closed.code, closed.stdout]).toEqual([0, ""]);
    expect(closed.stderr).toContain("unreachable");

    const refused = await hook(prompt, { CAIRN_URL: cairn.url.origin, CAIRN_TOKEN: "cairn_not-a-token" });
    expect([refused.code, refused.stdout]).toEqual([0, ""]);
    expect(refused.stderr).toContain("401");

    // A server that accepts the connection and never answers.
    const silent: Server = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      const slow = await hook(prompt, { CAIRN_URL: `http://127.0.0.1:${port}`, CAIRN_TOKEN: agent.token, CAIRN_HOOK_TIMEOUT_MS: "300" });
      expect([slow.code, slow.stdout]).toEqual([0, ""]);
      expect(slow.stderr).toContain("within 300 ms");
    } finally {
      silent.close();
    }

    const garbled = await hook("{not json", { CAIRN_URL: cairn.url.origin, CAIRN_TOKEN: agent.token });
    expect([garbled.code, garbled.stdout]).toEqual([0, ""]);
    const unset = await hook(prompt, {});
    expect([unset.code, unset.stdout]).toEqual([0, ""]);
    expect(unset.stderr).toContain("CAIRN_URL");
    // The same prompt with everything in order speaks: the silences above are the faults', not the prompt's.
    expect((await hook(prompt, { CAIRN_URL: cairn.url.origin, CAIRN_TOKEN: agent.token })).stdout).toContain("UserPromptSubmit");
  });

  it("in a git repository, says a memory was written on a branch not merged yet, and not once it is merged", async () => {
    const root = await mkdtemp(join(tmpdir(), "cairn-prompt-hook-git-"));
    const git = (...args: string[]) =>
      execFileSync("git", args, {
        cwd: root,
        encoding: "utf8",
        env: {
          PATH: process.env.PATH ?? "",
          HOME: root,
          GIT_CONFIG_NOSYSTEM: "1",
          GIT_AUTHOR_NAME: "dev",
          GIT_AUTHOR_EMAIL: "dev@example.test",
          GIT_COMMITTER_NAME: "dev",
          GIT_COMMITTER_EMAIL: "dev@example.test",
        },
      }).trim();
    git("init", "-q", "-b", "main");
    await writeFile(join(root, "cache.ts"), "v1\n");
    git("add", "-A");
    git("commit", "-q", "-m", "initial");
    git("checkout", "-q", "-b", "feature/token-cache");
    await writeFile(join(root, "cache.ts"), "v2\n");
    git("commit", "-q", "-am", "cache refreshed tokens");
    const commit = git("rev-parse", "HEAD");
    git("checkout", "-q", "main");
    const res = await http(cairn.url, "POST", "/v1/memories", {
      token: agent.token,
      body: {
        session_id: "cache-311",
        kind: "decision",
        prompt: "CACHE-311: cache refreshed tokens in process",
        thought: "Refresh hit Redis on every request; a 30 s in-process cache removes most of those calls.",
        response: "CACHE-311 decided: refreshed tokens are cached in process for 30 seconds.",
        code: { branch: "feature/token-cache", commit, paths: [{ path: "cache.ts" }] },
      },
    });
    expect(res.status).toBe(201);
    const env = { CAIRN_URL: cairn.url.origin, CAIRN_TOKEN: agent.token };
    const ask = JSON.stringify({
      session_id: "s",
      cwd: root,
      hook_event_name: "UserPromptSubmit",
      prompt: "CACHE-311: how long are refreshed tokens cached in process?",
    });
    const line = async () =>
      (JSON.parse((await hook(ask, env, root)).stdout).hookSpecificOutput.additionalContext as string)
        .split("\n")
        .find((l) => l.includes(res.body.id));
    expect(await line()).toContain("decision; on branch feature/token-cache, not merged)");
    git("merge", "-q", "--no-ff", "-m", "merge", "feature/token-cache");
    const merged = await line();
    expect(merged).toContain(res.body.id);
    expect(merged).not.toContain("on branch");
  });
});
