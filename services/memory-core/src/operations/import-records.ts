import type { ImportRequest } from "../domain/types.js";
import type { OperationRegistry } from "./registry.js";

export function registerImportRecords(registry: OperationRegistry): void {
  registry.register("import_records", async (input, { principal, memories }) => ({
    status: 200,
    body: await memories.importRecords(principal, input as unknown as ImportRequest),
  }));
}
