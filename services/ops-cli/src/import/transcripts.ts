import { readdir, readFile, stat } from "node:fs/promises";
import { join, relative } from "node:path";
import { CliError, usageError } from "../io.js";
import { finalize, keyOf, sessionIdOf, ticketsIn, type AddMemoryRequest } from "./draft.js";
import { redact } from "./redact.js";

export const HARNESSES = ["claude-code", "codex"] as const;
export type Harness = (typeof HARNESSES)[number];

export interface TranscriptPlan {
  files: number;
  sessions: number;
  memories: AddMemoryRequest[];
  /** Requests the assistant never answered or acted on (an interrupted or local command): nothing to learn from. */
  unanswered: number;
}

/** One request and what the assistant did with it, as read from a transcript. */
interface Exchange {
  sessionId: string;
  key: string;
  at: string | undefined;
  prompt: string;
  thought: string[];
  /** Text the assistant wrote since its last tool call: the answer, unless another tool call follows. */
  pending: string[];
  model: string | undefined;
  refs: string[];
  acted: boolean;
}

/** Longest argument value kept in a tool line: what was run or opened, not its content. */
const ARGUMENT_CHARS = 120;

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
    const exchanges = harness === "claude-code" ? claudeCodeExchanges(lines, file) : codexExchanges(lines, file);
    for (const e of exchanges) {
      if (!e.acted && e.pending.length === 0) {
        unanswered++;
        continue;
      }
      sessions.add(e.sessionId);
      memories.push(toMemory(e, harness));
    }
  }
  return { files: files.length, sessions: sessions.size, memories, unanswered };
}

function toMemory(e: Exchange, harness: Harness): AddMemoryRequest {
  return finalize({
    session_id: sessionIdOf(e.sessionId),
    idempotency_key: e.key,
    prompt: e.prompt,
    thought: e.thought.length > 0 ? e.thought.join("\n") : "(no reasoning or tool use recorded)",
    response: e.pending.length > 0 ? e.pending.join("\n\n") : "(no answer: the exchange ended with a tool call)",
    ...(e.at ? { occurred_at: e.at } : {}),
    ...(e.model ? { model: e.model } : {}),
    tags: ["transcript", harness],
    refs: [...ticketsIn(e.prompt), ...e.refs],
  });
}

