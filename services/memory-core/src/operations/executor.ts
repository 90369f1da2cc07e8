import { compileInputValidators, type Contract, type InputValidator, type Operation } from "@cairn/openapi";
import type { Principal } from "../auth/principal.js";
import type { MemoryService } from "../domain/memory-service.js";
import type { SessionSummarizer } from "../domain/session-summarizer.js";
import { asCairnError, forbidden, validationFailed } from "../errors.js";
import { assertInputDepth } from "../input-depth.js";
import type { Metrics } from "../metrics.js";
import type { OperationRegistry, OperationResult } from "./registry.js";

export type Transport = "rest" | "mcp-http" | "mcp-stdio";

/**
 * The one path every call takes, whatever the transport: role check, validation against the contract,
 * handler, metrics. REST and MCP differ only in how they carry input and results.
 */
export class OperationExecutor {
  private readonly validators: Map<string, InputValidator>;

  constructor(
    readonly contract: Contract,
    private readonly registry: OperationRegistry,
    private readonly memories: MemoryService,
    private readonly metrics: Metrics,
    private readonly summarizer?: SessionSummarizer,
  ) {
    const inContract = new Set(contract.operations.map((op) => op.operationId));
    const implemented = new Set(registry.operationIds());
    const missing = [...inContract].filter((id) => !implemented.has(id));
    const extra = [...implemented].filter((id) => !inContract.has(id));
    if (missing.length > 0 || extra.length > 0) {
      throw new Error(`contract and handlers disagree: not implemented [${missing.join(", ")}], not in the contract [${extra.join(", ")}]`);
    }
    this.validators = compileInputValidators(contract);
  }

  get operations(): readonly Operation[] {
    return this.contract.operations;
  }

  async execute(operationId: string, input: unknown, principal: Principal, transport: Transport): Promise<OperationResult> {
    const timer = this.metrics.operationSeconds.startTimer({ operation: operationId, transport });
    try {
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

  private async run(operationId: string, input: unknown, principal: Principal): Promise<OperationResult> {
    const operation = this.contract.operation(operationId);
    if (operation.requiredRole === "admin" && principal.role !== "admin") {
      throw forbidden(`${operationId} needs an admin token.`);
    }
    assertInputDepth(input);
    const validated = this.validators.get(operationId)!(input);
    if (!validated.ok) throw validationFailed(validated.errors);
    const handler = this.registry.handler(operationId)!;
    return handler(validated.value, {
      principal,
      memories: this.memories,
      ...(this.summarizer ? { summarizer: this.summarizer } : {}),
    });
  }
}
