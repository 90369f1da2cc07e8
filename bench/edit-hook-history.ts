import { execFile, execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs, promisify } from "node:util";
import yaml from "js-yaml";
import { newToken } from "../services/memory-core/src/auth/tokens.js";
import { startBenchServer } from "./bench-server.js";
import { LOADER_BIN, round, runHook, summarize } from "./stats.js";
import { startHashStub } from "./timed-embedder.js";

const execFileAsync = promisify(execFile);
const CAIRN = fileURLToPath(new URL("../services/ops-cli/bin/cairn.mjs", import.meta.url));
const CHECKOUT = fileURLToPath(new URL("..", import.meta.url));

interface Run {
  ms: number;
  bytes: number;
  context: string | undefined;
  stderr: string;
}

/**
 * The edit hook over a repository's own history (issue 37): clones the repository (this checkout by default),
 * imports its history with `cairn import git` (a child process, the importer token) into a fresh memory-core
 * (a process of its own, the local embedder by default), picks the `--files` files of the working copy that the
 * most commits touched, and runs `cairn-load --hook edit` for each as Claude Code would before an Edit: a child
 * process from the clone, Claude Code's PreToolUse JSON on stdin with the file's absolute path, CAIRN_URL and an
 * agent's CAIRN_TOKEN in its environment, its default timeout. `--rounds` times over the files. Prints, per file,
 * the pointers the hook added (the `additionalContext` of its JSON) or why it said nothing (its stderr); then how
 * often it pointed at something, p50/p95 of the whole child process, and the bytes it printed (max and mean).
 * Beside each file, what `query_raw_memories` with that path alone answers (any kind, three at most).
 *
 *   npm run bench -- edit-hook-history [--repo DIR] [--files 30] [--rounds 3] [--embedder local|hash] [--work-dir DIR]
 *                                      [--loader PATH] [--json]
 *
 * `--loader` runs another checkout's `cairn-load` (its `bin/cairn-load.mjs`) against this checkout's memory-core
 * and importer. `--work-dir` keeps the clone and the store there (else a temporary folder, removed after).
 */
