import { readdir, readFile, stat } from "node:fs/promises";
import { join, relative } from "node:path";
import {
  exchangesOf,
  memoryOf,
  parseLines,
  TranscriptFormatError,
  unanswered as unansweredExchange,
  type Harness,
  type TranscriptLine,
} from "@cairn/loader/transcript/exchanges";
import { CliError, usageError } from "../io.js";
import type { AddMemoryRequest } from "./draft.js";

export { HARNESSES, type Harness } from "@cairn/loader/transcript/exchanges";

export interface TranscriptPlan {
  files: number;
  sessions: number;
  memories: AddMemoryRequest[];
  /** Requests the assistant never answered or acted on (an interrupted or local command): nothing to learn from. */
  unanswered: number;
}

/**
 * Reads every transcript under `path` (a file, or a directory searched for `*.jsonl`) into the memories it
 * becomes. Every file is read and parsed before anything is written: a line that is not JSON (a file cut
 * short) stops the import with nothing stored.
 */
export async function planTranscriptImport(harness: Harness, path: string): Promise<TranscriptPlan> {
  const files = await transcriptFiles(path);
  const memories: AddMemoryRequest[] = [];
  const sessions = new Set<string>();
  let unanswered = 0;
  for (const file of files) {
    const lines = await jsonLines(file, path);
    let exchanges;
    try {
      exchanges = exchangesOf(harness, lines, { ordinal: 0 }, file);
    } catch (error) {
      if (error instanceof TranscriptFormatError) throw new CliError(`${error.message}; nothing was imported`, 2);
      throw error;
    }
    for (const e of exchanges) {
      if (unansweredExchange(e)) {
        unanswered++;
        continue;
      }
      sessions.add(e.sessionId);
      memories.push(memoryOf(e, harness));
    }
  }
  return { files: files.length, sessions: sessions.size, memories, unanswered };
}

async function transcriptFiles(path: string): Promise<string[]> {
  const info = await stat(path).catch(() => undefined);
  if (!info) throw usageError(`--path: ${path} does not exist`);
  if (info.isFile()) return [path];
  if (!info.isDirectory()) throw usageError(`--path: ${path} is neither a file nor a directory`);
  const entries = await readdir(path, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((e) => e.isFile() && e.name.endsWith(".jsonl"))
    .map((e) => join(e.parentPath ?? (e as { path?: string }).path ?? path, e.name))
    .sort();
  if (files.length === 0) throw usageError(`--path: no .jsonl transcript under ${path}`);
  return files;
}

async function jsonLines(file: string, base: string): Promise<TranscriptLine[]> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    throw new CliError(`cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? "error"})`, 2);
  }
  const name = file === base ? file : relative(base, file);
  try {
    return parseLines(bytes, 0, 1, name, { partialLast: false }).lines;
  } catch (error) {
    if (error instanceof TranscriptFormatError) throw new CliError(`${error.message}; nothing was imported`, 2);
    throw error;
  }
}
