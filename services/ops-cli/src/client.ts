import { restRequest, type components, type OperationId, type OperationOutput, type OperationRequest } from "@cairn/openapi";
import { CliError } from "./io.js";

/** The shapes of memory-core's admin operations, from the contract's generated types. */
type Schemas = components["schemas"];
export type EmbeddingStamp = Schemas["EmbeddingStamp"];
export type TransferCollection = Schemas["RecordCollectionName"];
export type ExportedRecord = Schemas["ExportedRecord"];
export type ExportPage = Schemas["ExportPage"];
export type ImportResult = Schemas["ImportResult"];
export type IntegrityReport = Schemas["IntegrityReport"];
export type RepairReport = Schemas["RepairReport"];
export type ReembedProgress = Schemas["ReembedProgress"];

/** A request memory-core answered with an error: its status and problem code, for callers that expect some. */
export class RefusedError extends CliError {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

/**
 * memory-core's operations over REST with one token (so: one workspace): the admin operations behind the
 * cairn commands, and the writes of the importers (which an agent token may make too).
 */
export class AdminClient {
  constructor(
    private readonly base: URL,
    private readonly token: string,
  ) {}

  exportPage(collection: TransferCollection, limit: number, after: string | null, includeEmbeddings = true): Promise<ExportPage> {
    return this.call("export_records", { collection, limit, include_embeddings: includeEmbeddings, ...(after ? { after } : {}) });
  }

  importRecords(collection: TransferCollection, stamp: EmbeddingStamp | null, records: ExportedRecord[]): Promise<ImportResult> {
    return this.call("import_records", { collection, ...(stamp ? { stamp } : {}), records });
  }

  verify(): Promise<IntegrityReport> {
    return this.call("verify_store", {});
  }

  repair(apply: boolean): Promise<RepairReport> {
    return this.call("repair_store", { apply });
  }

  reembed(limit: number): Promise<ReembedProgress> {
    return this.call("reembed_records", { limit });
  }

  /** The workspace the token administers, as memory-core says (never as a file claims). */
  async workspace(): Promise<string> {
    return (await this.exportPage("tombstones", 1, null, false)).workspace;
  }

  /** One operation of the contract, laid out as its REST request; its success body, or a CliError saying why not. */
  async call<K extends OperationId>(operationId: K, input: OperationRequest<K>): Promise<OperationOutput<K>> {
    const { method, target: path, body } = restRequest(operationId, input);
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
      // The admin routes are the contract's admin operations; elsewhere a 403 is about the memory, not the role.
      if (response.status === 403 && path.startsWith("/v1/admin/")) {
        throw new CliError("this token is not an admin token (403): the cairn commands need role admin");
      }
      const what = problem.code ? `${problem.code}: ${problem.detail ?? ""}` : `HTTP ${response.status}`;
      throw new RefusedError(
        `memory-core refused ${method} ${new URL(path, this.base).pathname} (${what})${problem.hint ? ` ${problem.hint}` : ""}`,
        response.status,
        problem.code,
      );
    }
    if (parsed === undefined) throw new CliError(`memory-core answered ${method} ${path} with something that is not JSON`);
    return parsed as OperationOutput<K>;
  }
}
