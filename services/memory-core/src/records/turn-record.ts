import { OPEN_VALIDITY } from "@cairn/openapi";
import type { Metadata, StoredRecord } from "../store/chroma-store.js";
import { clip } from "../text.js";
import { canonicalHash } from "./ids.js";
import type { Position } from "./cursor.js";
import type { AddMemoryRequest, Check, Correction, Detail, Kind, Memory, Review } from "./types.js";

/** Fields longer than this are shortened under `detail: summary`. */
export const SUMMARY_FIELD_CHARS = 280;
const FIELD_SEPARATOR = "\n\n";
/** `valid_until` of a memory that still holds (defined with the checks of stored records, in the contract's package). */
export { OPEN_VALIDITY };
const SCHEMA_VERSION = 1;

/**
 * A turn as Chroma keeps it. The three fields are stored once, as the document (which is also what is embedded
 * and searched); their lengths in metadata split it back exactly.
 */
export interface TurnRecordParts {
  document: string;
  metadata: Metadata;
}

export interface TurnWrite {
  input: AddMemoryRequest;
  agent: string;
  idempotencyKey: string;
  recordedAt: number;
  source: Source;
  /** The turn's slot in its agent's recency sequence. */
  seq: number;
  writeId: string;
}

export function buildTurnRecord(write: TurnWrite): TurnRecordParts {
  const { input } = write;
  const payload = turnPayload(input);
  const occurredAt = payload.occurred_at;
  const metadata: Metadata = {
    schema: SCHEMA_VERSION,
    agent: write.agent,
    session_id: input.session_id,
    kind: payload.kind,
    recorded_at: write.recordedAt,
    seq: write.seq,
    valid_from: occurredAt ?? write.recordedAt,
    valid_until: OPEN_VALIDITY,
    source: write.source,
    trusted: write.source !== "import",
    tags: JSON.stringify(payload.tags),
    refs: JSON.stringify(payload.refs),
    checks: JSON.stringify(payload.checks),
    check_status: checkStatus(payload.checks),
    supersedes: JSON.stringify(payload.supersedes),
    payload_sha256: canonicalHash(payload),
    idempotency_key: write.idempotencyKey,
    write_id: write.writeId,
    prompt_chars: input.prompt.length,
    thought_chars: input.thought.length,
  };
  if (occurredAt !== null) metadata.occurred_at = occurredAt;
  if (payload.model !== null) metadata.model = payload.model;
  // Imported content waits for a person's verdict (review_memory) before anyone relies on it.
  if (write.source === "import") metadata.review_state = "pending";
  if (payload.author !== undefined) metadata.author = payload.author;
  return { document: turnDocument(input), metadata };
}

/** The text that is stored, embedded and searched: the three fields in order. */
export const turnDocument = (input: Pick<AddMemoryRequest, "prompt" | "thought" | "response">) =>
  [input.prompt, input.thought, input.response].join(FIELD_SEPARATOR);

/** What a write says, with defaults made explicit so that a retry that spells a default out is still a replay. */
function turnPayload(input: AddMemoryRequest) {
  return {
    session_id: input.session_id,
    prompt: input.prompt,
    thought: input.thought,
    response: input.response,
    kind: input.kind ?? "turn",
    tags: input.tags ?? [],
    refs: input.refs ?? [],
    checks: input.checks ?? [],
    model: input.model ?? null,
    occurred_at: input.occurred_at === undefined ? null : Date.parse(input.occurred_at),
    source: input.source ?? null,
    supersedes: input.supersedes ?? [],
    // Left out of the hash when absent, so turns written before the field existed still replay.
    author: input.author,
  };
}

export const payloadHash = (input: AddMemoryRequest) => canonicalHash(turnPayload(input));

/** Passed only when every check passed; failed when any failed; unverified when none ran or some did not. */
export function checkStatus(checks: readonly Check[]): Check["status"] {
  if (checks.length === 0) return "unverified";
  if (checks.some((c) => c.status === "failed")) return "failed";
  return checks.every((c) => c.status === "passed") ? "passed" : "unverified";
}

export type Source = NonNullable<AddMemoryRequest["source"]>;

/** A passed check speaks for the commit it ran against, not for the code as it is today. */
function checkNote(checks: readonly Check[]): string | undefined {
  if (checks.length === 0) return undefined;
  const commits = [...new Set(checks.map((c) => c.commit).filter((c): c is string => Boolean(c)))];
  return commits.length > 0
    ? `These checks speak for commit ${commits.join(", ")}, not for the code as it is now; re-run them before relying on them.`
    : "These checks name no commit: they speak for the code as it was when they ran, not as it is now.";
}

