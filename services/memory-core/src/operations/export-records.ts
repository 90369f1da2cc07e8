import type { ExportInput } from "../domain/record-export.js";
import type { OperationRegistry } from "./registry.js";

export function registerExportRecords(registry: OperationRegistry): void {
  registry.register("export_records", async (input, { principal, memories }) => ({
    status: 200,
    body: await memories.exportRecords(principal, input as unknown as ExportInput),
  }));
}
