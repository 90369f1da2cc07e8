import { execFile } from "node:child_process";
import { appendFile, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import yaml from "js-yaml";
import { loadConfig, silentLogger, startStack } from "@cairn/memory-core";
import { newToken } from "../services/memory-core/src/auth/tokens.js";
import { round, summarize } from "./stats.js";

const BIN = fileURLToPath(new URL("../services/loader/bin/cairn-load.mjs", import.meta.url));

/**
 * `npm run bench -- capture [--exchanges N] [--rounds N]`: the capture hook as Claude Code runs it (a child process
 * per Stop, the hook's JSON on stdin) against a stack. How many captures a long session's first capture takes
 * within the default timeout, and what one new exchange costs at the end of a short and of a long transcript:
 * the time of the whole process and the bytes it read (from the saved position), side by side.
 */
export async function benchCapture(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { exchanges: { type: "string", default: "1250" }, rounds: { type: "string", default: "5" } },
  });
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const dir = await mkdtemp(join(tmpdir(), "cairn-bench-capture-"));
  const token = newToken();
  await writeFile(join(dir, "tokens.yaml"), yaml.dump({ tokens: [{ token, workspace: "capture", agent: "backend-dev", role: "agent" }] }));
  const stack = await startStack({
    config: loadConfig({ CAIRN_DATA_DIR: join(dir, "data"), CAIRN_PORT: "0", CAIRN_TOKENS_FILE: join(dir, "tokens.yaml") }),
    log: silentLogger,
  });
  try {
    const env = { PATH: process.env.PATH ?? "", CAIRN_URL: stack.url.origin, CAIRN_TOKEN: token, XDG_STATE_HOME: join(dir, "state") };
    const capture = (transcript: string, session: string) =>
      new Promise<{ ms: number; stderr: string }>((resolve) => {
        const started = performance.now();
        const child = execFile(
          process.execPath,
          [BIN, "--hook", "capture", "--harness", "claude-code"],
          { env, cwd: dir },
          (_e, _o, stderr) => resolve({ ms: performance.now() - started, stderr }),
        );
        child.stdin!.end(JSON.stringify({ session_id: session, transcript_path: transcript, cwd: dir, hook_event_name: "Stop" }));
      });
    /** The position the capture hook saved for a transcript (its state file names the transcript). */
    const position = async (transcript: string) => {
      const folder = join(dir, "state", "cairn", "capture");
      for (const f of await readdir(folder)) {
        const state = JSON.parse(await readFile(join(folder, f), "utf8")) as { transcript: string; position: { offset: number } };
        if (state.transcript === transcript) return state.position.offset;
      }
      throw new Error(`no saved position for ${transcript}`);
    };

    const long = Number(values.exchanges);
    const sessions = { short: { id: "bench-short", exchanges: 12 }, long: { id: "bench-long", exchanges: long } };
    const files: Record<string, string> = {};
    for (const [name, s] of Object.entries(sessions)) {
      files[name] = join(dir, `${s.id}.jsonl`);
      await writeFile(files[name], Array.from({ length: s.exchanges }, (_, n) => exchange(s.id, n)).join(""));
      const size = (await readFile(files[name])).length;
      log(`${name}: ${s.exchanges} exchanges, ${s.exchanges * 4} lines, ${size} bytes`);
    }

    // The first capture of the long session: as many runs as the default timeout needs.
    let runs = 0;
    let stored = 0;
    let replayed = 0;
    for (;;) {
      const { stderr } = await capture(files.long!, sessions.long.id);
      runs++;
      stored += Number(/(\d+) stored/.exec(stderr)?.[1] ?? "0");
      // A write Cairn stored after the hook's timeout had passed is sent again next time, and replayed.
      replayed += Number(/(\d+) there already/.exec(stderr)?.[1] ?? "0");
      if (!/left for the next capture/.test(stderr) || runs > 200) break;
    }
    log(`first capture of ${long} exchanges: ${runs} runs of the hook (default 5 s timeout), ${stored} stored, ${replayed} replayed`);
    await capture(files.short!, sessions.short.id);

    // One new exchange at the end of each, captured: process time and bytes read from the saved position.
    for (const name of ["short", "long"] as const) {
      const times: number[] = [];
      const read: number[] = [];
      for (let r = 0; r < Number(values.rounds); r++) {
        await appendFile(files[name]!, exchange(sessions[name].id, sessions[name].exchanges + r));
        const saved = await position(files[name]!);
        const { ms, stderr } = await capture(files[name]!, sessions[name].id);
        if (!/1 stored/.test(stderr)) throw new Error(`expected one stored exchange, got: ${stderr}`);
        times.push(ms);
        // The hook reads from its saved position to the end of the file.
        read.push((await readFile(files[name]!)).length - saved);
      }
      const s = summarize(times);
      log(
        `${name} transcript, one new exchange: p50 ${round(s.p50)} ms, p95 ${round(s.p95)} ms (whole process); ` +
          `bytes read per capture at most ${Math.max(...read)} (of a ${(await readFile(files[name]!)).length}-byte file)`,
      );
    }
  } finally {
    await stack.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** One finished Claude Code exchange: a request, a tool call and its result, an answer (four lines). */
function exchange(session: string, n: number): string {
  const line = (type: string, k: number, message: unknown) =>
    `${JSON.stringify({ type, uuid: `${session}-${n}-${k}`, sessionId: session, isSidechain: false, timestamp: new Date(Date.UTC(2026, 10, 1) + n * 60_000 + k).toISOString(), message })}\n`;
  return (
    line("user", 0, { role: "user", content: `Step ${n}: make the export of batch ${n} resumable after a crash (EXP-${n}).` }) +
    line("assistant", 1, {
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [
        {
          type: "thinking",
          thinking: `Batch ${n} restarts from zero after a crash; a checkpoint per 1,000 rows would let it resume.`,
          signature: "s",
        },
        { type: "tool_use", id: `t${n}`, name: "Bash", input: { command: `npm test -- export-${n}` } },
      ],
    }) +
    line("user", 2, { role: "user", content: [{ type: "tool_result", tool_use_id: `t${n}`, content: "PASS 12 tests ".repeat(20) }] }) +
    line("assistant", 3, {
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [{ type: "text", text: `Batch ${n} now checkpoints every 1,000 rows and resumes from the last one.` }],
    })
  );
}
