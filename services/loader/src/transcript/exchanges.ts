import { finalize, keyOf, sessionIdOf, ticketsIn, type AddMemoryRequest } from "./draft.js";
import { notesBlock, notesOf } from "./notes.js";
import { redact } from "./redact.js";

/**
 * Claude Code's and Codex's session files read into exchanges: one request of the person and what the assistant
 * did with it. `cairn import transcripts` reads whole files; the capture hook reads the lines appended since its
 * last capture, so a parse starts from a context (the session, the model, how many exchanges came before) and
 * says where each exchange began.
 */

export const HARNESSES = ["claude-code", "codex"] as const;
export type Harness = (typeof HARNESSES)[number];

export type Json = Record<string, unknown>;

/** One line of a session file: its number (1-based) and the byte offset it starts at, when known. */
export interface TranscriptLine {
  number: number;
  offset: number;
  value: Json;
}

/** One request and what the assistant did with it, as read from a transcript. */
export interface Exchange {
  sessionId: string;
  key: string;
  at: string | undefined;
  prompt: string;
  thought: string[];
  /** Text the assistant wrote since its last tool call: the answer, unless another tool call follows. */
  pending: string[];
  model: string | undefined;
  refs: string[];
  /** Files the assistant wrote, edited or patched, as the transcript names them (absolute or relative). */
  edited: string[];
  acted: boolean;
  /** The assistant called Cairn's add_memory (or add_memories) itself in this exchange. */
  recordedByAgent: boolean;
  /** The line the exchange starts at, and the parse context there: where a later parse picks it up again. */
  start: { offset: number; line: number; context: ParseContext };
}

/** What a parse that starts in the middle of a file must know of what came before. */
export interface ParseContext {
  /** The session's id (Codex names it only on its first line). */
  sessionId?: string;
  /** The model in effect (Codex names it in `turn_context` lines). */
  model?: string;
  /** Exchanges that started before (Codex's keys count them). */
  ordinal: number;
}

export class TranscriptFormatError extends Error {}

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** Longest argument value kept in a tool line: what was run or opened, not its content. */
const ARGUMENT_CHARS = 120;

/** Claude Code's tools that write a file, and the input naming it. */
const WRITING_TOOLS = new Set(["Write", "Edit", "MultiEdit", "NotebookEdit"]);

/** A call of Cairn's own write tool, as the harnesses name an MCP tool (`mcp__cairn__add_memory`, or namespaced). */
const isAddMemory = (name: string) => /(?:^|__|\.|\/)add_memor(?:y|ies)$/.test(name);

export function exchangesOf(harness: Harness, lines: readonly TranscriptLine[], context: ParseContext, file: string): Exchange[] {
  return harness === "claude-code" ? claudeCodeExchanges(lines, context, file) : codexExchanges(lines, context, file);
}

/**
 * Claude Code's session files: `user` and `assistant` lines carrying `message.content` (a string, or blocks of
 * `text`, `thinking`, `tool_use`, `tool_result`, `image`), with `sessionId`, `uuid` and `timestamp`. A user
 * line of tool results continues the exchange; one with text starts the next.
 */