interface Line {
  number: number;
  value: Record<string, unknown>;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/**
 * Claude Code's session files: `user` and `assistant` lines carrying `message.content` (a string, or blocks of
 * `text`, `thinking`, `tool_use`, `tool_result`, `image`), with `sessionId`, `uuid` and `timestamp`. A user
 * line of tool results continues the exchange; one with text starts the next.
 */
function claudeCodeExchanges(lines: Line[], file: string): Exchange[] {
  const known = new Set(["user", "assistant", "system", "summary", "file-history-snapshot", "queue-operation", "progress", "attachment"]);
  if (lines.length > 0 && !lines.some((l) => known.has(String(l.value.type)))) {
    throw new CliError(`${file} is not a Claude Code session file (no line of type user or assistant); nothing was imported`, 2);
  }
  const exchanges: Exchange[] = [];
  let current: Exchange | undefined;
  for (const { number, value } of lines) {
    const type = value.type;
    if (type !== "user" && type !== "assistant") continue;
    // Subagents' side chains, expanded commands, compaction summaries and lines only shown in Claude Code's own
    // view are not requests of the person, nor what the model was sent.
    if (
      value.isSidechain === true ||
      value.isMeta === true ||
      value.isCompactSummary === true ||
      value.isVisibleInTranscriptOnly === true
    ) {
      continue;
    }
    const message = isObject(value.message) ? value.message : {};
    const content = message.content;
    if (type === "user") {
      const blocks = Array.isArray(content) ? content.filter(isObject) : [];
      const results = blocks.filter((b) => b.type === "tool_result");
      if (results.length > 0) {
        for (const r of results) if (r.is_error === true && current) current.thought.push(`  failed: ${oneLine(resultText(r.content))}`);
        continue;
      }
      const text =
        typeof content === "string"
          ? content
          : blocks.map((b) => (b.type === "text" ? (str(b.text) ?? "") : b.type === "image" ? "[image]" : "")).join("\n");
      if (!/\S/.test(text)) continue;
      const sessionId = str(value.sessionId) ?? sessionFromPath(file);
      current = {
        sessionId,
        key: keyOf("claude-code", sessionId, str(value.uuid) ?? `line-${number}`),
        at: timestamp(value.timestamp),
        prompt: commandPrompt(text),
        thought: [],
        pending: [],
        model: undefined,
        refs: [],
        acted: false,
      };
      exchanges.push(current);
      continue;
    }
    if (!current) continue;
    const model = str(message.model);
    if (model && !model.startsWith("<")) current.model = model;
    const blocks = typeof content === "string" ? [{ type: "text", text: content }] : Array.isArray(content) ? content.filter(isObject) : [];
    for (const b of blocks) {
      if (b.type === "text" && str(b.text)?.trim()) current.pending.push(b.text as string);
      else if (b.type === "thinking" && str(b.thinking)?.trim()) current.thought.push(b.thinking as string);
      else if (b.type === "tool_use") {
        const input = isObject(b.input) ? b.input : {};
        toolCall(current, str(b.name) ?? "tool", input);
        for (const key of ["file_path", "notebook_path"]) if (str(input[key])) current.refs.push(input[key] as string);
      }
    }
  }
  return exchanges;
}

/**
 * Codex rollout files: `session_meta` first, then `response_item` lines whose payload is a `message` (user,
 * assistant), `reasoning` (its summary), `function_call`, `custom_tool_call`, `local_shell_call` or
 * `web_search_call`; `turn_context` names the model. `event_msg` lines repeat what the items say and are passed over.
 */
function codexExchanges(lines: Line[], file: string): Exchange[] {
  const first = lines[0];
  const meta = first?.value.type === "session_meta" && isObject(first.value.payload) ? first.value.payload : undefined;
  const sessionId = str(meta?.id);
  if (lines.length > 0 && !sessionId) {
    throw new CliError(`${file} is not a Codex rollout file (its first line is not a session_meta with an id); nothing was imported`, 2);
  }
  const exchanges: Exchange[] = [];
  let current: Exchange | undefined;
  let model: string | undefined;
  for (const { value } of lines.slice(1)) {
    const payload = isObject(value.payload) ? value.payload : {};
    if (value.type === "turn_context") {
      model = str(payload.model) ?? model;
      continue;
    }
    if (value.type !== "response_item") continue;
    const kind = payload.type;
    if (kind === "message") {
      const text = (Array.isArray(payload.content) ? payload.content.filter(isObject) : [])
        .map((c) => (c.type === "input_text" || c.type === "output_text" ? (str(c.text) ?? "") : c.type === "input_image" ? "[image]" : ""))
        .join("\n");
      if (!/\S/.test(text)) continue;
      if (payload.role === "user") {
        if (injectedContext(text)) continue;
        current = {
          sessionId: sessionId!,
          key: keyOf("codex", sessionId!, String(exchanges.length + 1)),
          at: timestamp(value.timestamp),
          prompt: text,
          thought: [],
          pending: [],
          model,
          refs: [],
          acted: false,
        };
        exchanges.push(current);
      } else if (payload.role === "assistant" && current) {
        current.pending.push(text);
        current.model = model ?? current.model;
      }
      continue;
    }
    if (!current) continue;
    if (kind === "reasoning") {
      const parts = [
        ...(Array.isArray(payload.summary) ? payload.summary : []),
        ...(Array.isArray(payload.content) ? payload.content : []),
      ];
      for (const p of parts) if (isObject(p) && str(p.text)?.trim()) current.thought.push(p.text as string);
    } else if (kind === "function_call") {
      toolCall(current, str(payload.name) ?? "function", parseArguments(payload.arguments));
    } else if (kind === "custom_tool_call") {
      const input = str(payload.input) ?? "";
      const patched = [...input.matchAll(/^\*\*\* (?:Add|Update|Delete) File: (.+)$/gm)].map((m) => m[1]!.trim());
      current.refs.push(...patched);
      toolCall(current, str(payload.name) ?? "tool", patched.length > 0 ? { files: patched.join(", ") } : { input });
    } else if (kind === "local_shell_call") {
      const action = isObject(payload.action) ? payload.action : {};
      toolCall(current, "shell", { command: Array.isArray(action.command) ? action.command.join(" ") : "" });
    } else if (kind === "web_search_call") {
      const action = isObject(payload.action) ? payload.action : {};
      toolCall(current, "web_search", { query: str(action.query) ?? str(action.url) ?? "" });
    }
  }
  return exchanges;
}

/** A tool call as one short line of the thought: its name and the arguments that say what it did. */
function toolCall(exchange: Exchange, name: string, input: Json) {
  // Text written before a tool call was narration on the way, not the answer.
  exchange.thought.push(...exchange.pending);
  exchange.pending = [];
  exchange.acted = true;
  const wanted = [
    "command",
    "cmd",
    "file_path",
    "notebook_path",
    "path",
    "pattern",
    "url",
    "query",
    "description",
    "files",
    "subagent_type",
    "input",
  ];
  const keys = [...wanted.filter((k) => k in input), ...Object.keys(input).filter((k) => !wanted.includes(k))];
  const args: string[] = [];
  for (const key of keys) {
    const value = input[key];
    const text = Array.isArray(value) && value.every((v) => typeof v === "string") ? value.join(" ") : value;
    if (typeof text !== "string" && typeof text !== "number" && typeof text !== "boolean") continue;
    // Contents (a file written, a string replaced) are outputs, not what the call was about.
    if (["content", "new_string", "old_string", "new_source", "edits"].includes(key)) continue;
    args.push(`${key}: ${shorten(String(text))}`);
    if (args.length === 2) break;
  }
  exchange.thought.push(`- ${name}${args.length > 0 ? ` (${args.join("; ")})` : ""}`);
}

/** One line of at most ARGUMENT_CHARS, redacted before it is cut so a secret is never left half-visible. */
function shorten(text: string): string {
  const line = oneLine(redact(text));
  return line.length <= ARGUMENT_CHARS ? line : `${line.slice(0, ARGUMENT_CHARS - 1)}…`;
}

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();

function resultText(content: unknown): string {
  if (typeof content === "string") return content.slice(0, 400);
  if (Array.isArray(content))
    return content
      .map((c) => (isObject(c) ? (str(c.text) ?? "") : ""))
      .join(" ")
      .slice(0, 400);
  return "";
}

function parseArguments(raw: unknown): Json {
  if (isObject(raw)) return raw;
  if (typeof raw !== "string") return {};
  try {
    const parsed = JSON.parse(raw) as unknown;
    return isObject(parsed) ? parsed : { arguments: raw };
  } catch {
    return { arguments: raw };
  }
}

/** What Codex puts in the user's role that the person did not write: its environment and instruction files. */
const injectedContext = (text: string) =>
  /^\s*(?:<environment_context>|<user_instructions>|<permissions instructions>|<user_shell_command>|# AGENTS\.md instructions)/.test(text);

/** A slash command as the person typed it (`/review PR 12`), not the tags Claude Code wraps it in. */
function commandPrompt(text: string): string {
  const name = /<command-name>([\s\S]*?)<\/command-name>/.exec(text)?.[1]?.trim();
  if (!name) return text;
  const args = /<command-args>([\s\S]*?)<\/command-args>/.exec(text)?.[1]?.trim();
  return args ? `${name} ${args}` : name;
}

function timestamp(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

const sessionFromPath = (file: string) => file.replace(/^.*\//, "").replace(/\.jsonl$/, "");

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

async function jsonLines(file: string, base: string): Promise<Line[]> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new CliError(`cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? "error"})`, 2);
  }
  const name = file === base ? file : relative(base, file);
  const lines: Line[] = [];
  text.split("\n").forEach((raw, i) => {
    if (!raw.trim()) return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      throw new CliError(`${name}: line ${i + 1} is not JSON (a file cut short?); nothing was imported`, 2);
    }
    if (!isObject(value)) throw new CliError(`${name}: line ${i + 1} is not a JSON object; nothing was imported`, 2);
    lines.push({ number: i + 1, value });
  });
  return lines;
}
