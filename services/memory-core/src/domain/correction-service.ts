import type { OperationInput, OperationOutput } from "@cairn/openapi";
import type { Principal } from "../auth/principal.js";
import { validationFailed } from "../errors.js";
import { replacementEntry } from "../ledger/audit-log.js";
import type { LexicalIndexes } from "../lexical/indexes.js";
import { decodeCursor, encodeCursor, encodeItemCursor, itemPositionFrom, oldestFirst, type Listing } from "../records/cursor.js";
import { briefOf, listingText } from "../records/memory-brief.js";
import type { StoredTurn } from "../records/stored-turn.js";
import { memoryOf, positionOf } from "../records/turn-record.js";
import type { Correction, Memory } from "../records/types.js";
import type { Storage } from "../storage.js";
import { verdictState, type Corrections, type Tombstone } from "./corrections.js";

/** What changes a memory after it was written: superseding, outdating, reviewing, forgetting; and their record. */
export class CorrectionService {
  constructor(
    private readonly storage: Pick<Storage, "audit">,
    private readonly corrections: Corrections,
    private readonly lexical: LexicalIndexes,
  ) {}

  private get audit() {
    return this.storage.audit;
  }

  async supersedeMemory(principal: Principal, input: OperationInput<"supersede_memory">): Promise<Memory> {
    const memoryId = input.memory_id;
    const record = await this.corrections.existing(principal.workspace, memoryId);
    if (input.by !== undefined) {
      if (input.by === memoryId) throw validationFailed([{ path: "by", message: "cannot be the memory itself" }]);
      await this.corrections.existing(principal.workspace, input.by);
    }
    // The same correction again (a retry) answers the memory as it stands and records nothing more.
    if (repeats(record, { kind: "superseded", reason: input.reason, by: principal.agent, replaced_by: input.by }))
      return memoryOf(record, "full");
    const { record: superseded, linked } = await this.corrections.supersede(principal, record, input.by, input.reason);
    await this.audit.appendMany(principal.workspace, [
      { action: "supersede", actor: principal.agent, memoryId, reason: input.reason },
      ...(linked ? [replacementEntry(principal.agent, linked, memoryId, input.reason)] : []),
    ]);
    return memoryOf(superseded, "full");
  }

  async markOutdated(principal: Principal, input: OperationInput<"mark_outdated">): Promise<Memory> {
    const memoryId = input.memory_id;
    const record = await this.corrections.existing(principal.workspace, memoryId);
    if (repeats(record, { kind: "outdated", reason: input.reason, by: principal.agent, commit: input.commit }))
      return memoryOf(record, "full");
    const marked = await this.corrections.markOutdated(principal, record, input.reason, input.commit);
    await this.audit.append(principal.workspace, { action: "mark_outdated", actor: principal.agent, memoryId, reason: input.reason });
    return memoryOf(marked, "full");
  }

  async reviewMemory(principal: Principal, input: OperationInput<"review_memory">): Promise<Memory> {
    const record = await this.corrections.existing(principal.workspace, input.memory_id);
    const state = verdictState(input.decision);
    // The same verdict again (a retry) answers the memory as it stands and records nothing more.
    const review = record.review;
    if (review?.state === state && review.by === principal.agent && review.reason === input.reason) return memoryOf(record, "full");
    const reviewed = await this.corrections.review(principal, record, input.decision, input.reason);
    await this.audit.append(principal.workspace, {
      action: input.decision,
      actor: principal.agent,
      memoryId: record.id,
      reason: input.reason,
    });
    return memoryOf(reviewed, "full");
  }

  /** The memories waiting for review, oldest first, a page after the `after` cursor's position. */
  async reviewQueue(principal: Principal, input: OperationInput<"query_review_queue">): Promise<OperationOutput<"query_review_queue">> {
    const listing: Listing = { name: "review", workspace: principal.workspace, scope: [] };
    const after = input.after === undefined ? undefined : decodeCursor(input.after, "after", listing);
    const index = await this.lexical.snapshot(principal.workspace, "turns");
    // Ordered on the index's metadata; only the page is fetched whole.
    const waiting = (index.matching([{ field: "review_state", op: "eq", value: "pending" }]) ?? [])
      .flatMap((id) => index.turn(id) ?? [])
      .filter((r) => !after || oldestFirst(after, positionOf(r)) < 0)
      .sort((a, b) => oldestFirst(positionOf(a), positionOf(b)));
    const page = await index.turns(waiting.slice(0, input.limit).map((r) => r.id));
    const last = page.at(-1);
    return {
      memories: page.map((r) => briefOf(r, listingText(r))),
      next_cursor: waiting.length > page.length && last ? encodeCursor(listing, positionOf(last)) : null,
    };
  }

  async forgetMemory(principal: Principal, memoryId: string, reason: string): Promise<Tombstone> {
    const { tombstone, forgottenNow } = await this.corrections.forget(principal, memoryId, reason);
    if (forgottenNow) await this.audit.append(principal.workspace, { action: "forget", actor: principal.agent, memoryId, reason });
    return tombstone;
  }

  async auditLog(principal: Principal, input: OperationInput<"get_audit_log">): Promise<OperationOutput<"get_audit_log">> {
    const filter = {
      ...(input.memory_id !== undefined ? { memoryId: input.memory_id } : {}),
      ...(input.agent !== undefined ? { agent: input.agent } : {}),
      ...(input.since !== undefined ? { since: Date.parse(input.since) } : {}),
      ...(input.until !== undefined ? { until: Date.parse(input.until) } : {}),
    };
    // Instants as numbers, so that two spellings of one instant page the same listing.
    const listing: Listing = {
      name: "audit",
      workspace: principal.workspace,
      scope: [filter.memoryId, filter.agent, filter.since, filter.until],
    };
    const from = input.after === undefined ? { at: 0, item: 0 } : itemPositionFrom(input.after, "after", listing);
    const page = await this.audit.read(principal.workspace, filter, input.limit, from);
    return { entries: page.entries, next_cursor: page.next === null ? null : encodeItemCursor(listing, page.next) };
  }
}

/** Whether the memory's newest correction is this one, by the same agent: a retry of it. */
function repeats(record: StoredTurn, correction: Pick<Correction, "kind" | "reason" | "by" | "replaced_by" | "commit">): boolean {
  const last = record.corrections.at(-1);
  return (
    last !== undefined &&
    last.kind === correction.kind &&
    last.reason === correction.reason &&
    last.by === correction.by &&
    last.replaced_by === correction.replaced_by &&
    last.commit === correction.commit
  );
}