function claudeCodeExchanges(lines: readonly TranscriptLine[], context: ParseContext, file: string): Exchange[] {
  const known = new Set(["user", "assistant", "system", "summary", "file-history-snapshot", "queue-operation", "progress", "attachment"]);
  if (lines.length > 0 && !lines.some((l) => known.has(String(l.value.type)))) {
    throw new TranscriptFormatError(`${file} is not a Claude Code session file (no line of type user or assistant)`);
  }
  const exchanges: Exchange[] = [];
  let current: Exchange | undefined;
  for (const { number, offset, value } of lines) {
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
      const sessionId = str(value.sessionId) ?? context.sessionId ?? sessionFromPath(file);
      current = {
        ...blank(sessionId, keyOf("claude-code", sessionId, str(value.uuid) ?? `line-${number}`), timestamp(value.timestamp)),
        prompt: commandPrompt(text),
        start: { offset, line: number, context: { ...context } },
      };
      context.ordinal++;
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
        const name = str(b.name) ?? "tool";
        const input = isObject(b.input) ? b.input : {};
        toolCall(current, name, input);
        for (const key of ["file_path", "notebook_path"]) {
          const path = str(input[key]);
          if (!path) continue;
          current.refs.push(path);
          if (WRITING_TOOLS.has(name)) current.edited.push(path);
        }
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
function codexExchanges(lines: readonly TranscriptLine[], context: ParseContext, file: string): Exchange[] {
  const first = lines[0];
  if (context.sessionId === undefined) {
    const meta = first?.value.type === "session_meta" && isObject(first.value.payload) ? first.value.payload : undefined;
    context.sessionId = str(meta?.id);
    if (lines.length > 0 && !context.sessionId) {
      throw new TranscriptFormatError(`${file} is not a Codex rollout file (its first line is not a session_meta with an id)`);
    }
  }
  const sessionId = context.sessionId ?? sessionFromPath(file);
  const exchanges: Exchange[] = [];
  let current: Exchange | undefined;
  for (const { number, offset, value } of lines) {
    const payload = isObject(value.payload) ? value.payload : {};
    if (value.type === "turn_context") {
      context.model = str(payload.model) ?? context.model;
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
          ...blank(sessionId, keyOf("codex", sessionId, String(context.ordinal + 1)), timestamp(value.timestamp)),
          prompt: text,
          model: context.model,
          start: { offset, line: number, context: { ...context } },
        };
        context.ordinal++;
        exchanges.push(current);
      } else if (payload.role === "assistant" && current) {
        current.pending.push(text);
        current.model = context.model ?? current.model;
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
      const name = [str(payload.namespace), str(payload.name) ?? "function"].filter(Boolean).join("__");
      toolCall(current, name, parseArguments(payload.arguments));
    } else if (kind === "custom_tool_call") {
      const input = str(payload.input) ?? "";
      const patched = [...input.matchAll(/^\*\*\* (?:Add|Update|Delete) File: (.+)$/gm)].map((m) => m[1]!.trim());
      current.refs.push(...patched);
      current.edited.push(...patched);
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

function blank(sessionId: string, key: string, at: string | undefined) {
  return {
    sessionId,
    key,
    at,
    thought: [] as string[],
    pending: [] as string[],
    model: undefined as string | undefined,
    refs: [] as string[],
    edited: [] as string[],
    acted: false,
    recordedByAgent: false,
  };
}

/** The exchange as the memory it becomes: the request, what was done on the way, the answer. */
export function memoryOf(
  e: Exchange,
  harness: Harness,
  extra: { tags?: string[]; key?: string; code?: AddMemoryRequest["code"]; notes?: boolean } = {},
) {
  const thought = e.thought.length > 0 ? e.thought.join("\n") : "(no reasoning or tool use recorded)";
  const notes = extra.notes ? notesBlock(notesOf(e)) : { head: "", kind: undefined };
  return finalize({
    session_id: sessionIdOf(e.sessionId),
    idempotency_key: extra.key ?? e.key,
    prompt: e.prompt,
    thought: notes.head ? `${notes.head}\n\n${thought}` : thought,
    ...(notes.kind ? { kind: notes.kind } : {}),
    response: e.pending.length > 0 ? e.pending.join("\n\n") : "(no answer: the exchange ended with a tool call)",
    ...(e.at ? { occurred_at: e.at } : {}),
    ...(e.model ? { model: e.model } : {}),
    tags: ["transcript", harness, ...(extra.tags ?? [])],
    refs: [...ticketsIn(e.prompt), ...e.refs],
    ...(extra.code ? { code: extra.code } : {}),
  });
}

/** Nothing to learn from: a request the assistant never answered or acted on (an interrupted or local command). */
export const unanswered = (e: Exchange) => !e.acted && e.pending.length === 0;

/** A tool call as one short line of the thought: its name and the arguments that say what it did. */
function toolCall(exchange: Exchange, name: string, input: Json) {
  // Text written before a tool call was narration on the way, not the answer.
  exchange.thought.push(...exchange.pending);
  exchange.pending = [];
  exchange.acted = true;
  if (isAddMemory(name)) exchange.recordedByAgent = true;
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

/**
 * The complete lines of `text` (a file's bytes from `base` on) as JSON objects, with their byte offsets. A
 * trailing part without its newline is a line still being written: left out, and `end` stops before it.
 */
export function parseLines(
  text: Buffer,
  base: number,
  firstNumber: number,
  file: string,
  options: { partialLast: boolean },
): { lines: TranscriptLine[]; end: number; next: number } {
  const lines: TranscriptLine[] = [];
  let at = 0;
  let number = firstNumber;
  while (at < text.length) {
    let nl = text.indexOf(0x0a, at);
    if (nl < 0) {
      if (options.partialLast) break;
      nl = text.length;
    }
    const raw = text.subarray(at, nl).toString("utf8");
    if (raw.trim()) {
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch {
        throw new TranscriptFormatError(`${file}: line ${number} is not JSON (a file cut short?)`);
      }
      if (!isObject(value)) throw new TranscriptFormatError(`${file}: line ${number} is not a JSON object`);
      lines.push({ number, offset: base + at, value });
    }
    number++;
    at = nl + 1;
  }
  return { lines, end: base + Math.min(at, text.length), next: number };
}
