import type { AddMemoryRequest } from "../domain/types.js";
import type { OperationRegistry } from "./registry.js";

export function registerAddMemory(registry: OperationRegistry): void {
  registry.register("add_memory", async (input, { principal, memories }) => {
    const outcome = await memories.addMemory(principal, input as AddMemoryRequest);
    return { status: outcome.created ? 201 : 200, body: outcome.result };
  });
}
