import type { components } from "@cairn/openapi";
import { redact } from "./redact.js";

export type AddMemoryRequest = components["schemas"]["AddMemoryRequest"];

/**
 * The contract's limits on a written memory. Imported history is cut to fit rather than refused: a long
 * commit body or a long answer is still worth its first part.
 */
export const LIMITS = { field: 32768, refs: 64, ref: 512, tags: 32, tag: 64, author: 200, sessionId: 128, key: 200 } as const;

/** One memory to write, before redaction and fitting. */
export interface MemoryDraft {
  session_id: string;
  idempotency_key: string;
  prompt: string;
  thought: string;
  response: string;
  occurred_at?: string;
  author?: string;
  model?: string;
  kind?: AddMemoryRequest["kind"];
  tags: string[];
  refs: string[];
  /** The code it cites, its paths repository-relative and checked already. */
  code?: AddMemoryRequest["code"];
}

/** What is sent: every text redacted, then cut to the contract's limits, with `truncated` among the tags when anything was cut. */
export function finalize(draft: MemoryDraft): AddMemoryRequest {
  let cut = false;
  const field = (text: string, fallback: string) => {
    const clean = redact(text).trim();
    const value = /\S/.test(clean) ? clean : fallback;
    if (value.length <= LIMITS.field) return value;
    cut = true;
    const note = `\n[truncated: ${value.length - LIMITS.field} more characters not imported]`;
    return `${sliceWhole(value, LIMITS.field - note.length - 8).trimEnd()}${note}`;
  };
  const prompt = field(draft.prompt, "(no request text)");
  const thought = field(draft.thought, "(nothing recorded)");
  const response = field(draft.response, "(no answer recorded)");
  const refs: string[] = [];
  for (const ref of draft.refs) {
    const value = sliceWhole(redact(ref).trim(), LIMITS.ref);
    if (value && !refs.includes(value)) refs.push(value);
  }
  if (refs.length > LIMITS.refs) {
    cut = true;
    refs.length = LIMITS.refs;
  }
  const tags = [...new Set(draft.tags)].filter((t) => /^[^\s,]{1,64}$/.test(t));
  if (cut) tags.push("truncated");
  const request: AddMemoryRequest = {
    session_id: sessionIdOf(draft.session_id),
    idempotency_key: keyOf(draft.idempotency_key),
    prompt,
    thought,
    response,
    source: "import",
    tags: tags.slice(0, LIMITS.tags),
    refs,
  };
  if (draft.code) request.code = draft.code;
  if (draft.kind) request.kind = draft.kind;
  if (draft.occurred_at) request.occurred_at = draft.occurred_at;
  if (draft.model) request.model = sliceWhole(redact(draft.model), 128);
  if (draft.author) {
    const author = sliceWhole(redact(draft.author).trim(), LIMITS.author);
    if (author) request.author = author;
  }
  return request;
}

/** At most `max` UTF-16 units, never splitting a surrogate pair. */
export function sliceWhole(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text.charAt(max - 1)) ? max - 1 : max;
  return text.slice(0, end);
}

/** A session id as the contract takes it: redacted, its own characters kept, anything else turned into `-`. */
export function sessionIdOf(raw: string): string {
  const cleaned = redact(raw)
    .replace(/[^A-Za-z0-9._:@/-]/g, "-")
    .replace(/^[^A-Za-z0-9]+/, "");
  return sliceWhole(cleaned || "session", LIMITS.sessionId);
}

/** An idempotency key as the contract takes it (each part redacted, then printable ASCII, no spaces). */
export function keyOf(...parts: string[]): string {
  return sliceWhole(parts.map((p) => redact(p).replace(/[^\x21-\x7E]/g, "_")).join(":"), LIMITS.key);
}

/**
 * Tickets a message names: tracker keys such as PAY-412, and issue or pull request numbers such as #123. Read
 * from the redacted text, so that no part of a secret is taken for a ticket.
 */
export function ticketsIn(message: string): string[] {
  const text = redact(message);
  const found = new Set<string>();
  for (const m of text.matchAll(/\b([A-Z][A-Z0-9]{1,9})-(\d{1,7})\b/g)) if (!NOT_TICKETS.has(m[1]!)) found.add(m[0]);
  for (const m of text.matchAll(/(?<![\w&#/])#(\d{1,7})\b/g)) found.add(m[0]);
  return [...found];
}

/** Standards and encodings that look like tracker keys. */
const NOT_TICKETS = new Set([
  "SHA",
  "UTF",
  "ISO",
  "AES",
  "RSA",
  "TLS",
  "SSL",
  "HTTP",
  "RFC",
  "ECMA",
  "ES",
  "UCS",
  "IEC",
  "GPT",
  "MD",
  "WCAG",
  "X",
]);
