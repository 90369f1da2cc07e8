import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { checkBudget } from "./budget.js";
import { runCaptureHook } from "./capture-cli.js";
import { HARNESSES, isHarness } from "./harnesses.js";
import { LoaderError, readAgentIndex, renderBlock } from "./index-files.js";
import { loadLoaderConfig } from "./config.js";
import { lintPointers } from "./lint.js";
import { project } from "./projection.js";
import { findProject, gitTopLevel, hookCwd } from "./project.js";
import { promptHook, type HookOutcome } from "./prompt-hook.js";
import { inboxBlock, unreadMessages } from "./inbox.js";
import { editHook } from "./edit-hook.js";

export interface Io {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  /** What the harness wrote to the hook's standard input (read only in hook modes). */
  stdin?: () => Promise<string>;
}

const USAGE = `usage: cairn-load --agent NAME --harness claude-code|codex|opencode|generic [--project DIR]
                  [--index-dir DIR] [--target DIR] [--budget-bytes N] [--budget-lines N] [--strict] [--hook [session]]
       cairn-load --hook prompt [--url URL] [--timeout-ms N] [--project DIR]   (UserPromptSubmit: the hook's JSON on stdin; CAIRN_TOKEN)
       cairn-load --hook edit [--url URL] [--timeout-ms N] [--project DIR]   (PreToolUse on edits: the same)
       cairn-load --hook capture [--url URL] [--timeout-ms N] [--harness claude-code|codex] [--project DIR]   (Stop, PreCompact, SessionEnd: the same)
--index-dir (default agents) and --target (default .) are relative to the project: --project, else
$CLAUDE_PROJECT_DIR, else the git repository of the hook's cwd or of the working directory.
With --url or CAIRN_URL (and CAIRN_TOKEN) set, pointers in the index are checked against that memory-core.
A hook (--hook) never fails its harness: on any problem it prints nothing, says why on stderr, exits 0.`;

/**
 * `--hook` alone is the SessionStart hook, as `--hook session` (hook entries that name no mode keep working);
 * `--hook prompt` the prompt hook, `--hook edit` the edit hook, `--hook capture` the capture hook.
 */
function normalizeHook(argv: string[]): string[] {
  return argv.flatMap((arg, i) => {
    if (arg !== "--hook") return [arg];
    const next = argv[i + 1];
    return next === undefined || next.startsWith("-") ? ["--hook=session"] : [arg];
  });
}

/**
 * The CLI: returns the exit code (0 done, 1 refused or failed, 2 bad arguments). A hook run (`--hook`) exits 0
 * whatever happens: a failing SessionStart, UserPromptSubmit or PreToolUse hook must not stop the harness, and everything
 * that went wrong has already gone to stderr with nothing on stdout.
 */
export async function main(argv: string[], io: Io): Promise<number> {
  const code = await run(argv, io);
  return argv.some((arg) => arg === "--hook" || arg.startsWith("--hook=")) ? 0 : code;
}

