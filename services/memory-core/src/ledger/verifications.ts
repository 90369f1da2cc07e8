import type { OperationOutput } from "@cairn/openapi";
import { LAST_VERIFY_ID, type Ledger } from "./ledger.js";

export type LastVerify = NonNullable<OperationOutput<"get_store_status">["last_verify"]>;

/**
 * The last integrity check of a workspace, kept in the ledger so that any replica, and a person opening the
 * console months later, can say when the store was last checked and what was found, without checking it again.
 */
export class Verifications {
  constructor(private readonly ledger: Ledger) {}

  /**
   * Takes the record before a check counts anything, so that the check's counts include it and a later check
   * counts the same: keeping the last check changes nothing a check reports.
   */
  async reserve(workspace: string): Promise<void> {
    await this.ledger.insertIfAbsent(workspace, [
      { id: LAST_VERIFY_ID, metadata: { at: 0, by: "", healthy: false, problem_counts: "{}" } },
    ]);
  }

  /** Rewrites the reserved record with how the check went: the last check to finish stands. */
  async record(workspace: string, check: LastVerify): Promise<void> {
    const metadata = {
      at: Date.parse(check.at),
      by: check.by,
      healthy: check.healthy,
      problem_counts: JSON.stringify(check.problem_counts),
    };
    await this.ledger.update(workspace, [{ id: LAST_VERIFY_ID, metadata }]);
  }

  async last(workspace: string): Promise<LastVerify | null> {
    const [record] = await this.ledger.get(workspace, [LAST_VERIFY_ID]);
    const m = record?.metadata;
    // Reserved by a check that has not finished (or never did): no check to show yet.
    if (!m || !Number(m.at)) return null;
    let counts: Record<string, number> = {};
    try {
      counts = JSON.parse(String(m.problem_counts)) as Record<string, number>;
    } catch {
      counts = {};
    }
    return { at: new Date(Number(m.at)).toISOString(), by: String(m.by), healthy: m.healthy === true, problem_counts: counts };
  }
}
