import type { Contract } from "./contract.js";

/**
 * The source of `generated/operations.ts`: per operation, the input fields the contract gives a default
 * (validation fills them, so a handler sees them present although a caller may leave them out), and how
 * REST carries the operation (method, path, which fields travel in the path and the query), for clients.
 */
export function renderOperationTables(contract: Contract): string {
  const operations = [...contract.operations].sort((a, b) => a.operationId.localeCompare(b.operationId));
  const lines = [
    "// Generated from memory-core.yaml by `npm run generate -w @cairn/openapi`; do not edit.",
    "",
    "/** Per operation, the input fields the contract gives a default (present once validated). */",
    "export interface DefaultedInputs {",
  ];
  for (const op of operations) {
    const properties = (op.inputSchema.properties ?? {}) as Record<string, { default?: unknown }>;
    const names = Object.keys(properties)
      .filter((name) => properties[name]?.default !== undefined)
      .sort();
    lines.push(`  ${op.operationId}: ${names.length === 0 ? "never" : names.map((n) => JSON.stringify(n)).join(" | ")};`);
  }
  lines.push("}", "", "/** Per operation, how REST carries it; input fields in neither list travel in the JSON body. */");
  lines.push("export const operationRoutes = {");
  for (const op of operations) {
    const fields = (where: "path" | "query") => JSON.stringify(op.parameters.filter((p) => p.in === where).map((p) => p.inputName));
    lines.push(
      `  ${op.operationId}: { method: "${op.method}", path: "${op.path}", pathFields: ${fields("path")}, queryFields: ${fields("query")} },`,
    );
  }
  lines.push("} as const;", "");
  return lines.join("\n");
}
