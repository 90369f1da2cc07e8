import type { OperationInput, OperationOutput } from "@cairn/openapi";
import type { Principal } from "../auth/principal.js";
import { validationFailed } from "../errors.js";
import { replacementEntry } from "../ledger/audit-log.js";
import type { LexicalIndexes } from "../lexical/indexes.js";
import { decodeCursor, encodeCursor, encodeItemCursor, itemPositionFrom, type Listing } from "../records/cursor.js";
import type { Condition } from "../records/filters.js";
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
    /** The most memories one `review_matching` call reviews (`CAIRN_REVIEW_PER_CALL`). */
    private readonly reviewPerCall: number,
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

  /**
   * The memories waiting for review that the filters select, oldest stored first, a page after the `after`
   * cursor's position, and how many wait: found and ordered on the lexical index's metadata (`review_state` is
   * one of its key fields, so the pending ones are found without a pass over the workspace); only the page is
   * fetched whole.
   */
  async reviewQueue(principal: Principal, input: OperationInput<"query_review_queue">): Promise<OperationOutput<"query_review_queue">> {
    const filter = reviewFilter(input);
    const listing: Listing = { name: "review", workspace: principal.workspace, scope: filterScope(filter) };
    const after = input.after === undefined ? undefined : decodeCursor(input.after, "after", listing);
    const index = await this.lexical.snapshot(principal.workspace, "turns");
    const found = index.oldestStored(pendingConditions(filter), input.limit, after) ?? { total: 0, following: 0, ids: [] };
    const page = await index.turns(found.ids);
    const last = page.at(-1);
    const detail = input.detail ?? "brief";
    return {
      memories: page.map((r) => (detail === "brief" ? briefOf(r, listingText(r)) : memoryOf(r, detail))),
      next_cursor: found.following > page.length && last ? encodeCursor(listing, positionOf(last)) : null,
      total: found.total,
      pending: index.matching([PENDING])?.length ?? 0,
    };
  }

  /**
   * One verdict and one reason for the pending memories the filters select, at most `reviewPerCall` of them,
   * oldest stored first: each reviewed as `reviewMemory` reviews one (its review, a rewrite on the change feed,
   * an audit entry), written together. A workspace's calls run one at a time, so two never review one memory
   * twice; a memory whose stored state is no longer pending when it is read is left as it is.
   */
  async reviewMatching(principal: Principal, input: OperationInput<"review_matching">): Promise<OperationOutput<"review_matching">> {
    return this.oneAtATime(principal.workspace, async () => {
      const filter = reviewFilter(input);
      const conditions = pendingConditions(filter);
      const index = await this.lexical.snapshot(principal.workspace, "turns");
      const found = index.oldestStored(conditions, input.dry_run ? 0 : this.reviewPerCall) ?? { total: 0, following: 0, ids: [] };
      const answer = { decision: input.decision, dry_run: input.dry_run ?? false, matched: found.total, per_call: this.reviewPerCall };
      if (input.dry_run || found.ids.length === 0) return { ...answer, reviewed: 0, remaining: found.total, ids: [] };
      const stored = await this.corrections.pendingReview(principal.workspace, found.ids);
      const reviewed = await this.corrections.reviewMany(principal, stored, input.decision, input.reason);
      await this.audit.appendMany(
        principal.workspace,
        reviewed.map((r) => ({ action: input.decision, actor: principal.agent, memoryId: r.id, reason: input.reason })),
      );
      const after = await this.lexical.snapshot(principal.workspace, "turns");
      return {
        ...answer,
        reviewed: reviewed.length,
        remaining: after.oldestStored(conditions, 0)?.total ?? 0,
        ids: reviewed.map((r) => r.id),
      };
    });
  }

  private readonly running = new Map<string, Promise<unknown>>();

  /** Runs `task` after the workspace's task before it has settled. */
  private oneAtATime<T>(workspace: string, task: () => Promise<T>): Promise<T> {
    const previous = this.running.get(workspace) ?? Promise.resolve();
    const next = previous.then(task, task);
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    this.running.set(workspace, settled);
    void settled.then(() => {
      if (this.running.get(workspace) === settled) this.running.delete(workspace);
    });
    return next;
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

const PENDING: Condition = { field: "review_state", op: "eq", value: "pending" };

/** What a review listing or a review of many selects, instants as numbers. */
interface ReviewFilter {
  source?: string;
  agent?: string;
  sessionId?: string;
  since?: number;
  until?: number;
}

function reviewFilter(input: { source?: string; agent?: string; session_id?: string; since?: string; until?: string }): ReviewFilter {
  return {
    ...(input.source !== undefined ? { source: input.source } : {}),
    ...(input.agent !== undefined ? { agent: input.agent } : {}),
    ...(input.session_id !== undefined ? { sessionId: input.session_id } : {}),
    ...(input.since !== undefined ? { since: Date.parse(input.since) } : {}),
    ...(input.until !== undefined ? { until: Date.parse(input.until) } : {}),
  };
}

/** Instants as numbers, so that two spellings of one instant page the same listing; the whole queue's scope is empty. */
function filterScope(f: ReviewFilter): Array<string | number | undefined> {
  const scope = [f.source, f.agent, f.sessionId, f.since, f.until];
  return scope.every((v) => v === undefined) ? [] : scope;
}

/** Pending, and what the filter asks: conditions the lexical index judges from the pending ones' key run. */
function pendingConditions(f: ReviewFilter): Condition[] {
  const conditions: Condition[] = [PENDING];
  if (f.source !== undefined) conditions.push({ field: "source", op: "eq", value: f.source });
  if (f.agent !== undefined) conditions.push({ field: "agent", op: "eq", value: f.agent });
  if (f.sessionId !== undefined) conditions.push({ field: "session_id", op: "eq", value: f.sessionId });
  if (f.since !== undefined) conditions.push({ field: "recorded_at", op: "gte", value: f.since });
  if (f.until !== undefined) conditions.push({ field: "recorded_at", op: "lt", value: f.until });
  return conditions;
}
