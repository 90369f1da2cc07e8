import type { FieldError } from "@cairn/openapi";
import { clip } from "./text.js";

/** The stable error codes of the contract's `Problem.code`. */
export type ErrorCode =
  | "validation_failed"
  | "invalid_cursor"
  | "malformed_json"
  | "payload_too_large"
  | "unsupported_media_type"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "idempotency_conflict"
  | "already_superseded"
  | "not_reviewable"
  | "gone"
  | "record_damaged"
  | "method_not_allowed"
  | "unavailable"
  | "summarizer_unavailable"
  | "reembed_required"
  | "internal";

const TITLES: Record<ErrorCode, string> = {
  validation_failed: "The request does not match the contract",
  invalid_cursor: "The cursor was not issued by this listing",
  malformed_json: "The body is not valid JSON",
  payload_too_large: "The body is too large",
  unsupported_media_type: "The body must be application/json",
  unauthorized: "Authentication required",
  forbidden: "Not allowed",
  not_found: "Not found",
  idempotency_conflict: "Idempotency key reused with a different payload",
  already_superseded: "Already superseded",
  not_reviewable: "This memory needs no review",
  gone: "Forgotten",
  record_damaged: "The record is stored damaged",
  method_not_allowed: "Method not allowed",
  unavailable: "Temporarily unavailable",
  summarizer_unavailable: "No summarizer runs here",
  reembed_required: "The workspace must be re-embedded",
  internal: "Internal error",
};

export interface Problem {
  type: string;
  title: string;
  status: number;
  code: ErrorCode;
  detail: string;
  hint?: string;
  errors?: FieldError[];
}

/**
 * An error that knows its own wire form. Its `detail` and `hint` are written for the caller (often a model)
 * and must never carry a stack, a host, a port, a server path or a credential. `cause` (ES2022) keeps the
 * underlying failure it stands for (Chroma's error, a worker's), for the logs: it is never part of the wire
 * form, which `toProblem` alone makes.
 */
export class CairnError extends Error {
  override name = "CairnError";
  constructor(
    readonly code: ErrorCode,
    readonly status: number,
    readonly detail: string,
    readonly hint?: string,
    readonly errors?: FieldError[],
    options?: { cause?: unknown },
  ) {
    super(detail, options);
  }

  toProblem(): Problem {
    return {
      type: `urn:cairn:problem:${this.code}`,
      title: TITLES[this.code],
      status: this.status,
      code: this.code,
      detail: this.detail,
      ...(this.hint ? { hint: this.hint } : {}),
      ...(this.errors && this.errors.length > 0 ? { errors: this.errors } : {}),
    };
  }
}

/**
 * How much of a refusal names what was sent: at most this many problems are listed (the rest are counted in
 * `detail`), each path and message at most `FIELD_TEXT_LIMIT` characters. A body of thousands of unknown keys,
 * or one key of thousands of characters, is answered in a few kilobytes, on REST and MCP alike.
 */
export const LISTED_ERRORS_LIMIT = 20;
export const FIELD_TEXT_LIMIT = 200;

export const validationFailed = (errors: FieldError[], hint?: string) => {
  const listed = errors
    .slice(0, LISTED_ERRORS_LIMIT)
    .map((e) => ({ path: clip(e.path, FIELD_TEXT_LIMIT), message: clip(e.message, FIELD_TEXT_LIMIT) }));
  const more = errors.length - listed.length;
  const detail =
    listed.map((e) => (e.path ? `${e.path} ${e.message}` : e.message)).join("; ") +
    (more > 0 ? `; and ${more} more problem${more === 1 ? "" : "s"} (the first ${listed.length} are listed)` : "");
  return new CairnError(
    "validation_failed",
    400,
    detail,
    hint ?? "Fix the fields named in `errors` and call again; the contract (GET /openapi.json) lists every field.",
    listed,
  );
};

/**
 * A paging cursor this server did not issue for this listing: malformed, past the end, or another listing's.
 * Judged before any page is read, so a forged position costs nothing to refuse.
 */
export const invalidCursor = (field: string, message = "is not a cursor this server issued") =>
  new CairnError(
    "invalid_cursor",
    400,
    `${field} ${message}`,
    `Pass the \`next_cursor\` of the previous page unchanged, with the same other parameters, or omit \`${field}\` to start from the first page.`,
    [{ path: field, message }],
  );

/** Seconds a client should wait before retrying a 503: sent as `Retry-After` on REST and `retry_after_s` over MCP. */
export const RETRY_AFTER_SECONDS = 2;

export const unauthorized = () =>
  new CairnError(
    "unauthorized",
    401,
    "No valid bearer token was given.",
    "Send `Authorization: Bearer <token>` with a token from the tokens file.",
  );

export const forbidden = (what: string) =>
  new CairnError("forbidden", 403, what, "Use a token whose role allows this (an admin token for admin operations).");

export const notFound = (what: string, hint?: string) => new CairnError("not_found", 404, what, hint);

/** What a wrapping error keeps of the failure it stands for: passed on as ES2022's `{ cause }`. */
export interface Wrapped {
  cause?: unknown;
}

/** Infrastructure is down (Chroma unreachable, embedder failing): the caller should retry later. */
export const unavailable = (what: string, wrapped?: Wrapped) =>
  new CairnError(
    "unavailable",
    503,
    what,
    "Retry in a few seconds; if it persists, ask the operator to check /readyz.",
    undefined,
    wrapped,
  );

/** This server was started without a summarizer (summaries come from a separate worker, or none runs). */
export const summarizerUnavailable = () =>
  new CairnError(
    "summarizer_unavailable",
    503,
    "This server runs no summarizer, so it cannot summarize a session on request.",
    "Ask the operator to run Cairn with its summarizer (`npm start` includes one); summaries written by a separate worker are still found by query_summaries.",
  );

export const internal = (wrapped?: Wrapped) =>
  new CairnError(
    "internal",
    500,
    "The server failed to handle this request.",
    "Retry once; if it fails again, report it.",
    undefined,
    wrapped,
  );

/** Any thrown value as a `CairnError`, without leaking what an unknown error says: it is kept as the cause. */
export function asCairnError(error: unknown): CairnError {
  return error instanceof CairnError ? error : internal({ cause: error });
}
