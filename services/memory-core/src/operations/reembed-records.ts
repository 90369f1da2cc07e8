import type { OperationRegistry } from "./registry.js";

export function registerReembedRecords(registry: OperationRegistry): void {
  registry.register("reembed_records", async (input, { principal, memories }) => ({
    status: 200,
    body: await memories.reembed(principal, Number(input.limit)),
  }));
}
