import type { OperationRegistry } from "./registry.js";

export function registerForgetMemory(registry: OperationRegistry): void {
  registry.register("forget_memory", async (input, { principal, memories }) => ({
    status: 200,
    body: await memories.forgetMemory(principal, String(input.memory_id), String(input.reason)),
  }));
}
