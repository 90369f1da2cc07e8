import { CliError } from "./io.js";

/** The shapes of memory-core's admin operations, as the contract (openapi/memory-core.yaml) defines them. */
export interface EmbeddingStamp {
  model: string;
  dimension: number;
}
export type TransferCollection = "turns" | "summaries" | "tombstones";
export interface ExportedRecord {
  id: string;
  document: string;
  metadata: Record<string, string | number | boolean>;
  embedding?: number[];
}
export interface ExportPage {
  workspace: string;
  collection: TransferCollection;
  stamp: EmbeddingStamp | null;
  records: ExportedRecord[];
  total: number;
  next_cursor: string | null;
}
export interface ImportResult {
  workspace: string;
  collection: TransferCollection;
  stored: number;
  skipped: number;
  forgotten: number;
  reembedded: number;
}
export interface IntegrityReport {
  workspace: string;
  healthy: boolean;
  embedder: EmbeddingStamp;
  collections: Array<{ collection: string; count: number; stamp: EmbeddingStamp | null; stamp_matches: boolean }>;
  tombstones: number;
  slots_checked: number;
  problem_counts: Record<string, number>;
  problems: Array<{ check: string; collection: string; id?: string; detail: string }>;
  problems_truncated: boolean;
}
export interface RepairReport {
  workspace: string;
  applied: boolean;
  before: IntegrityReport;
  slots_retired: number;
  slots_restored: number;
  audit_entries_written: number;
  memories: number;
}
export interface ReembedProgress {
  workspace: string;
  done: boolean;
  embedder: EmbeddingStamp;
  processed: number;
  collections: Array<{ collection: "turns" | "summaries"; state: "current" | "reembedding"; reembedded: number; total: number }>;
}

/** memory-core's admin operations over REST, with one admin token (so: one workspace). */
export class AdminClient {
  constructor(
    private readonly base: URL,
    private readonly token: string,
  ) {}

  exportPage(collection: TransferCollection, limit: number, after: string | null, includeEmbeddings = true): Promise<ExportPage> {
    const query = new URLSearchParams({ collection, limit: String(limit), include_embeddings: String(includeEmbeddings) });
    if (after) query.set("after", after);
    return this.call("GET", `/v1/admin/records?${query}`);
  }

  importRecords(collection: TransferCollection, stamp: EmbeddingStamp | null, records: ExportedRecord[]): Promise<ImportResult> {
    return this.call("POST", "/v1/admin/records", { collection, ...(stamp ? { stamp } : {}), records });
  }

  verify(): Promise<IntegrityReport> {
    return this.call("GET", "/v1/admin/verify");
  }

  repair(apply: boolean): Promise<RepairReport> {
    return this.call("POST", "/v1/admin/repair", { apply });
  }

  reembed(limit: number): Promise<ReembedProgress> {
    return this.call("POST", "/v1/admin/reembed", { limit });
  }

  /** The workspace the token administers, as memory-core says (never as a file claims). */
  async workspace(): Promise<string> {
    return (await this.exportPage("tombstones", 1, null, false)).workspace;
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await fetch(new URL(path, this.base), {
        method,
        headers: {
          authorization: `Bearer ${this.token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch {
      throw new CliError(`cannot reach memory-core at ${this.base.origin} (is it running? pass --url)`);
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!response.ok) {
      const problem = (parsed ?? {}) as { code?: string; detail?: string; hint?: string };
      if (response.status === 401) throw new CliError("memory-core does not know this token (401): check --token or the tokens file");
      if (response.status === 403) throw new CliError("this token is not an admin token (403): the cairn commands need role admin");
      const what = problem.code ? `${problem.code}: ${problem.detail ?? ""}` : `HTTP ${response.status}`;
      throw new CliError(
        `memory-core refused ${method} ${new URL(path, this.base).pathname} (${what})${problem.hint ? ` ${problem.hint}` : ""}`,
      );
    }
    if (parsed === undefined) throw new CliError(`memory-core answered ${method} ${path} with something that is not JSON`);
    return parsed as T;
  }
}
