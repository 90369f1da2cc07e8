import type { RecentTurnsInput } from "../domain/memory-service.js";
import type { OperationRegistry } from "./registry.js";

export function registerQueryRecentTurns(registry: OperationRegistry): void {
  registry.register("query_recent_turns", async (input, { principal, memories }) => ({
    status: 200,
    body: await memories.recentTurns(principal, input as unknown as RecentTurnsInput),
  }));
}
