import { execFile } from "node:child_process";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";
import yaml from "js-yaml";
import { loadConfig, silentLogger, startStack } from "@cairn/memory-core";
import { newToken } from "../services/memory-core/src/auth/tokens.js";
import { printHookRuns, type HookRuns, runHook } from "./stats.js";

const CHECKOUT = fileURLToPath(new URL("../", import.meta.url));
const gitOut = async (cwd: string, ...args: string[]) => (await promisify(execFile)("git", args, { cwd, maxBuffer: 64 << 20 })).stdout;

/**
 * `npm run bench -- edit-hook [--repo DIR] [--files 30] [--back 50] [--rounds 3] [--json]`: the edit hook as Claude
 * Code runs it (a child process per edit, the PreToolUse JSON on stdin, the repository as working directory)
 * against a stack where a decision cites each of half the repository's most often changed files, written at the
 * commit `--back` commits before HEAD, so that "code moved since" walks real history. The other half are cited by
 * nothing. How long it takes (p50, p95, whole process), how often it speaks, how often it says the code moved,
 * and its largest output; beside them the same process given no input, which is what starting it costs.
 */
export async function benchEditHook(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      repo: { type: "string", default: CHECKOUT },
      files: { type: "string", default: "30" },
      back: { type: "string", default: "50" },
      rounds: { type: "string", default: "3" },
      json: { type: "boolean", default: false },
    },
  });
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const repo = (await gitOut(values.repo, "rev-parse", "--show-toplevel")).trim();
  const counts = new Map<string, number>();
  for (const path of (await gitOut(repo, "log", "--format=", "--name-only", "-n", "2000")).split("\n")) {
    if (path) counts.set(path, (counts.get(path) ?? 0) + 1);
  }
  const picked: string[] = [];
  for (const [path] of [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))) {
    if (picked.length === Number(values.files)) break;
    if (
      await stat(join(repo, path)).then(
        (s) => s.isFile(),
        () => false,
      )
    )
      picked.push(path);
  }
  const cited = picked.filter((_, i) => i % 2 === 0);
  const uncited = picked.filter((_, i) => i % 2 === 1);
  const commit = (await gitOut(repo, "rev-parse", `HEAD~${values.back}`)).trim();

  const dir = await mkdtemp(join(tmpdir(), "cairn-bench-edit-hook-"));
  const token = newToken();
  await writeFile(join(dir, "tokens.yaml"), yaml.dump({ tokens: [{ token, workspace: "edit", agent: "backend-dev", role: "agent" }] }));
  const stack = await startStack({
    config: loadConfig({ CAIRN_DATA_DIR: dir, CAIRN_PORT: "0", CAIRN_TOKENS_FILE: join(dir, "tokens.yaml") }),
    log: silentLogger,
  });
  try {
    log(`${picked.length} files of ${repo} by how often they changed; a decision cites each of ${cited.length}, at ${commit.slice(0, 7)}`);
    for (const path of cited) {
      const res = await fetch(new URL("/v1/memories", stack.url), {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({
          session_id: "bench-edit-hook",
          kind: "decision",
          prompt: `How ${path} is laid out`,
          thought: "Weighed splitting it against keeping one module; one module keeps the call sites simple.",
          response: `Keep ${path} one module with small functions; split only when a second caller needs half of it.`,
          code: { commit, paths: [{ path }] },
        }),
      });
      if (res.status !== 201) throw new Error(`add_memory answered ${res.status}`);
    }
    const env = { PATH: process.env.PATH ?? "", CAIRN_URL: stack.url.origin, CAIRN_TOKEN: token, CLAUDE_PROJECT_DIR: repo };
    const run = (path: string | undefined) =>
      runHook(
        "edit",
        // No path: input the hook turns away at once, so the row measures Node, tsx and the loader starting.
        path === undefined
          ? ""
          : JSON.stringify({
              session_id: "bench",
              cwd: repo,
              hook_event_name: "PreToolUse",
              tool_name: "Edit",
              tool_input: { file_path: join(repo, path), old_string: "a", new_string: "b" },
              tool_use_id: "toolu_bench",
            }),
        { env, cwd: repo },
      );
    const results: Record<string, HookRuns & { moved: number }> = {
      cited: { ms: [], spoke: 0, moved: 0, runs: 0, bytes: [] },
      uncited: { ms: [], spoke: 0, moved: 0, runs: 0, bytes: [] },
      "no input": { ms: [], spoke: 0, moved: 0, runs: 0, bytes: [] },
    };
    for (let r = 0; r < Number(values.rounds); r++) {
      for (const [set, paths] of [
        ["cited", cited],
        ["uncited", uncited],
        ["no input", cited.map(() => undefined)],
      ] as const) {
        for (const path of paths) {
          const { ms, stdout } = await run(path);
          const bucket = results[set]!;
          bucket.ms.push(ms);
          bucket.runs++;
          if (stdout) {
            bucket.spoke++;
            bucket.bytes.push(Buffer.byteLength(stdout));
            if (stdout.includes("code moved since")) bucket.moved++;
          }
        }
      }
    }
    printHookRuns(results, values.json);
  } finally {
    await stack.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
