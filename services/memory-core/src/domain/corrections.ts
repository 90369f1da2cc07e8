import type { Principal } from "../auth/principal.js";
import { CairnError, forbidden, notFound } from "../errors.js";
import type { ChangeFeed } from "../ledger/change-feed.js";
import type { Quarantine } from "../ledger/quarantine.js";
import type { Tombstones } from "../ledger/tombstones.js";
import type { StoredTurn } from "../records/stored-turn.js";
import type { TurnAmendment, TurnRepository } from "../records/turn-repository.js";
import { OPEN_VALIDITY } from "../records/turn-record.js";
import type { Correction } from "../records/types.js";
import type { Storage } from "../storage.js";

/**
 * Corrections without losing history: superseding closes a memory's validity and links it to its
 * replacement; forgetting removes content and vector and leaves a tombstone (who, when, why — never what).
 * Both reach the lexical indexes through the change feed.
 */

export interface Tombstone {
  id: string;
  forgotten_at: string;
  forgotten_by: string;
  reason: string;
}

export class Corrections {
  private readonly turns: TurnRepository;
  private readonly feed: ChangeFeed;
  private readonly tombstones: Tombstones;
  private readonly quarantine: Quarantine;

  constructor(
    storage: Pick<Storage, "turns" | "feed" | "tombstones" | "quarantine">,
    private readonly now: () => number = Date.now,
  ) {
    ({ turns: this.turns, feed: this.feed, tombstones: this.tombstones, quarantine: this.quarantine } = storage);
  }

  async tombstone(workspace: string, memoryId: string): Promise<Tombstone | undefined> {
    const tombstone = (await this.tombstones.of(workspace, [memoryId])).get(memoryId);
    if (!tombstone) return undefined;
    return { id: memoryId, forgotten_at: new Date(tombstone.at).toISOString(), forgotten_by: tombstone.by, reason: tombstone.reason };
  }

  /**
   * The memory as stored, or the reason it is not: 410 when forgotten, 404 when it never was, 409 when its stored
   * fields are damaged (unless `damaged` is allowed: forgetting takes a damaged memory as it is).
   */
  async existing(workspace: string, memoryId: string, options: { allowDamaged?: boolean } = {}): Promise<StoredTurn> {
    const [record] = await this.turns.byIds(workspace, [memoryId], { withText: true, withDamaged: true });
    if (record?.damage !== undefined && options.allowDamaged !== true) throw recordDamaged(memoryId, record.damage);
    if (record) return record;
    if (await this.tombstone(workspace, memoryId)) throw gone(memoryId);
    const [quarantined] = await this.quarantine.of(workspace, [memoryId]);
    if (quarantined) throw recordDamaged(memoryId, quarantined.damage, "was moved into quarantine by repair_store");
    throw notFound(`No memory ${memoryId} in this workspace.`, "Check the id; query_raw_memories finds memories by what they say.");
  }

  /** Only the author of a memory, or an admin, may correct it. */
  assertMayCorrect(principal: Principal, record: StoredTurn): void {
    if (principal.role !== "admin" && record.agent !== principal.agent) {
      throw forbidden(`Memory ${record.id} was written by ${record.agent}; only its author or an admin may correct it.`);
    }
  }

  /**
   * Closes the memory's validity and links it to `by`, which lists it in its `supersedes` in turn. `linked` names
   * `by` when its record changed for that (it did not list the memory yet), so that the change is audited under
   * it too: whoever reads the replacement's history sees who named it a replacement, even when it is another
   * agent's memory.
   */
  async supersede(
    principal: Principal,
    record: StoredTurn,
    by: string | undefined,
    reason: string,
  ): Promise<{ record: StoredTurn; linked?: string }> {
    this.assertMayCorrect(principal, record);
    if (record.validUntil < OPEN_VALIDITY) {
      throw new CairnError(
        "already_superseded",
        409,
        `Memory ${record.id} is superseded already${record.supersededBy ? ` by ${record.supersededBy}` : ""}.`,
        "Supersede the memory that replaced it instead, or leave it as it is.",
      );
    }
    const at = this.now();
    const correction: Correction = { kind: "superseded", reason, at: new Date(at).toISOString(), by: principal.agent };
    if (by) correction.replaced_by = by;
    const amendment: TurnAmendment = { correction, validUntil: at, supersededReason: reason };
    if (by) amendment.supersededBy = by;
    const superseded = await this.amend(principal.workspace, record, amendment);
    const linked = by !== undefined && (await this.linkReplacement(principal.workspace, by, record.id));
    return linked ? { record: superseded, linked: by } : { record: superseded };
  }

  /** The replacement names what it replaced: the link goes both ways. Whether the replacement's record changed. */
  private async linkReplacement(workspace: string, by: string, replaced: string): Promise<boolean> {
    const [replacement] = await this.turns.byIds(workspace, [by]);
    if (!replacement) return false;
    if (replacement.supersedes.includes(replaced)) return false;
    await this.amend(workspace, replacement, { supersedes: [...replacement.supersedes, replaced] });
    return true;
  }

