import type { OperationInput, OperationOutput } from "@cairn/openapi";
import type { Principal } from "../auth/principal.js";
import type { ExportPage, ImportRequest, ImportResult, IntegrityReport, ReembedProgress, RepairReport } from "../records/types.js";
import type { Storage } from "../storage.js";
import type { IntegrityCheck } from "./integrity.js";
import type { RecordExport } from "./record-export.js";
import type { RecordImport } from "./record-import.js";
import type { Reembedding } from "./reembedding.js";

/** What operators do to a workspace's store as a whole: back it up, restore it, check it, mend it, re-embed it. */
export class AdminService {
  constructor(
    private readonly storage: Pick<Storage, "store" | "verifications">,
    private readonly parts: { exports: RecordExport; imports: RecordImport; integrity: IntegrityCheck; reembedding: Reembedding },
    private readonly now: () => number,
  ) {}

  /** One page of a collection's records as stored, for backups. */
  exportRecords(principal: Principal, input: OperationInput<"export_records">): Promise<ExportPage> {
    return this.parts.exports.page(principal.workspace, input);
  }

  /** Exported records stored back; what is present already is skipped. */
  importRecords(principal: Principal, request: ImportRequest): Promise<ImportResult> {
    return this.parts.imports.run(principal, request);
  }

  async verifyStore(principal: Principal): Promise<IntegrityReport> {
    await this.storage.verifications.reserve(principal.workspace);
    const report = await this.parts.integrity.run(principal.workspace);
    await this.storage.verifications.record(principal.workspace, {
      at: new Date(this.now()).toISOString(),
      by: principal.agent,
      healthy: report.healthy,
      problem_counts: report.problem_counts,
    });
    return report;
  }

  /** Counts and the last integrity check: what an operator's status page shows without a full read. */
  async storeStatus(principal: Principal): Promise<OperationOutput<"get_store_status">> {
    const count = async (name: "turns" | "summaries") => (await this.storage.store.collection(principal.workspace, name)).count();
    const [turns, summaries, lastVerify] = await Promise.all([
      count("turns"),
      count("summaries"),
      this.storage.verifications.last(principal.workspace),
    ]);
    return { workspace: principal.workspace, turns, summaries, last_verify: lastVerify };
  }

  /** What verifyStore finds in the logs, mended when `apply` (see integrity.ts). */
  repairStore(principal: Principal, apply: boolean): Promise<RepairReport> {
    return this.parts.integrity.repair(principal, apply);
  }

  /** One batch of re-embedding with this server's model. */
  reembed(principal: Principal, limit: number): Promise<ReembedProgress> {
    return this.parts.reembedding.step(principal.workspace, limit);
  }
}
