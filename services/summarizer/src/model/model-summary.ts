import type { Logger } from "@cairn/memory-core";
import type { SessionTurn } from "../session.js";
import type { StructuredSummary } from "../structured.js";
import { backoffDelay, sleep } from "./backoff.js";
import { ContextTooLongError, ModelUnavailableError, type ChatModel } from "./chat-client.js";
import { MalformedAnswerError, parseSummaryAnswer } from "./parse.js";
import { combineMessages, formatTurn, sessionMessages, textBudget, type ChatMessage } from "./prompt.js";

export interface ModelSummaryOptions {
  contextTokens: number;
  /** Further asks after a malformed answer. */
  retries: number;
  backoffMs: number;
}

/** Each halving of the budget after a server said "too long"; past this, the model is given up on. */
const MAX_SPLITS = 4;

/**
 * A session summarized by the chat model. A session longer than the model's context is cut into parts that
 * fit (at turn boundaries), each part is summarized, and the part summaries are merged — in rounds, if even
 * they do not fit together. Throws ModelUnavailableError when the model cannot give a usable summary.
 */
export async function summarizeWithModel(
  model: ChatModel,
  sessionId: string,
  turns: readonly SessionTurn[],
  options: ModelSummaryOptions,
  log: Logger,
  signal: AbortSignal,
): Promise<StructuredSummary> {
  let budget = textBudget(options.contextTokens);
  for (let split = 0; split <= MAX_SPLITS; split++) {
    try {
      const parts = pack(turns, budget);
      const partials: StructuredSummary[] = [];
      for (const [index, text] of parts.entries()) {
        const part = parts.length > 1 ? { index, of: parts.length } : undefined;
        partials.push(await ask(model, sessionMessages(sessionId, text, part), options, log, signal));
      }
      return await combine(model, sessionId, partials, budget, options, log, signal);
    } catch (error) {
      if (!(error instanceof ContextTooLongError)) throw error;
      budget = Math.floor(budget / 2);
      log.warn("session too long for the chat model; splitting smaller", { session_id: sessionId, budget_chars: budget });
    }
  }
  throw new ModelUnavailableError("the session does not fit the model's context even in small parts");
}

/** Consecutive turns packed into texts of at most `budget` characters; a turn longer than that is clipped. */
export function pack(turns: readonly SessionTurn[], budget: number): string[] {
  const parts: string[] = [];
  let current = "";
  turns.forEach((turn, index) => {
    const text = formatTurn(turn, index, budget);
    if (current && current.length + 2 + text.length > budget) {
      parts.push(current);
      current = "";
    }
    current = current ? `${current}\n\n${text}` : text;
  });
  if (current) parts.push(current);
  return parts;
}

async function combine(
  model: ChatModel,
  sessionId: string,
  partials: StructuredSummary[],
  budget: number,
  options: ModelSummaryOptions,
  log: Logger,
  signal: AbortSignal,
): Promise<StructuredSummary> {
  let level = partials;
  while (level.length > 1) {
    const groups = groupBySize(level, budget);
    // A round that cannot shrink the list (each partial alone fills the budget) would never end.
    if (groups.length === level.length) groups.splice(0, 2, [...groups[0]!, ...groups[1]!]);
    const next: StructuredSummary[] = [];
    for (const group of groups) {
      next.push(group.length === 1 ? group[0]! : await ask(model, combineMessages(sessionId, group), options, log, signal));
    }
    level = next;
  }
  return level[0]!;
}

function groupBySize(partials: StructuredSummary[], budget: number): StructuredSummary[][] {
  const groups: StructuredSummary[][] = [];
  let size = 0;
  for (const partial of partials) {
    const length = JSON.stringify(partial).length + 20;
    const last = groups.at(-1);
    if (last && size + length <= budget) {
      last.push(partial);
      size += length;
    } else {
      groups.push([partial]);
      size = length;
    }
  }
  return groups;
}

/** One answer, asked again (with backoff) while it comes back malformed. */
async function ask(
  model: ChatModel,
  messages: ChatMessage[],
  options: ModelSummaryOptions,
  log: Logger,
  signal: AbortSignal,
): Promise<StructuredSummary> {
  for (let attempt = 0; ; attempt++) {
    const text = await model.complete(messages, signal);
    try {
      return parseSummaryAnswer(text);
    } catch (error) {
      if (!(error instanceof MalformedAnswerError)) throw error;
      if (attempt >= options.retries) throw new ModelUnavailableError(`malformed answer after ${attempt + 1} attempts: ${error.message}`);
      log.warn("chat model answered malformed; asking again", { reason: error.message, attempt: attempt + 1 });
      await sleep(backoffDelay(options.backoffMs, attempt), signal);
    }
  }
}
