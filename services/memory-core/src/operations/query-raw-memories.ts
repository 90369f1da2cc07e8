import type { QueryMemoriesRequest } from "../domain/types.js";
import type { OperationRegistry } from "./registry.js";

export function registerQueryRawMemories(registry: OperationRegistry): void {
  registry.register("query_raw_memories", async (input, { principal, memories }) => ({
    status: 200,
    body: await memories.queryMemories(principal, input as unknown as QueryMemoriesRequest),
  }));
}
