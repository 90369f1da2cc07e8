import { OPEN_VALIDITY } from "@cairn/openapi";
import type { Metadata } from "../store/chroma-store.js";
import { clip } from "../text.js";
import { canonicalHash } from "./ids.js";
import { CITED_PATHS_FIELD, citedPathsOf, joinCited } from "./code-citations.js";
import type { Position } from "./cursor.js";
import { isOutdated, isSuperseded, textOf, type Source, type StoredTurn } from "./stored-turn.js";
import type { AddMemoryRequest, Check, Detail, Memory } from "./types.js";

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
  if (payload.code !== undefined) metadata.code = JSON.stringify(payload.code);
  const cited = citedPathsOf(payload.code, payload.refs);
  if (cited.length > 0) metadata[CITED_PATHS_FIELD] = joinCited(cited);
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
    // Left out of the hash when absent, so a turn stored without an author or code replays to the same hash.
    author: input.author,
    code: input.code,
  };
}

export const payloadHash = (input: AddMemoryRequest) => canonicalHash(turnPayload(input));

/** Passed only when every check passed; failed when any failed; unverified when none ran or some did not. */
export function checkStatus(checks: readonly Check[]): Check["status"] {
  if (checks.length === 0) return "unverified";
  if (checks.some((c) => c.status === "failed")) return "failed";
  return checks.every((c) => c.status === "passed") ? "passed" : "unverified";
}

/** A passed check speaks for the commit it ran against, not for the code as it is today. */
function checkNote(checks: readonly Check[]): string | undefined {
  if (checks.length === 0) return undefined;
  const commits = [...new Set(checks.map((c) => c.commit).filter((c): c is string => Boolean(c)))];
  return commits.length > 0
    ? `These checks speak for commit ${commits.join(", ")}, not for the code as it is now; re-run them before relying on them.`
    : "These checks name no commit: they speak for the code as it was when they ran, not as it is now.";
}

export const positionOf = (turn: StoredTurn): Position => ({ at: turn.recordedAt, id: turn.id });

/** A stored turn as the contract shows a memory, its long fields cut under `detail: summary`. */
export function memoryOf(turn: StoredTurn, detail: Detail): Memory {
  const fields = { ...textOf(turn) };
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
    id: turn.id,
    agent: turn.agent,
    session_id: turn.sessionId,
    kind: turn.kind,
    ...fields,
    tags: turn.tags,
    refs: turn.refs,
    checks: turn.checks,
    check_status: turn.checkStatus,
    recorded_at: new Date(turn.recordedAt).toISOString(),
    valid_from: new Date(turn.validFrom).toISOString(),
    outdated: isOutdated(turn),
    source: turn.source,
    trusted: turn.trusted,
    corrections: turn.corrections,
    truncated,
  };
  if (turn.supersedes.length > 0) memory.supersedes = turn.supersedes;
  const note = checkNote(memory.checks);
  if (note) memory.check_note = note;
  if (isSuperseded(turn)) memory.valid_until = new Date(turn.validUntil).toISOString();
  if (turn.supersededBy !== undefined) memory.superseded_by = turn.supersededBy;
  if (turn.supersededReason !== undefined) memory.superseded_reason = turn.supersededReason;
  if (turn.model !== undefined) memory.model = turn.model;
  if (turn.code !== undefined) memory.code = turn.code;
  if (turn.occurredAt !== undefined) memory.occurred_at = new Date(turn.occurredAt).toISOString();
  if (turn.review) memory.review = turn.review;
  if (turn.author !== undefined) memory.author = turn.author;
  return memory;
}