  /** The record stays as written; the correction is added to its history and shown wherever it is returned. */
  async markOutdated(principal: Principal, record: StoredTurn, reason: string, commit: string | undefined): Promise<StoredTurn> {
    this.assertMayCorrect(principal, record);
    const correction: Correction = { kind: "outdated", reason, at: new Date(this.now()).toISOString(), by: principal.agent };
    if (commit) correction.commit = commit;
    return this.amend(principal.workspace, record, { correction });
  }

  /**
   * A person's verdict on a memory waiting for review (admins only, as the contract says); the last verdict
   * stands, and the audit log keeps each.
   */
  async review(principal: Principal, record: StoredTurn, decision: "approve" | "reject", reason: string): Promise<StoredTurn> {
    if (!record.review) {
      throw new CairnError(
        "not_reviewable",
        409,
        `Memory ${record.id} needs no review: only imported memories wait for one.`,
        "Review the memories query_review_queue lists; to correct this one, use mark_outdated or supersede_memory.",
      );
    }
    return this.amend(principal.workspace, record, {
      review: { state: verdictState(decision), by: principal.agent, at: this.now(), reason },
    });
  }

  /**
   * The memories of these ids, in their order, whose stored review is pending: those stored damaged, forgotten
   * or reviewed since the index was read are left out.
   */
  async pendingReview(workspace: string, ids: readonly string[]): Promise<StoredTurn[]> {
    const byId = new Map((await this.turns.byIds(workspace, ids, { withText: true })).map((r) => [r.id, r]));
    return ids.flatMap((id) => {
      const record = byId.get(id);
      return record?.review?.state === "pending" ? [record] : [];
    });
  }

  /**
   * `review` of several memories waiting for review, one verdict and one reason for all, written together: one
   * rewrite of the collection, announced on the change feed as one batch before and one after.
   */
  async reviewMany(
    principal: Principal,
    records: readonly StoredTurn[],
    decision: "approve" | "reject",
    reason: string,
  ): Promise<StoredTurn[]> {
    const at = this.now();
    const review: TurnAmendment["review"] = { state: verdictState(decision), by: principal.agent, at, reason };
    return this.feed.announcedRewrites(
      principal.workspace,
      "turns",
      records.map((r) => ({ record_id: r.id, session_id: r.sessionId })),
      () =>
        this.turns.amendMany(
          principal.workspace,
          records.map((turn) => ({ turn, amendment: { review } })),
        ),
    );
  }

  /** Rewrites what the amendment changes of the turn in place, announced so that every lexical index reads it again. */
  private async amend(workspace: string, record: StoredTurn, amendment: TurnAmendment): Promise<StoredTurn> {
    return this.feed.announcedRewrite(workspace, "turns", { record_id: record.id, session_id: record.sessionId }, () =>
      this.turns.amend(workspace, record, amendment),
    );
  }

  async forget(principal: Principal, memoryId: string, reason: string): Promise<{ tombstone: Tombstone; forgottenNow: boolean }> {
    const existing = await this.tombstone(principal.workspace, memoryId);
    if (existing) return { tombstone: existing, forgottenNow: false };
    const record = await this.existing(principal.workspace, memoryId, { allowDamaged: true });
    this.assertMayCorrect(principal, record);
    const sessionId = record.sessionId;
    const forgottenAt = this.now();
    await this.tombstones.leave(principal.workspace, [
      { memoryId, forgotten: { at: forgottenAt, by: principal.agent, reason, writeId: record.writeId } },
    ]);
    await this.feed.append(principal.workspace, "turns", { record_id: memoryId, op: "remove", session_id: sessionId });
    await this.turns.delete(principal.workspace, [memoryId]);
    return { tombstone: (await this.tombstone(principal.workspace, memoryId))!, forgottenNow: true };
  }
}

/** A memory whose stored fields fail the checks readers rely on (openapi/src/stored-records.ts). */
export const recordDamaged = (memoryId: string, damage: string, where = "is stored damaged") =>
  new CairnError(
    "record_damaged",
    409,
    `Memory ${memoryId} ${where} (${damage}); it cannot be shown or corrected.`,
    where === "is stored damaged"
      ? "Ask an admin to run verify_store and repair_store, which move damaged records into quarantine; forget_memory removes it. Write what still holds as a new memory."
      : "Its content is kept for an operator, not served. Write what still holds as a new memory.",
  );

export const gone = (memoryId: string) =>
  new CairnError(
    "gone",
    410,
    `Memory ${memoryId} was forgotten; its content cannot come back.`,
    "Write what still holds as a new memory, with a new idempotency key.",
  );

/** The review state a verdict leaves a memory in. */
export const verdictState = (decision: "approve" | "reject") => (decision === "approve" ? "approved" : "rejected");
