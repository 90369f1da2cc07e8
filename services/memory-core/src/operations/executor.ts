import { mayCall, OperationValidators, type Contract, type Operation, type OperationId, type OperationResult } from "@cairn/openapi";
import type { Principal } from "../auth/principal.js";
import type { Services } from "../services.js";
import type { SessionSummarizer } from "../domain/session-summarizer.js";
import { asCairnError, forbidden, notFound, validationFailed } from "../errors.js";
import { assertInputDepth } from "../input-depth.js";
import type { Metrics } from "../metrics.js";
import { handlers, isOperationId, type Handlers, type OperationContext } from "./handlers.js";

export type Transport = "rest" | "mcp-http" | "mcp-stdio";

/** What any operation answers: one of its success statuses and that status's body. */
export type AnyOperationResult = OperationResult<OperationId>;

/**
 * The one path every call takes, whatever the transport: role check, validation against the contract,
 * handler, metrics. REST and MCP differ only in how they carry input and results.
 */
export class OperationExecutor {
  private readonly validators: OperationValidators;

  constructor(
    readonly contract: Contract,
    private readonly services: Services,
    private readonly metrics: Metrics,
    private readonly summarizer?: SessionSummarizer,
  ) {
    // The types hold the handlers to the generated contract; this holds them to the contract loaded at run time.
    const inContract = new Set(contract.operations.map((op) => op.operationId));
    const implemented = new Set(Object.keys(handlers));
    const missing = [...inContract].filter((id) => !implemented.has(id));
    const extra = [...implemented].filter((id) => !inContract.has(id));
    if (missing.length > 0 || extra.length > 0) {
      throw new Error(`contract and handlers disagree: not implemented [${missing.join(", ")}], not in the contract [${extra.join(", ")}]`);
    }
    this.validators = new OperationValidators(contract);
  }

  get operations(): readonly Operation[] {
    return this.contract.operations;
  }

  async execute(operationId: string, input: unknown, principal: Principal, transport: Transport): Promise<AnyOperationResult> {
    const timer = this.metrics.operationSeconds.startTimer({ operation: operationId, transport });
    try {
      if (!isOperationId(operationId)) throw notFound(`No operation ${operationId}.`, "tools/list and /openapi.json name every operation.");
      const result = await this.run(operationId, input, principal);
      this.metrics.operations.inc({ operation: operationId, transport, outcome: "ok" });
      return result;
    } catch (error) {
      const cairnError = asCairnError(error);
      this.metrics.operations.inc({ operation: operationId, transport, outcome: cairnError.code });
      throw error;
    } finally {
      timer();
    }
  }

  private async run<K extends OperationId>(operationId: K, input: unknown, principal: Principal): Promise<OperationResult<K>> {
    const operation = this.contract.operation(operationId);
    if (!mayCall(operation.requiredRole, principal.role)) {
      throw forbidden(`${operationId} needs ${operation.requiredRole === "importer" ? "an importer or an admin" : "an admin"} token.`);
    }
    assertInputDepth(input);
    const validated = this.validators.validate(operationId, input);
    if (!validated.ok) throw validationFailed(validated.errors);
    const { writes, queries, corrections, admin, messages } = this.services;
    const context: OperationContext = {
      principal,
      writes,
      queries,
      corrections,
      admin,
      messages,
      ...(this.summarizer ? { summarizer: this.summarizer } : {}),
    };
    const handler = handlers[operationId] as Handlers[K];
    return handler(validated.value, context);
  }
}