async function run(argv: string[], io: Io): Promise<number> {
  const fail = (code: number, message: string) => {
    io.stderr.write(`cairn-load: ${message}\n`);
    return code;
  };
  let values;
  try {
    ({ values } = parseArgs({
      args: normalizeHook(argv),
      strict: true,
      options: {
        agent: { type: "string" },
        project: { type: "string" },
        url: { type: "string" },
        harness: { type: "string" },
        "index-dir": { type: "string", default: "agents" },
        target: { type: "string" },
        "budget-bytes": { type: "string" },
        "budget-lines": { type: "string" },
        strict: { type: "boolean", default: false },
        hook: { type: "string" },
        "timeout-ms": { type: "string" },
        help: { type: "boolean", default: false },
      },
    }));
  } catch (error) {
    return fail(2, `${(error as Error).message}\n${USAGE}`);
  }
  if (values.help) {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (values.hook !== undefined && !["session", "prompt", "edit", "capture"].includes(values.hook)) {
    return fail(2, `--hook is session, prompt, edit or capture, not "${values.hook}"`);
  }
  const timeout = values["timeout-ms"];
  if (timeout !== undefined && (!/^\d+$/.test(timeout) || Number(timeout) === 0)) {
    return fail(2, `--timeout-ms must be a positive whole number of milliseconds, not "${timeout}"`);
  }
  const env = {
    ...io.env,
    ...(values.url === undefined ? {} : { CAIRN_URL: values.url }),
    ...(timeout === undefined ? {} : { CAIRN_HOOK_TIMEOUT_MS: timeout }),
  };
  if (values.hook === "prompt") return runPromptHook({ ...io, env }, values.project);
  if (values.hook === "edit") return runEditHook({ ...io, env }, values.project);
  if (values.hook === "capture") {
    // The capture's own timeout: a CAIRN_HOOK_TIMEOUT_MS meant for the prompt and edit hooks does not shorten it.
    const captureEnv = timeout === undefined ? env : { ...env, CAIRN_CAPTURE_TIMEOUT_MS: timeout };
    return runCaptureHook({ ...io, env: captureEnv }, { harness: values.harness, project: values.project });
  }
  if (!values.agent) return fail(2, `--agent is required\n${USAGE}`);
  if (!values.harness) return fail(2, `--harness is required\n${USAGE}`);
  if (!isHarness(values.harness)) {
    return fail(2, `unknown harness "${values.harness}"; one of ${Object.keys(HARNESSES).join(", ")}`);
  }
  const harness = HARNESSES[values.harness];
  const budget = { ...harness.budget };
  for (const [flag, key] of [
    ["budget-bytes", "bytes"],
    ["budget-lines", "lines"],
  ] as const) {
    const raw = values[flag];
    if (raw === undefined) continue;
    if (!/^\d+$/.test(raw) || Number(raw) === 0) return fail(2, `--${flag} must be a positive whole number, not "${raw}"`);
    budget[key] = Number(raw);
  }

  try {
    const config = loadLoaderConfig(env);
    // A hook's JSON names the session's working directory; a plain run has nothing on stdin to wait for.
    const stdin = values.hook === "session" && io.stdin ? await io.stdin() : "";
    const projectDir = await findProject({ flag: values.project, env: io.env, hookCwd: hookCwd(stdin), cwd: io.cwd });
    const agentIndex = await readAgentIndex(resolve(projectDir, values["index-dir"]), values.agent);
    // The SessionStart hook gives the index from the project's files, unlinted: its one call to Cairn is for the
    // agent's unread messages (sessionInbox).
    if (config.memoryCoreUrl && values.hook !== "session") {
      const findings = await lintPointers(agentIndex.index, config.memoryCoreUrl, config.token, await gitTopLevel(projectDir));
      for (const f of findings) io.stderr.write(`cairn-load: lint: ${f.pointer} is ${f.problem}: ${f.fix}\n`);
      // Code that moved since a lesson is a reason to re-read it, not a broken pointer: it never fails a run.
      if (values.strict && findings.some((f) => f.problem !== "moved")) return fail(1, "lint findings with --strict: nothing written");
    }
    const content = renderBlock(agentIndex);
    const report = checkBudget(content, budget);
    if (report.over && report.cut) {
      io.stderr.write(
        `cairn-load: WARNING: the block of ${values.agent} is ${report.bytes} bytes in ${report.lines} lines, over the ` +
          `${harness.name} budget (${budget.bytes} bytes${budget.lines ? `, ${budget.lines} lines` : ""}): a harness that reads ` +
          `only that much misses the last ${report.cut.lines} lines (${report.cut.bytes} bytes), from "${report.cut.firstMissedLine.slice(0, 80)}". ` +
          `Nothing was cut: shorten ${values.agent}'s MEMORY.md.\n`,
      );
      if (values.strict) return fail(1, "over budget with --strict: nothing written");
    }
    if (values.hook === "session") {
      // Claude Code and Codex both take this from a SessionStart hook (sources startup, resume, clear, compact).
      const inbox = await sessionInbox(config, io);
      const context = inbox.length > 0 ? `${content.trimEnd()}\n\n${inbox.join("\n")}\n` : content;
      io.stdout.write(`${JSON.stringify({ hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: context } })}\n`);
      return 0;
    }
    if (!harness.file) {
      io.stdout.write(content);
      return 0;
    }
    const target = resolve(projectDir, values.target ?? ".");
    const result = await project(harness, values.agent, content, target);
    for (const file of result.files) {
      io.stderr.write(`cairn-load: ${file.changed ? "wrote" : "unchanged"} ${file.path}\n`);
    }
    return 0;
  } catch (error) {
    if (error instanceof LoaderError) return fail(1, error.message);
    return fail(1, `failed: ${(error as Error).message}`);
  }
}

/**
 * The agent's unread messages for the SessionStart hook (inbox.ts), after its index: the one call the hook makes
 * to Cairn, within the hook's timeout, and only with CAIRN_URL and CAIRN_TOKEN. Without an answer the index is
 * given alone, and stderr says why.
 */
async function sessionInbox(config: ReturnType<typeof loadLoaderConfig>, io: Io): Promise<string[]> {
  if (!config.memoryCoreUrl || !config.token) return [];
  try {
    return inboxBlock(await unreadMessages(config.memoryCoreUrl, config.token, Date.now() + config.hookTimeoutMs));
  } catch (error) {
    const name = (error as Error).name;
    const why = name === "TimeoutError" ? `no answer within ${config.hookTimeoutMs} ms` : (error as Error).message;
    io.stderr.write(`cairn-load: session hook: unread messages left out: ${why}\n`);
    return [];
  }
}

/** Never fails the prompt: whatever happens, exit 0; what went wrong goes to stderr, for whoever reads hook logs. */
async function runPromptHook(io: Io, projectFlag: string | undefined): Promise<number> {
  return runHook("prompt hook", io, async (stdin) => {
    const config = loadLoaderConfig(io.env);
    return promptHook(stdin, {
      memoryCoreUrl: config.memoryCoreUrl,
      token: config.token,
      timeoutMs: config.hookTimeoutMs,
      project: { flag: projectFlag, env: io.env, cwd: io.cwd },
    });
  });
}

/** Never blocks the edit: whatever happens, exit 0 and nothing on stdout unless there are pointers to give. */
async function runEditHook(io: Io, projectFlag: string | undefined): Promise<number> {
  return runHook("edit hook", io, async (stdin) => {
    const config = loadLoaderConfig(io.env);
    return editHook(stdin, {
      memoryCoreUrl: config.memoryCoreUrl,
      token: config.token,
      timeoutMs: config.editHookTimeoutMs,
      projectFlag,
      env: io.env,
      cwd: io.cwd,
    });
  });
}

async function runHook(name: string, io: Io, answer: (stdin: string) => Promise<HookOutcome>): Promise<number> {
  try {
    const outcome = await answer(io.stdin ? await io.stdin() : "");
    if ("output" in outcome) io.stdout.write(outcome.output);
    else io.stderr.write(`cairn-load: ${name}: ${outcome.silent}\n`);
  } catch (error) {
    io.stderr.write(`cairn-load: ${name}: ${(error as Error).message}\n`);
  }
  return 0;
}
