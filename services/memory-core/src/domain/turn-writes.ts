import type { Principal } from "../auth/principal.js";
import { CairnError, forbidden } from "../errors.js";
import { contentKey, turnId } from "../records/ids.js";
import { payloadHash } from "../records/turn-record.js";
import type { AddMemoryRequest, AddMemoryResult } from "../records/types.js";
import type { StoredTurn } from "../records/stored-turn.js";
import { recordDamaged } from "./corrections.js";

/** What a write of one turn comes to, for `add_memory` and each item of `add_memories` alike. */

export interface AddMemoryOutcome {
  created: boolean;
  result: AddMemoryResult;
}

/** A turn's ids: under its key (or its content, without one), and under its content alone. */
export interface TurnIds {
  id: string;
  key: string;
  contentId: string;
  /** The write's payload hash: a turn found under the content id is this write only when it matches. */
  hash: string;
}

/** Who wrote a memory when the request does not say: an importer's writes wait for review like any import's. */
const DEFAULT_SOURCE = { admin: "human", agent: "agent", importer: "import" } as const;

/**
 * The checks a write passes before anything is looked up, and what it stores: the request with its source
 * resolved (part of what was written, so a retry that spells it out replays) and its ids.
 */
export function resolveTurn(principal: Principal, request: AddMemoryRequest): { input: AddMemoryRequest; ids: TurnIds; keyGiven: boolean } {
  if (request.source === "human" && principal.role !== "admin") {
    throw forbidden("Only an admin token may write a memory as source human.");
  }
  const input: AddMemoryRequest = { ...request, source: request.source ?? DEFAULT_SOURCE[principal.role] };
  const byContent = contentKey(input.session_id, input.prompt, input.thought, input.response);
  const key = input.idempotency_key ?? byContent;
  return {
    input,
    // The id the same turn would have without a key (`contentId`): what ties a write sent with a key to its retry without one.
    ids: { id: turnId(principal.agent, key), key, contentId: turnId(principal.agent, byContent), hash: payloadHash(input) },
    keyGiven: input.idempotency_key !== undefined,
  };
}

/** A write of an id already stored: a replay, a conflict, or, when the stored record is damaged, refused as such. */
export function replayOrConflict(stored: StoredTurn, hash: string, keyGiven: boolean): AddMemoryOutcome {
  if (stored.damage !== undefined) throw recordDamaged(stored.id, stored.damage);
  if (stored.payloadSha256 === hash) return { created: false, result: addResult(stored, true) };
  throw new CairnError(
    "idempotency_conflict",
    409,
    `Memory ${stored.id} was stored earlier under this idempotency key with a different payload; nothing was changed.`,
    keyGiven
      ? "Use a new idempotency_key for a new turn; resend the original payload unchanged to get the original record back."
      : "This session already holds a turn with exactly this prompt, thought and response but other fields; pass an idempotency_key to store it as a separate turn.",
  );
}

export function addResult(stored: StoredTurn, replayed: boolean): AddMemoryResult {
  return {
    id: stored.id,
    session_id: stored.sessionId,
    agent: stored.agent,
    recorded_at: new Date(stored.recordedAt).toISOString(),
    replayed,
  };
}
