import type { QuerySummariesRequest } from "../domain/types.js";
import type { OperationRegistry } from "./registry.js";

export function registerQuerySummaries(registry: OperationRegistry): void {
  registry.register("query_summaries", async (input, { principal, memories }) => ({
    status: 200,
    body: await memories.querySummaries(principal, input as unknown as QuerySummariesRequest),
  }));
}
