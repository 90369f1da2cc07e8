import type { OperationRegistry } from "./registry.js";

export function registerGetMemory(registry: OperationRegistry): void {
  registry.register("get_memory", async (input, { principal, memories }) => ({
    status: 200,
    body: await memories.getMemory(principal, String(input.memory_id)),
  }));
}
