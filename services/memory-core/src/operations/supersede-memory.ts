import type { OperationRegistry } from "./registry.js";

export function registerSupersedeMemory(registry: OperationRegistry): void {
  registry.register("supersede_memory", async (input, { principal, memories }) => ({
    status: 200,
    body: await memories.supersedeMemory(principal, String(input.memory_id), {
      reason: String(input.reason),
      ...(input.by === undefined ? {} : { by: String(input.by) }),
    }),
  }));
}
