import type { OperationRegistry } from "./registry.js";

export function registerVerifyStore(registry: OperationRegistry): void {
  registry.register("verify_store", async (_input, { principal, memories }) => ({
    status: 200,
    body: await memories.verifyStore(principal),
  }));
}
