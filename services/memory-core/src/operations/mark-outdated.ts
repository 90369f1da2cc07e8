import type { OperationRegistry } from "./registry.js";

export function registerMarkOutdated(registry: OperationRegistry): void {
  registry.register("mark_outdated", async (input, { principal, memories }) => ({
    status: 200,
    body: await memories.markOutdated(principal, String(input.memory_id), {
      reason: String(input.reason),
      ...(input.commit === undefined ? {} : { commit: String(input.commit) }),
    }),
  }));
}
