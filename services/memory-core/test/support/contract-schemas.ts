import { compileSchema, loadContract } from "@cairn/openapi";

const contract = await loadContract();

/** Asserts that a body is what the contract says the operation returns. */
export function expectContractOutput(operationId: string, body: unknown): void {
  const result = compileSchema(contract.operation(operationId).outputSchema)(body);
  if (!result.ok) throw new Error(`${operationId} returned a body outside the contract: ${JSON.stringify(result.errors)}`);
}

export const operationIds = () => contract.operations.map((op) => op.operationId);
/** The operations an agent token may call. */
export const agentOperationIds = () => contract.operations.filter((op) => op.requiredRole === "agent").map((op) => op.operationId);