export const positionOf = (record: StoredRecord): Position => ({ at: Number(record.metadata.recorded_at), id: record.id });

/** The three fields of a stored turn, split back out of its document by the lengths in its metadata. */
export function turnFields(record: StoredRecord): { prompt: string; thought: string; response: string } {
  const document = record.document ?? "";
  const promptChars = Number(record.metadata.prompt_chars);
  const thoughtChars = Number(record.metadata.thought_chars);
  const thoughtStart = promptChars + FIELD_SEPARATOR.length;
  const responseStart = thoughtStart + thoughtChars + FIELD_SEPARATOR.length;
  return {
    prompt: document.slice(0, promptChars),
    thought: document.slice(thoughtStart, thoughtStart + thoughtChars),
    response: document.slice(responseStart),
  };
}

export function memoryFromRecord(record: StoredRecord, detail: Detail): Memory {
  const m = record.metadata;
  const fields = turnFields(record);
  let truncated = false;
  if (detail === "summary") {
    for (const key of ["prompt", "thought", "response"] as const) {
      if (fields[key].length > SUMMARY_FIELD_CHARS) {
        fields[key] = clip(fields[key], SUMMARY_FIELD_CHARS);
        truncated = true;
      }
    }
  }
  const memory: Memory = {
    id: record.id,
    agent: String(m.agent),
    session_id: String(m.session_id),
    kind: String(m.kind) as Kind,
    ...fields,
    tags: parseList<string>(m.tags),
    refs: parseList<string>(m.refs),
    checks: parseList<Check>(m.checks),
    check_status: String(m.check_status) as Check["status"],
    recorded_at: new Date(Number(m.recorded_at)).toISOString(),
    valid_from: new Date(Number(m.valid_from ?? m.recorded_at)).toISOString(),
    outdated: false,
    source: (typeof m.source === "string" ? m.source : "agent") as Source,
    trusted: m.trusted !== false,
    corrections: parseList<Correction>(m.corrections),
    truncated,
  };
  const supersedes = parseList<string>(m.supersedes);
  if (supersedes.length > 0) memory.supersedes = supersedes;
  const note = checkNote(memory.checks);
  if (note) memory.check_note = note;
  memory.outdated = memory.corrections.some((c) => c.kind === "outdated");
  if (typeof m.valid_until === "number" && m.valid_until < OPEN_VALIDITY) memory.valid_until = new Date(m.valid_until).toISOString();
  if (typeof m.superseded_by === "string" && m.superseded_by) memory.superseded_by = m.superseded_by;
  if (typeof m.superseded_reason === "string") memory.superseded_reason = m.superseded_reason;
  if (typeof m.model === "string") memory.model = m.model;
  if (typeof m.occurred_at === "number") memory.occurred_at = new Date(m.occurred_at).toISOString();
  const review = reviewOf(m);
  if (review) memory.review = review;
  if (typeof m.author === "string") memory.author = m.author;
  return memory;
}

/**
 * A memory's review: its state, and who decided it, when and why once someone did. Untrusted memories stored
 * before reviews existed have no state of their own: they wait like any other.
 */
export function reviewOf(m: Metadata): Review | undefined {
  const state = typeof m.review_state === "string" ? (m.review_state as Review["state"]) : m.trusted === false ? "pending" : undefined;
  if (!state) return undefined;
  const review: Review = { state };
  if (typeof m.review_by === "string") review.by = m.review_by;
  if (typeof m.review_at === "number") review.at = new Date(m.review_at).toISOString();
  if (typeof m.review_reason === "string") review.reason = m.review_reason;
  return review;
}

/** A correction says its conclusion no longer holds. */
export const isOutdated = (m: Metadata) => parseList<Correction>(m.corrections).some((c) => c.kind === "outdated");

/** Its validity was closed: another memory (or a person) superseded it. */
export const isSuperseded = (m: Metadata) => typeof m.valid_until === "number" && m.valid_until < OPEN_VALIDITY;

export function parseList<T>(value: unknown): T[] {
  if (typeof value !== "string") return [];
  try {
    const parsed = JSON.parse(value) as unknown;
    return Array.isArray(parsed) ? (parsed as T[]) : [];
  } catch {
    return [];
  }
}
