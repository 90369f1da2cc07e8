import type { GetSessionInput } from "../domain/memory-service.js";
import type { OperationRegistry } from "./registry.js";

export function registerGetSession(registry: OperationRegistry): void {
  registry.register("get_session", async (input, { principal, memories }) => ({
    status: 200,
    body: await memories.getSession(principal, input as unknown as GetSessionInput),
  }));
}
