import type { SessionTurn } from "../session.js";
import type { StructuredSummary } from "../structured.js";

export interface ChatMessage {
  role: "system" | "user";
  content: string;
}

/** Asked as `response_format: json_schema` where the server supports it; described in words for the rest. */
export const SUMMARY_SCHEMA = {
  type: "object",
  additionalProperties: false,
  required: ["title", "summary", "decisions", "dropped", "open_questions", "next_steps"],
  properties: {
    title: { type: "string", description: "What the session was about, under 80 characters." },
    summary: { type: "string", description: "What was done and how it ended, 2 to 6 sentences." },
    decisions: {
      type: "array",
      items: {
        type: "object",
        additionalProperties: false,
        required: ["decision", "evidence"],
        properties: {
          decision: { type: "string" },
          evidence: {
            type: "string",
            description: "What the decision rests on (a measurement, a test, a review); empty if none was given.",
          },
        },
      },
    },
    dropped: {
      type: "array",
      items: {
        type: "object",
        additionalProperties: false,
        required: ["approach", "reason"],
        properties: {
          approach: { type: "string", description: "An approach tried or weighed and given up." },
          reason: { type: "string", description: "Why it was given up; empty if the turns do not say." },
        },
      },
    },
    open_questions: { type: "array", items: { type: "string" } },
    next_steps: { type: "array", items: { type: "string" } },
  },
} as const;

const SYSTEM = `You summarize one working session of coding agents for their team's long-term memory.
Keep what git does not: what was decided and on what evidence (numbers, tests, reviews), what was tried and dropped, what is still open, what comes next.
The title names what the session settled on. A decision is a choice it made, not a finding; an approach it gave up goes under dropped, not decisions.
Use only what the turns say; never invent facts, names or numbers.
Answer with exactly one JSON object and nothing else, with these keys:
{"title": string (under 80 characters), "summary": string (2-6 sentences), "decisions": [{"decision": string, "evidence": string}], "dropped": [{"approach": string, "reason": string}], "open_questions": [string], "next_steps": [string]}`;

/** Characters per token, on the cautious side for code-heavy English. */
export const CHARS_PER_TOKEN = 3;
/** Tokens kept free for the instructions and for the answer. */
const RESERVED_TOKENS = 1_400;

/** How many characters of session text fit in one request to a model with this context window. */
export const textBudget = (contextTokens: number) => Math.max(1_000, (contextTokens - RESERVED_TOKENS) * CHARS_PER_TOKEN);

export function formatTurn(turn: SessionTurn, index: number, maxChars: number): string {
  const head = `Turn ${index + 1} · ${turn.agent} · ${turn.kind} · ${new Date(turn.happenedAt).toISOString()}`;
  const body = `Task: ${turn.prompt}\nThought: ${turn.thought}\nOutcome: ${turn.response}`;
  return `${head}\n${clip(body, maxChars - head.length - 1)}`;
}

/** A turn too long for a whole request keeps its beginning and its end, where task and outcome are. */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.max(0, Math.floor((max - 5) / 2));
  return `${text.slice(0, half)}\n[…]\n${text.slice(text.length - half)}`;
}

export function sessionMessages(sessionId: string, text: string, part?: { index: number; of: number }): ChatMessage[] {
  const which = part ? `This is part ${part.index + 1} of ${part.of} of the session; summarize this part only.\n` : "";
  return [
    { role: "system", content: SYSTEM },
    { role: "user", content: `${which}Session ${sessionId}:\n\n${text}` },
  ];
}

export function combineMessages(sessionId: string, partials: readonly StructuredSummary[]): ChatMessage[] {
  const parts = partials.map((p, i) => `Part ${i + 1}:\n${JSON.stringify(p)}`).join("\n\n");
  return [
    { role: "system", content: SYSTEM },
    {
      role: "user",
      content: `These are summaries of consecutive parts of session ${sessionId}, oldest first. Merge them into one summary of the whole session: later parts override earlier ones where they disagree; keep every decision with its evidence; drop open questions that a later part answered; keep the next steps of the last part.\n\n${parts}`,
    },
  ];
}
