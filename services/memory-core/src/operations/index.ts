import { registerAddMemory } from "./add-memory.js";
import { registerExportRecords } from "./export-records.js";
import { registerImportRecords } from "./import-records.js";
import { registerReembedRecords } from "./reembed-records.js";
import { registerRepairStore } from "./repair-store.js";
import { registerVerifyStore } from "./verify-store.js";
import { registerForgetMemory } from "./forget-memory.js";
import { registerGetAuditLog } from "./get-audit-log.js";
import { registerGetMemory } from "./get-memory.js";
import { registerSupersedeMemory } from "./supersede-memory.js";
import { registerGetSession } from "./get-session.js";
import { registerMarkOutdated } from "./mark-outdated.js";
import { registerQueryRawMemories } from "./query-raw-memories.js";
import { registerQueryRecentTurns } from "./query-recent-turns.js";
import { registerQuerySummaries } from "./query-summaries.js";
import { registerSummarizeSession } from "./summarize-session.js";
import { OperationRegistry } from "./registry.js";

export function createOperationRegistry(): OperationRegistry {
  const registry = new OperationRegistry();
  registerAddMemory(registry);
  registerQueryRecentTurns(registry);
  registerQueryRawMemories(registry);
  registerQuerySummaries(registry);
  registerGetSession(registry);
  registerGetMemory(registry);
  registerSupersedeMemory(registry);
  registerMarkOutdated(registry);
  registerForgetMemory(registry);
  registerGetAuditLog(registry);
  registerSummarizeSession(registry);
  registerExportRecords(registry);
  registerImportRecords(registry);
  registerVerifyStore(registry);
  registerRepairStore(registry);
  registerReembedRecords(registry);
  return registry;
}
