import { open } from "node:fs/promises";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { readPosition, savePosition, START, statePath, type CapturePosition } from "./capture-state.js";
import { requestCairn } from "./cairn-request.js";
import { currentBranch, repositoryOf } from "./git.js";
import { findProject, gitTopLevel } from "./project.js";
import { citationOf } from "./transcript/code-citation.js";
import type { AddMemoryRequest } from "./transcript/draft.js";
import {
  exchangesOf,
  memoryOf,
  parseLines,
  TranscriptFormatError,
  unanswered,
  type Exchange,
  type Harness,
} from "./transcript/exchanges.js";
import { redactStrings } from "./transcript/redact.js";

/**
 * The capture hook (`cairn-load --hook capture`): for Claude Code's Stop, PreCompact and SessionEnd and Codex's
 * Stop and PreCompact, it keeps the session's exchanges from its transcript as memories, each once. It reads
 * the transcript from where its last capture of it stopped, drafts each finished exchange as
 * `cairn import transcripts` does, redacts it, and writes it with the agent's token (`source: import`, so it is
 * stored untrusted and waits for review like any import; tagged `captured`; its idempotency key is the
 * transcript's own id of the request, under `capture:`). The saved position moves only past what Cairn
 * acknowledged: what a timeout, an unreachable Cairn or a refused token left unsent is sent next time.
 * It prints nothing on stdout, ever; what it did or why it did nothing goes to stderr.
 */

/** The tag every captured memory carries: what tells it from one the agent wrote. */
export const CAPTURED_TAG = "captured";
/** The idempotency keys of captured memories start with this. */
export const KEY_PREFIX = "capture:";

export interface CaptureSettings {
  memoryCoreUrl: URL | undefined;
  token: string | undefined;
  timeoutMs: number;
  stateDir: string;
  /** From `--harness`; else a hook input with a `turn_id` (Codex sends one, Claude Code does not) says Codex. */
  harness: Harness | undefined;
  projectFlag: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
}

interface HookInput {
  transcript_path?: unknown;
  hook_event_name?: unknown;
  cwd?: unknown;
  turn_id?: unknown;
}

/** What one capture did, for stderr. */
export async function captureHook(stdin: string, settings: CaptureSettings): Promise<string> {
  const deadline = Date.now() + settings.timeoutMs;
  let input: HookInput;
  try {
    input = JSON.parse(stdin) as HookInput;
  } catch {
    return "stdin is not the hook's JSON";
  }
  if (typeof input !== "object" || input === null) return "stdin is not the hook's JSON";
  const event = typeof input.hook_event_name === "string" ? input.hook_event_name : "Stop";
  const hookCwd = typeof input.cwd === "string" && input.cwd ? resolve(settings.cwd, input.cwd) : settings.cwd;
  if (typeof input.transcript_path !== "string" || !input.transcript_path)
    return "no transcript_path in the hook's JSON: nothing to capture";
  if (!settings.memoryCoreUrl || !settings.token) return "CAIRN_URL and CAIRN_TOKEN are not both set";
  const harness: Harness = settings.harness ?? (typeof input.turn_id === "string" ? "codex" : "claude-code");
  const transcript = resolve(hookCwd, input.transcript_path);
  const cairn = settings.memoryCoreUrl;
  const state = statePath(settings.stateDir, transcript, cairn);

  const read = await readSince(transcript, await readPosition(state, transcript, cairn));
  if ("problem" in read) return read.problem;
  const { from, bytes } = read;
  let parsed;
  const context = { ...from.context };
  let exchanges: Exchange[];
  try {
    parsed = parseLines(bytes, from.offset, from.line, transcript, { partialLast: true });
    exchanges = exchangesOf(harness, parsed.lines, context, transcript);
  } catch (error) {
    if (error instanceof TranscriptFormatError) return `${error.message}: nothing captured`;
    throw error;
  }
  // PreCompact can come in the middle of a turn, and a Stop before the turn's answer is in the file: the last
  // exchange then waits for a later capture, so that it is sent once, whole. SessionEnd sends everything.
  const last = exchanges.at(-1);
  const waits = last !== undefined && event !== "SessionEnd" && (event === "PreCompact" || last.pending.length === 0);
  const finished = waits ? exchanges.slice(0, -1) : exchanges;
  const end: CapturePosition = { offset: parsed.end, line: parsed.next, context };
  const after = (i: number): CapturePosition => (i + 1 < exchanges.length ? exchanges[i + 1]!.start : end);

  const project = await findProject({ flag: settings.projectFlag, env: settings.env, hookCwd, cwd: settings.cwd });
  // The repository and branch the files were written on, so that a reader on another branch is told (`other_branch`).
  const where = finished.some((e) => e.edited.length > 0) ? await whereWritten(project, deadline) : undefined;
  const counts = { stored: 0, replayed: 0, byAgent: 0, unanswered: 0, conflicts: 0, refused: 0 };
  // Lines before the first exchange read (the end of one sent before) are passed over with it.
  let position: CapturePosition = finished.length === 0 ? (exchanges[0]?.start ?? end) : from;
  let stopped: string | undefined;
  for (const [i, exchange] of finished.entries()) {
    if (exchange.recordedByAgent) counts.byAgent++;
    else if (unanswered(exchange)) counts.unanswered++;
    else {
      const memory = memoryOf(exchange, harness, {
        key: `${KEY_PREFIX}${exchange.key}`,
        tags: [CAPTURED_TAG],
        notes: true,
        code: where && codeOf(exchange, where, hookCwd),
      });
      const sent = await send(memory, cairn, settings.token, deadline);
      if (typeof sent === "object") {
        stopped = sent.reason;
        break;
      }
      counts[sent]++;
    }
    position = after(i);
  }
  try {
    await savePosition(state, transcript, cairn, position);
  } catch (error) {
    return `could not save the capture position in ${state} (${(error as NodeJS.ErrnoException).code ?? "error"}); the next capture resends what this one sent, which Cairn replays`;
  }
  const done = [
    `${counts.stored} stored`,
    `${counts.replayed} there already`,
    ...(counts.byAgent ? [`${counts.byAgent} recorded by the agent itself`] : []),
    ...(counts.unanswered ? [`${counts.unanswered} unanswered`] : []),
    ...(counts.conflicts ? [`${counts.conflicts} stored earlier with other content, left as they were`] : []),
    ...(counts.refused ? [`${counts.refused} refused by Cairn as invalid, passed over`] : []),
  ].join(", ");
  const waiting = exchanges.filter((e) => e.start.offset >= position.offset).length;
  return `${event}: ${done}${stopped ? `; ${stopped}: ${waiting} exchange(s) left for the next capture` : waiting ? `; ${waiting} unfinished exchange(s) left for the next capture` : ""}`;
}

