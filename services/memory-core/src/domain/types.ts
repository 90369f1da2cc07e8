import type { components } from "@cairn/openapi";

/** The contract's shapes, generated from openapi/memory-core.yaml. */
type Schemas = components["schemas"];
export type AddMemoryRequest = Schemas["AddMemoryRequest"];
export type AddMemoryResult = Schemas["AddMemoryResult"];
export type Memory = Schemas["Memory"];
export type Check = Schemas["Check"];
export type Correction = Schemas["Correction"];
export type Kind = Schemas["Kind"];
export type Confidence = Schemas["Confidence"];
export type Detail = Schemas["Detail"];
export type RecentTurnsResult = Schemas["RecentTurnsResult"];
export type QueryMemoriesRequest = Schemas["QueryMemoriesRequest"];
export type QueryMemoriesResult = Schemas["QueryMemoriesResult"];
export type MemoryHit = Schemas["MemoryHit"];
export type QuerySummariesRequest = Schemas["QuerySummariesRequest"];
export type QuerySummariesResult = Schemas["QuerySummariesResult"];
export type Summary = Schemas["Summary"];
export type SessionResult = Schemas["SessionResult"];
export type SummarizeSessionResult = Schemas["SummarizeSessionResult"];
export type ExportPage = Schemas["ExportPage"];
export type ExportedRecord = Schemas["ExportedRecord"];
export type ImportRequest = Schemas["ImportRequest"];
export type ImportResult = Schemas["ImportResult"];
export type IntegrityReport = Schemas["IntegrityReport"];
export type IntegrityProblem = Schemas["IntegrityProblem"];
export type ReembedProgress = Schemas["ReembedProgress"];
export type TransferCollection = Schemas["RecordCollectionName"];
