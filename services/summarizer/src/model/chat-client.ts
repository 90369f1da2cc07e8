import OpenAI, { APIConnectionError, APIError, APIUserAbortError } from "openai";
import type { Logger } from "@cairn/memory-core";
import type { ChatConfig } from "../config.js";
import { backoffDelay, sleep } from "./backoff.js";
import { SUMMARY_SCHEMA, type ChatMessage } from "./prompt.js";

/** The model could not be used for this request (down, timing out, refusing): fall back. */
export class ModelUnavailableError extends Error {
  override name = "ModelUnavailableError";
}

/** The request was longer than the model's context: split it smaller. */
export class ContextTooLongError extends Error {
  override name = "ContextTooLongError";
}

export interface ChatModel {
  readonly name: string;
  /** The text of the model's answer. Transport failures are retried with backoff before it gives up. */
  complete(messages: ChatMessage[], signal: AbortSignal): Promise<string>;
}

/**
 * How the answer is asked for, best first. A server that refuses a form (400/422 naming it) is asked with
 * the next, and the client remembers the form that worked.
 */
const FORMATS = ["json_schema", "json_object", "text"] as const;
type Format = (typeof FORMATS)[number];

export function createChatModel(config: ChatConfig, log: Logger): ChatModel {
  const client = new OpenAI({
    baseURL: config.baseUrl,
    // Local servers take any key; the SDK insists on one.
    apiKey: config.apiKey ?? "not-needed",
    timeout: config.timeoutMs,
    // Retries are ours: with backoff, and counted against the fallback.
    maxRetries: 0,
  });
  let format: Format = "json_schema";

  const request = async (messages: ChatMessage[], signal: AbortSignal) => {
    const response = await client.chat.completions.create(
      { model: config.model, messages, temperature: 0.2, ...responseFormat(format) },
      { signal },
    );
    const text = response.choices[0]?.message?.content;
    if (typeof text !== "string" || !text.trim()) throw new ModelUnavailableError("the model returned no text");
    return text;
  };

  return {
    name: config.model,
    async complete(messages, signal) {
      for (let attempt = 0; ; attempt++) {
        try {
          return await request(messages, signal);
        } catch (error) {
          if (error instanceof APIUserAbortError || signal.aborted) throw error;
          if (isContextTooLong(error)) throw new ContextTooLongError("the request is longer than the model's context");
          if (isFormatRefused(error) && format !== "text") {
            const next = FORMATS[FORMATS.indexOf(format) + 1]!;
            log.warn("chat server refused the response format; asking with the next", { from: format, to: next });
            format = next;
            attempt--;
            continue;
          }
          if (!isTransient(error) || attempt >= config.retries) {
            log.warn("chat model failed", { error: describe(error), attempts: attempt + 1 });
            throw new ModelUnavailableError(describe(error));
          }
          await sleep(backoffDelay(config.backoffMs, attempt), signal);
        }
      }
    },
  };
}

function responseFormat(format: Format) {
  if (format === "json_schema") {
    return {
      response_format: {
        type: "json_schema" as const,
        json_schema: { name: "session_summary", strict: true, schema: SUMMARY_SCHEMA },
      },
    };
  }
  if (format === "json_object") return { response_format: { type: "json_object" as const } };
  return {};
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error)).toLowerCase();

function isContextTooLong(error: unknown): boolean {
  if (!(error instanceof APIError) || (error.status !== 400 && error.status !== 413)) return false;
  return (
    error.code === "context_length_exceeded" ||
    /context length|context window|too many tokens|maximum context|too long/.test(messageOf(error))
  );
}

function isFormatRefused(error: unknown): boolean {
  return (
    error instanceof APIError &&
    (error.status === 400 || error.status === 422) &&
    /response_format|json_schema|json_object|schema/.test(messageOf(error))
  );
}

/** Worth another try: the server is down, slow, overloaded or failing inside. */
function isTransient(error: unknown): boolean {
  if (error instanceof APIConnectionError) return true; // includes timeouts
  if (error instanceof APIError) return error.status === 408 || error.status === 409 || error.status === 429 || (error.status ?? 0) >= 500;
  return error instanceof ModelUnavailableError;
}

/** For logs: the kind of failure, never the server's URL or key. */
function describe(error: unknown): string {
  if (error instanceof APIError) return `${error.constructor.name}${error.status ? ` ${error.status}` : ""}`;
  return error instanceof Error ? error.name : "unknown error";
}