/** The transcript's bytes from the saved position on, or from its start when the file is not the one the position was saved for. */
async function readSince(file: string, saved: CapturePosition): Promise<{ from: CapturePosition; bytes: Buffer } | { problem: string }> {
  let handle;
  try {
    handle = await open(file, "r");
  } catch (error) {
    return { problem: `cannot read the transcript ${file} (${(error as NodeJS.ErrnoException).code ?? "error"})` };
  }
  try {
    const size = (await handle.stat()).size;
    let from = saved;
    // A file shorter than the position, or a position not at a line's start, is another file now: read it all
    // again (the idempotency keys make what was sent before replay).
    if (from.offset > size) from = START;
    if (from.offset > 0) {
      const before = Buffer.alloc(1);
      await handle.read(before, 0, 1, from.offset - 1);
      if (before[0] !== 0x0a) from = START;
    }
    const bytes = Buffer.alloc(size - from.offset);
    let filled = 0;
    while (filled < bytes.length) {
      const { bytesRead } = await handle.read(bytes, filled, bytes.length - filled, from.offset + filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return { from, bytes: bytes.subarray(0, filled) };
  } catch (error) {
    return { problem: `cannot read the transcript ${file} (${(error as NodeJS.ErrnoException).code ?? "error"})` };
  } finally {
    await handle.close();
  }
}

type Sent = "stored" | "replayed" | "conflicts" | "refused" | { reason: string };

/** One memory to Cairn: what became of it, or why the capture stops here. */
async function send(memory: AddMemoryRequest, cairn: URL, token: string, deadline: number): Promise<Sent> {
  const remaining = deadline - Date.now();
  if (remaining <= 0) return { reason: "out of time" };
  let response: Response;
  try {
    // Every string redacted once more on its way out, whatever derived it (as the importers' client does).
    response = await requestCairn(cairn, token, "/v1/memories", deadline, { method: "POST", body: redactStrings(memory) });
  } catch (error) {
    return { reason: (error as Error).name === "TimeoutError" ? "no answer from Cairn in time" : "Cairn is unreachable" };
  }
  const answer = (await response.json().catch(() => ({}))) as { replayed?: boolean; code?: string };
  if (response.ok) return answer.replayed ? "replayed" : "stored";
  if (response.status === 409 && answer.code === "idempotency_conflict") return "conflicts";
  if (response.status === 401 || response.status === 403) return { reason: `Cairn refused the token (${response.status})` };
  // A memory Cairn will never take as it is would stop every capture after it: it is passed over, and said.
  if (response.status === 400 || response.status === 413 || response.status === 422) return "refused";
  return { reason: `Cairn answered ${response.status}` };
}

/**
 * The files the exchange wrote, as paths relative to the repository (none outside it), cited with the
 * repository's name and branch as the importer cites a commit's files (`citationOf`: redacted, names the contract
 * would refuse left out, folders named past its limit). No commit is cited: the files were written on top of HEAD
 * and are not in a commit yet.
 */
function codeOf(exchange: Exchange, where: Written, cwd: string): AddMemoryRequest["code"] | undefined {
  const { top, ...names } = where;
  const paths = exchange.edited.map((raw) => relative(top, resolve(cwd, raw)).split(sep).join("/"));
  return citationOf({ ...names, paths: paths.filter((path) => !isAbsolute(path) && !path.startsWith("../")) });
}

interface Written {
  top: string;
  repository?: string;
  branch?: string;
}

/** The project's repository, its name and checked-out branch, when git answers in time; else nothing is cited. */
async function whereWritten(project: string, deadline: number): Promise<Written | undefined> {
  try {
    const top = await gitTopLevel(project);
    if (!top) return undefined;
    const options = { cwd: top, deadline };
    const [branch, repository] = await Promise.all([currentBranch(options), repositoryOf(options)]);
    return { top, ...(repository ? { repository } : {}), ...(branch ? { branch } : {}) };
  } catch {
    return undefined;
  }
}
