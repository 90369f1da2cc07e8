import type { OperationRegistry } from "./registry.js";

export function registerRepairStore(registry: OperationRegistry): void {
  registry.register("repair_store", async (input, { principal, memories }) => ({
    status: 200,
    body: await memories.repairStore(principal, input.apply === true),
  }));
}
