import { createHash, type Hash } from "node:crypto";
import type { components } from "@cairn/openapi";

/** The shapes of a workspace's records as export_records and import_records move them, from the contract. */
export type EmbeddingStamp = components["schemas"]["EmbeddingStamp"];
export type TransferCollection = components["schemas"]["RecordCollectionName"];
export type ExportedRecord = components["schemas"]["ExportedRecord"];
export type ExportPage = components["schemas"]["ExportPage"];

/**
 * The backup file: NDJSON, one JSON value per line.
 *   line 1        {"type":"header","format":"cairn-backup","version":1,"created_at":...}
 *   then          {"type":"record","workspace":W,"collection":C,"record":{id,document,metadata,embedding}}
 *                 per workspace: tombstones first, then turns, then summaries, then messages (the mailbox's messages
 *                 and read marks) (the order restore needs)
 *   last line     {"type":"manifest",...}: counts per workspace and collection, each collection's embedding
 *                 stamp, the sha256 of each workspace's record lines and of every line before the manifest.
 * A file without its manifest, or whose lines do not match it, is damaged and is not restored. A manifest written
 * before the mailbox was backed up counts no messages: it reads as counting 0.
 */

export const FORMAT = "cairn-backup";
export const VERSION = 1;
/** Restore order: a tombstone must be in place before the turns it keeps from coming back. */
export const COLLECTION_ORDER: readonly TransferCollection[] = ["tombstones", "turns", "summaries", "messages"];

/** Counts of nothing, per collection. */
export const noCounts = (): Record<TransferCollection, number> => ({ tombstones: 0, turns: 0, summaries: 0, messages: 0 });

export interface HeaderLine {
  type: "header";
  format: typeof FORMAT;
  version: number;
  created_at: string;
}

export interface RecordLine {
  type: "record";
  workspace: string;
  collection: TransferCollection;
  record: ExportedRecord;
}

export interface WorkspaceManifest {
  workspace: string;
  counts: Record<TransferCollection, number>;
  /** The stamp of the vectors in the file, per embedded collection. */
  stamps: { turns: EmbeddingStamp | null; summaries: EmbeddingStamp | null };
  /** sha256 of this workspace's record lines, each with its newline. */
  sha256: string;
}

export interface ManifestLine {
  type: "manifest";
  format: typeof FORMAT;
  version: number;
  created_at: string;
  workspaces: WorkspaceManifest[];
  records: number;
  /** sha256 of every line before the manifest, each with its newline. */
  sha256: string;
}

/**
 * The shapes of the lines as read back. A backup is a file anyone can edit: each line is checked against the shape
 * its `type` names before it is used, and `cairn restore` refuses a file with a line that fails.
 */
type JsonObject = Record<string, unknown>;
const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value);
const isCount = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
const isScalar = (value: unknown) => typeof value === "string" || typeof value === "number" || typeof value === "boolean";
const isCollection = (value: unknown): value is TransferCollection => COLLECTION_ORDER.some((c) => c === value);
const isStamp = (value: unknown): value is EmbeddingStamp =>
  isObject(value) && typeof value.model === "string" && typeof value.dimension === "number";

export function isHeaderLine(value: unknown): value is HeaderLine {
  return (
    isObject(value) &&
    value.type === "header" &&
    value.format === FORMAT &&
    typeof value.version === "number" &&
    typeof value.created_at === "string"
  );
}

/** A record as export_records gives it: metadata of scalars, and a vector of numbers or none. */
function isExportedRecord(value: unknown): value is ExportedRecord {
  return (
    isObject(value) &&
    typeof value.id === "string" &&
    typeof value.document === "string" &&
    isObject(value.metadata) &&
    Object.values(value.metadata).every(isScalar) &&
    (value.embedding === undefined || (Array.isArray(value.embedding) && value.embedding.every((x) => typeof x === "number")))
  );
}

export function isRecordLine(value: unknown): value is RecordLine {
  return (
    isObject(value) &&
    value.type === "record" &&
    typeof value.workspace === "string" &&
    isCollection(value.collection) &&
    isExportedRecord(value.record)
  );
}

function isWorkspaceManifest(value: unknown): value is WorkspaceManifest {
  return (
    isObject(value) &&
    typeof value.workspace === "string" &&
    isObject(value.counts) &&
    isCount(value.counts.tombstones) &&
    isCount(value.counts.turns) &&
    isCount(value.counts.summaries) &&
    (value.counts.messages === undefined || isCount(value.counts.messages)) &&
    isObject(value.stamps) &&
    (value.stamps.turns === null || isStamp(value.stamps.turns)) &&
    (value.stamps.summaries === null || isStamp(value.stamps.summaries)) &&
    typeof value.sha256 === "string"
  );
}

export function isManifestLine(value: unknown): value is ManifestLine {
  return (
    isObject(value) &&
    value.type === "manifest" &&
    value.format === FORMAT &&
    typeof value.version === "number" &&
    typeof value.created_at === "string" &&
    Array.isArray(value.workspaces) &&
    value.workspaces.every(isWorkspaceManifest) &&
    isCount(value.records) &&
    typeof value.sha256 === "string"
  );
}

/** Running checksums over the lines as written (or as read back). */
export class Checksums {
  private readonly all: Hash = createHash("sha256");
  private readonly perWorkspace = new Map<string, { hash: Hash; counts: Record<TransferCollection, number> }>();
  records = 0;

  line(text: string, parsed: HeaderLine | RecordLine) {
    this.all.update(`${text}\n`);
    if (parsed.type !== "record") return;
    let entry = this.perWorkspace.get(parsed.workspace);
    if (!entry) {
      entry = { hash: createHash("sha256"), counts: noCounts() };
      this.perWorkspace.set(parsed.workspace, entry);
    }
    entry.hash.update(`${text}\n`);
    entry.counts[parsed.collection]++;
    this.records++;
  }

  /** Counts and digests so far, per workspace; call once. */
  result(): { sha256: string; workspaces: Map<string, { sha256: string; counts: Record<TransferCollection, number> }> } {
    const workspaces = new Map([...this.perWorkspace].map(([w, e]) => [w, { sha256: e.hash.digest("hex"), counts: e.counts }]));
    return { sha256: this.all.digest("hex"), workspaces };
  }
}