export async function benchEditHookHistory(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      repo: { type: "string", default: CHECKOUT },
      files: { type: "string", default: "30" },
      rounds: { type: "string", default: "3" },
      embedder: { type: "string", default: "local" },
      "work-dir": { type: "string" },
      loader: { type: "string", default: LOADER_BIN },
      json: { type: "boolean", default: false },
    },
  });
  const fileCount = Number(values.files);
  const rounds = Number(values.rounds);
  if (!Number.isInteger(fileCount) || fileCount < 1) throw new Error("--files is a whole number, at least 1");
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error("--rounds is a whole number, at least 1");
  const loader = resolve(values.loader);
  if (!existsSync(loader)) throw new Error(`--loader: ${loader} does not exist`);
  const log = (line: string) => process.stderr.write(`${line}\n`);

  const keep = values["work-dir"] !== undefined;
  const work = keep ? resolve(values["work-dir"]!) : await mkdtemp(join(tmpdir(), "cairn-bench-edit-"));
  await mkdir(work, { recursive: true });
  const clone = join(work, "repo");
  const dataDir = join(work, "data");
  await rm(clone, { recursive: true, force: true });
  await rm(dataDir, { recursive: true, force: true });
  await mkdir(dataDir, { recursive: true });
  execFileSync("git", ["clone", "-q", "--no-hardlinks", resolve(values.repo), clone], { stdio: "ignore" });
  const git = (...args: string[]) => execFileSync("git", ["-C", clone, ...args], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });

  const importer = { token: newToken(), workspace: "edit", agent: "importer", role: "importer" };
  const agent = { token: newToken(), workspace: "edit", agent: "dev", role: "agent" };
  const tokensFile = join(dataDir, "tokens.yaml");
  await writeFile(tokensFile, yaml.dump({ tokens: [importer, agent] }));
  const hashStub = values.embedder === "hash" ? await startHashStub() : undefined;
  const stack = await startBenchServer({ dataDir, tokensFile, embedder: values.embedder, hashStubUrl: hashStub?.baseUrl });

  try {
    // 1. The history, imported as an operator would.
    const importStarted = performance.now();
    // Not a synchronous child: the hashing stub answers from this process's event loop.
    const { stdout: imported } = await execFileAsync(
      process.execPath,
      [CAIRN, "import", "git", "--repo", clone, "--url", stack.url.origin, "--token", importer.token],
      {
        env: { PATH: process.env.PATH ?? "" },
        cwd: work,
        maxBuffer: 16 * 1024 * 1024,
      },
    );
    const importS = (performance.now() - importStarted) / 1000;
    log(`${imported.trim()} (${round(importS, 1)} s)`);

    // 2. The files of the working copy the most commits touched (a rename counts under its new path).
    const present = new Set(git("ls-files", "-z").split("\0").filter(Boolean));
    const counts = new Map<string, number>();
    for (const line of git("log", "-M", "--format=", "--name-only", "-z").split("\0")) {
      const path = line.trim();
      if (present.has(path)) counts.set(path, (counts.get(path) ?? 0) + 1);
    }
    const files = [...counts]
      .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1))
      .slice(0, fileCount)
      .map(([path, commits]) => ({ path, commits }));

    // 3. The hook, as Claude Code runs it before an Edit.
    const env = { PATH: process.env.PATH ?? "", HOME: work, CAIRN_URL: stack.url.origin, CAIRN_TOKEN: agent.token };
    const hook = async (path: string): Promise<Run> => {
      const { ms, stdout, stderr } = await runHook(
        "edit",
        JSON.stringify({
          session_id: "0f6c1d2e-8a4b-4c3d-9e5f-7a1b2c3d4e5f",
          transcript_path: join(work, "transcript.jsonl"),
          cwd: clone,
          permission_mode: "default",
          hook_event_name: "PreToolUse",
          tool_name: "Edit",
          tool_input: { file_path: join(clone, path), old_string: "a", new_string: "b", replace_all: false },
        }),
        { env, cwd: clone, loader },
      );
      let context: string | undefined;
      if (stdout.trim()) {
        try {
          context = (JSON.parse(stdout) as { hookSpecificOutput?: { additionalContext?: string } }).hookSpecificOutput?.additionalContext;
        } catch {
          context = `(not JSON) ${stdout}`;
        }
      }
      return { ms, bytes: Buffer.byteLength(stdout), context, stderr: stderr.trim() };
    };
    const runs: Array<Run & { path: string; round: number }> = [];
    for (let r = 0; r < rounds; r++) for (const { path } of files) runs.push({ ...(await hook(path)), path, round: r });

    // 4. Beside it, what the path query alone answers for each file (any kind, the hook's three at most): what
    // the history holds about the file, whether or not the hook's choice of kinds lets it through.
    type Brief = { id: string; kind?: string; flags?: string[]; text: string };
    const cited = new Map<string, Brief[]>();
    for (const { path } of files) {
      const response = await fetch(new URL("/v1/memories/query", stack.url), {
        method: "POST",
        headers: { authorization: `Bearer ${agent.token}`, "content-type": "application/json" },
        body: JSON.stringify({ paths: [path], limit: 3 }),
      });
      if (response.status !== 200) throw new Error(`query_raw_memories by path answered ${response.status}`);
      cited.set(
        path,
        ((await response.json()) as { hits: Array<{ memory: Brief }> }).hits.map((h) => h.memory),
      );
    }

    // 5. What it said, file by file (the last round), and the figures over every round.
    const last = runs.filter((run) => run.round === rounds - 1);
    for (const { path, commits } of files) {
      const run = last.find((x) => x.path === path)!;
      log(`\n${path} (${commits} commits): ${run.context ? `${run.bytes} bytes` : `silent: ${run.stderr || "(no reason given)"}`}`);
      if (run.context) log(run.context);
      for (const brief of cited.get(path)!) {
        const flags = [brief.kind ?? "turn", ...(brief.flags ?? [])].join(", ");
        log(`  path query: ${brief.id} (${flags}): ${brief.text.replace(/\s+/g, " ").slice(0, 110)}`);
      }
    }
    const spoke = runs.filter((run) => run.context !== undefined);
    const time = summarize(runs.map((run) => run.ms));
    const report = {
      commits: Number(git("rev-list", "--count", "HEAD").trim()),
      import_s: round(importS, 1),
      files: files.length,
      runs: runs.length,
      pointed_rate: round(spoke.length / runs.length, 3),
      files_pointed: new Set(spoke.map((run) => run.path)).size,
      pointers_mean: round(spoke.reduce((n, run) => n + (run.context!.split("\n").length - 1), 0) / Math.max(1, spoke.length), 2),
      p50_ms: round(time.p50, 0),
      p95_ms: round(time.p95, 0),
      max_bytes: Math.max(0, ...spoke.map((run) => run.bytes)),
      mean_bytes: round(spoke.reduce((n, run) => n + run.bytes, 0) / Math.max(1, spoke.length), 0),
      path_query_files: [...cited.values()].filter((briefs) => briefs.length > 0).length,
      path_query_kinds: countBy([...cited.values()].flat().map((b) => b.kind ?? "turn")),
      timeouts: runs.filter((run) => /within \d+ ms|timed? ?out/i.test(run.stderr)).length,
    };
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } finally {
    await stack.stop().catch(() => undefined);
    await hashStub?.close();
    if (!keep) await rm(work, { recursive: true, force: true });
  }
}

const countBy = (items: string[]) => Object.fromEntries([...new Set(items)].map((item) => [item, items.filter((x) => x === item).length]));
