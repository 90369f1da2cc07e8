import type { OperationRegistry } from "./registry.js";

export function registerGetAuditLog(registry: OperationRegistry): void {
  registry.register("get_audit_log", async (input, { principal, memories }) => ({
    status: 200,
    body: await memories.auditLog(principal, input as Parameters<typeof memories.auditLog>[1]),
  }));
}
