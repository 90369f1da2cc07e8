import type { OperationOutput } from "@cairn/openapi";
import type { ChromaStore } from "../store/chroma-store.js";
import { LAST_VERIFY_ID, Ledger } from "./ledger.js";

export type LastVerify = NonNullable<OperationOutput<"get_store_status">["last_verify"]>;

/**
 * The last integrity check of a workspace, kept in the ledger so that any replica, and a person opening the
 * console months later, can say when the store was last checked and what was found, without checking it again.
 */
export class Verifications {
  private readonly ledger: Ledger;

  constructor(store: ChromaStore) {
    this.ledger = new Ledger(store);
  }

  /** Replaces the record of the last check (taken first, then rewritten: the last writer's check stands). */
  async record(workspace: string, check: LastVerify): Promise<void> {
    const entry = {
      id: LAST_VERIFY_ID,
      metadata: { at: Date.parse(check.at), by: check.by, healthy: check.healthy, problem_counts: JSON.stringify(check.problem_counts) },
    };
    await this.ledger.insertIfAbsent(workspace, [entry]);
    await this.ledger.update(workspace, [entry]);
  }

  async last(workspace: string): Promise<LastVerify | null> {
    const [record] = await this.ledger.get(workspace, [LAST_VERIFY_ID]);
    if (!record) return null;
    const m = record.metadata;
    let counts: Record<string, number> = {};
    try {
      counts = JSON.parse(String(m.problem_counts)) as Record<string, number>;
    } catch {
      counts = {};
    }
    return { at: new Date(Number(m.at)).toISOString(), by: String(m.by), healthy: m.healthy === true, problem_counts: counts };
  }
}
