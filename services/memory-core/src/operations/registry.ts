import type { Principal } from "../auth/principal.js";
import type { MemoryService } from "../domain/memory-service.js";
import type { SessionSummarizer } from "../domain/session-summarizer.js";

export interface OperationContext {
  principal: Principal;
  memories: MemoryService;
  /** Absent when this server runs without a summarizer. */
  summarizer?: SessionSummarizer;
}

/** What an operation answers: the HTTP status it means and the body both transports return. */
export interface OperationResult {
  status: number;
  body: object;
}

/** Receives input already validated against the contract, defaults filled. */
export type OperationHandler = (input: Record<string, unknown>, context: OperationContext) => Promise<OperationResult>;

export class OperationRegistry {
  private readonly handlers = new Map<string, OperationHandler>();

  register(operationId: string, handler: OperationHandler): void {
    if (this.handlers.has(operationId)) throw new Error(`operation ${operationId} is registered twice`);
    this.handlers.set(operationId, handler);
  }

  handler(operationId: string): OperationHandler | undefined {
    return this.handlers.get(operationId);
  }

  operationIds(): string[] {
    return [...this.handlers.keys()];
  }
}
