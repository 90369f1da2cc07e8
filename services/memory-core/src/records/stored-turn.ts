import { OPEN_VALIDITY } from "@cairn/openapi";
import type { Metadata, StoredRecord } from "../store/chroma-store.js";
import { CITED_PATHS_FIELD, splitCited } from "./code-citations.js";
import type { AddMemoryRequest, Check, CodeCitation, Correction, Kind, Review } from "./types.js";

/**
 * A turn as stored, in its own typed fields: what every module above the storage rooms reads of a turn. The
 * metadata Chroma keeps it in is parsed here once (lists out of their JSON, instants as numbers), and the
 * record it came from stays with it, out of sight, for the room that rewrites it (turn-repository.ts).
 */
export interface StoredTurn {
  readonly id: string;
  readonly agent: string;
  readonly sessionId: string;
  readonly kind: Kind;
  /** Its slot in its agent's recency sequence. */
  readonly seq: number;
  /** When it was written, in ms since the epoch; `occurredAt` when what it tells happened, when the writer said. */
  readonly recordedAt: number;
  readonly occurredAt: number | undefined;
  /** The instants it holds between: `validUntil` is OPEN_VALIDITY until it is superseded. */
  readonly validFrom: number;
  readonly validUntil: number;
  readonly source: Source;
  readonly trusted: boolean;
  readonly tags: string[];
  readonly refs: string[];
  /** The code it cites, as its writer gave it; and every path it cites, its `code`'s and its refs' (code-citations.ts). */
  readonly code: CodeCitation | undefined;
  readonly citedPaths: string[];
  readonly checks: Check[];
  readonly checkStatus: Check["status"];
  /** The memories it replaces, and who or what replaced it, when something did. */
  readonly supersedes: string[];
  readonly supersededBy: string | undefined;
  readonly supersededReason: string | undefined;
  readonly corrections: Correction[];
  /** Its review, when it waits for one or had one (imported content). */
  readonly review: Review | undefined;
  readonly model: string | undefined;
  readonly author: string | undefined;
  /** What makes a retry a replay: the write's payload hash and key, and the write that stored it. */
  readonly payloadSha256: string;
  readonly idempotencyKey: string;
  readonly writeId: string;
  /** Its three fields, when it was read with its text. */
  readonly text: TurnText | undefined;
  /** Its vector, when it was read with it. */
  readonly embedding: number[] | undefined;
  /** Set when its stored fields fail the checks readers rely on (read only by those that ask for damaged ones). */
  readonly damage: string | undefined;
  readonly [STORED]: StoredRecord;
}

export interface TurnText {
  prompt: string;
  thought: string;
  response: string;
}

export type Source = NonNullable<AddMemoryRequest["source"]>;

const STORED = Symbol("the stored record");

/** The record a turn was read from: for the storage rooms, which rewrite it. */
export const storedRecordOf = (turn: StoredTurn): StoredRecord => turn[STORED];

const FIELD_SEPARATOR = "\n\n";

/** The turn a record of the turns collection holds. */
export function turnOf(record: StoredRecord): StoredTurn {
  const m = record.metadata;
  const recordedAt = Number(m.recorded_at);
  return {
    id: record.id,
    agent: String(m.agent),
    sessionId: String(m.session_id),
    kind: (typeof m.kind === "string" ? m.kind : "turn") as Kind,
    seq: Number(m.seq),
    recordedAt,
    occurredAt: typeof m.occurred_at === "number" ? m.occurred_at : undefined,
    validFrom: Number(m.valid_from ?? recordedAt),
    validUntil: typeof m.valid_until === "number" ? m.valid_until : OPEN_VALIDITY,
    source: (typeof m.source === "string" ? m.source : "agent") as Source,
    trusted: m.trusted !== false,
    tags: parseList<string>(m.tags),
    refs: parseList<string>(m.refs),
    code: codeOf(m.code),
    citedPaths: splitCited(m[CITED_PATHS_FIELD]),
    checks: parseList<Check>(m.checks),
    checkStatus: (typeof m.check_status === "string" ? m.check_status : "unverified") as Check["status"],
    supersedes: parseList<string>(m.supersedes),
    supersededBy: typeof m.superseded_by === "string" && m.superseded_by !== "" ? m.superseded_by : undefined,
    supersededReason: typeof m.superseded_reason === "string" ? m.superseded_reason : undefined,
    corrections: parseList<Correction>(m.corrections),
    review: reviewOf(m),
    model: typeof m.model === "string" ? m.model : undefined,
    author: typeof m.author === "string" ? m.author : undefined,
    payloadSha256: String(m.payload_sha256 ?? ""),
    idempotencyKey: String(m.idempotency_key ?? ""),
    writeId: String(m.write_id ?? ""),
    text: record.document === undefined ? undefined : splitText(record.document, m),
    embedding: record.embedding && record.embedding.length > 0 ? record.embedding : undefined,
    damage: record.damage,
    [STORED]: record,
  };
}

/** The three fields of a stored turn, split back out of its document by the lengths in its metadata. */
function splitText(document: string, m: Metadata): TurnText {
  const promptChars = Number(m.prompt_chars);
  const thoughtChars = Number(m.thought_chars);
  const thoughtStart = promptChars + FIELD_SEPARATOR.length;
  const responseStart = thoughtStart + thoughtChars + FIELD_SEPARATOR.length;
  return {
    prompt: document.slice(0, promptChars),
    thought: document.slice(thoughtStart, thoughtStart + thoughtChars),
    response: document.slice(responseStart),
  };
}

/** The fields of a turn read without its text: empty. */
export const textOf = (turn: StoredTurn): TurnText => turn.text ?? { prompt: "", thought: "", response: "" };

/**
 * A memory's review: its state, and who decided it, when and why once someone did. Untrusted memories stored
 * without a review state wait like any other.
 */
function reviewOf(m: Metadata): Review | undefined {
  const state = typeof m.review_state === "string" ? (m.review_state as Review["state"]) : m.trusted === false ? "pending" : undefined;
  if (!state) return undefined;
  const review: Review = { state };
  if (typeof m.review_by === "string") review.by = m.review_by;
  if (typeof m.review_at === "number") review.at = new Date(m.review_at).toISOString();
  if (typeof m.review_reason === "string") review.reason = m.review_reason;
  return review;
}

function codeOf(value: unknown): CodeCitation | undefined {
  if (typeof value !== "string") return undefined;
  try {
    const parsed = JSON.parse(value) as unknown;
    return typeof parsed === "object" && parsed !== null && Array.isArray((parsed as CodeCitation).paths)
      ? (parsed as CodeCitation)
      : undefined;
  } catch {
    return undefined;
  }
}

/** A correction says its conclusion no longer holds. */
export const isOutdated = (turn: Pick<StoredTurn, "corrections">) => turn.corrections.some((c) => c.kind === "outdated");

/** Its validity was closed: another memory (or a person) superseded it. */
export const isSuperseded = (turn: Pick<StoredTurn, "validUntil">) => turn.validUntil < OPEN_VALIDITY;

export function parseList<T>(value: unknown): T[] {
  if (typeof value !== "string") return [];
  try {
    const parsed = JSON.parse(value) as unknown;
    return Array.isArray(parsed) ? (parsed as T[]) : [];
  } catch {
    return [];
  }
}
