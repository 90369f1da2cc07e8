import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeAtomically } from "./atomic-write.js";
import type { ParseContext } from "./transcript/exchanges.js";

/**
 * How far the capture hook has sent one transcript to one Cairn: the byte offset and line number the next
 * capture starts reading at (always the start of a line), and what a parse starting there must know. One small
 * file per transcript and Cairn under the user's state folder: the transcript is the user's file, not the
 * project's, and nothing is added to the project's tree (nor to a worktree's `.git`, which is a file).
 */
export interface CapturePosition {
  offset: number;
  line: number;
  context: ParseContext;
}

interface StateFile {
  transcript: string;
  cairn: string;
  position: CapturePosition;
}

export const START: CapturePosition = { offset: 0, line: 1, context: { ordinal: 0 } };

export function statePath(stateDir: string, transcript: string, cairn: URL): string {
  const id = createHash("sha256").update(`${transcript}\n${cairn.origin}`).digest("hex").slice(0, 32);
  return join(stateDir, `${id}.json`);
}

/** The saved position, or the start when there is none or it is not one this hook wrote. */
export async function readPosition(path: string, transcript: string, cairn: URL): Promise<CapturePosition> {
  let state: StateFile;
  try {
    state = JSON.parse(await readFile(path, "utf8")) as StateFile;
  } catch {
    return START;
  }
  const p = state?.position;
  const valid =
    state.transcript === transcript &&
    state.cairn === cairn.origin &&
    Number.isSafeInteger(p?.offset) &&
    p.offset >= 0 &&
    Number.isSafeInteger(p?.line) &&
    p.line >= 1 &&
    Number.isSafeInteger(p?.context?.ordinal) &&
    p.context.ordinal >= 0;
  if (!valid) return START;
  const context: ParseContext = { ordinal: p.context.ordinal };
  if (typeof p.context.sessionId === "string") context.sessionId = p.context.sessionId;
  if (typeof p.context.model === "string") context.model = p.context.model;
  return { offset: p.offset, line: p.line, context };
}

export async function savePosition(path: string, transcript: string, cairn: URL, position: CapturePosition): Promise<void> {
  const state: StateFile = { transcript, cairn: cairn.origin, position };
  await writeAtomically(path, `${JSON.stringify(state)}\n`, { mode: 0o600 });
}
