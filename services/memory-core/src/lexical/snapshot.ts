import { createHash, randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, open, readdir, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { createInterface } from "node:readline";
import type { Facts } from "../records/filters.js";
import type { AnalyzedField } from "./bm25-index.js";
import type { AnalyzedDocument } from "./ranking.js";

/**
 * A lexical index's snapshot: derived data only, so that a restart loads an index instead of paging every
 * record out of Chroma, then catches up from the change feed from where the snapshot stood.
 *
 * The file is text, one JSON value a line: a header (SnapshotHeader), then one line per record as the ranking
 * holds it — `[id, facts, [length, term, freq, term, freq, ...] per field]` — then a trailer
 * `{"end": true, "records": n, "sha256": ...}` whose checksum covers every byte before it. A file without its
 * trailer (cut short), with a line that does not parse, or whose checksum or record count does not match is
 * refused, and so is one whose header does not fit what the reader expects: the index is then built from Chroma.
 * It is written to a temporary file beside it and renamed over it, so a reader never sees half a snapshot.
 */

/** Raise with any change to the file's layout or to what a record line means. */
export const SNAPSHOT_FORMAT = 2;

export interface SnapshotHeader {
  format: number;
  /** text-analysis.ts's ANALYSIS_VERSION when the terms were made. */
  analysis: number;
  workspace: string;
  collection: string;
  /** Chroma's id of the collection (a collection made again has another). */
  collectionId: string;
  /** The embedder the workspace's collections are stamped with. */
  embedding: { model: string; dimension: number };
  /** The ranking's fields, in the order the record lines give them. */
  fields: string[];
  /** Change-feed entries the records reflect: a catch-up starts here. */
  position: number;
  records: number;
}

export type SnapshotRead = { ok: true; header: SnapshotHeader } | { ok: false; reason: string };

/** A stretch of a snapshot's record lines, encoded (`snapshotLines`), and where the next stretch starts (none: the end). */
export interface SnapshotStretch {
  lines: Uint8Array;
  records: number;
  next: number | undefined;
}

/**
 * The record lines of `documents`, UTF-8 in a buffer of their own (so that it can be handed from the thread that
 * holds the records to the one writing the file without a copy). Made where the records are: turning a record
 * into its line costs more than anything else in writing a snapshot, and the request thread does not pay it.
 */
export function snapshotLines(documents: readonly AnalyzedDocument[]): Uint8Array {
  let text = "";
  for (const document of documents) {
    text += `${JSON.stringify([document.id, document.facts, document.analyzed.map((f) => [f.length, ...f.terms])])}\n`;
  }
  return new TextEncoder().encode(text);
}

/**
 * Writes a snapshot atomically: `stretches` yields its record lines a stretch at a time (each awaited, so the
 * thread that holds the records is asked a stretch at a time); `header.records` is filled in from what was written.
 */
export async function writeSnapshot(
  file: string,
  header: Omit<SnapshotHeader, "format" | "records">,
  stretches: AsyncIterable<SnapshotStretch>,
): Promise<{ records: number; bytes: number }> {
  await mkdir(dirname(file), { recursive: true });
  await removeStale(file);
  const temporary = `${file}.${process.pid}-${randomBytes(4).toString("hex")}.tmp`;
  const handle = await open(temporary, "w");
  const hash = createHash("sha256");
  let bytes = 0;
  const write = async (buffer: Uint8Array) => {
    hash.update(buffer);
    bytes += buffer.length;
    await handle.write(buffer);
  };
  let count = 0;
  try {
    // The count is known only at the end: the header gives -1 and the trailer the count, which the reader checks.
    await write(Buffer.from(`${JSON.stringify({ format: SNAPSHOT_FORMAT, ...header, records: -1 })}\n`, "utf8"));
    for await (const stretch of stretches) {
      count += stretch.records;
      if (stretch.lines.length > 0) await write(stretch.lines);
    }
    const trailer = `${JSON.stringify({ end: true, records: count, sha256: hash.digest("hex") })}\n`;
    await handle.write(trailer);
    bytes += Buffer.byteLength(trailer);
    await handle.sync();
    await handle.close();
    await rename(temporary, file);
    return { records: count, bytes };
  } catch (error) {
    await handle.close().catch(() => undefined);
    await rm(temporary, { force: true });
    throw error;
  }
}

/**
 * Reads a snapshot, handing each record to `put` as it comes; `refuse` judges the header (a reason when it does
 * not fit, undefined when it does) before any record is handed over. When the answer is not ok, records may have
 * been handed over already: the caller throws away what it put them into.
 */
export async function readSnapshot(
  file: string,
  refuse: (header: SnapshotHeader) => string | undefined,
  put: (document: AnalyzedDocument) => void | Promise<void>,
): Promise<SnapshotRead> {
  const lines = createInterface({ input: createReadStream(file, { encoding: "utf8" }), crlfDelay: Number.POSITIVE_INFINITY });
  const hash = createHash("sha256");
  let header: SnapshotHeader | undefined;
  let trailer: { end: true; records: number; sha256: string } | undefined;
  let count = 0;
  try {
    for await (const line of lines) {
      if (trailer) return { ok: false, reason: "lines after the trailer" };
      if (!header) {
        hash.update(`${line}\n`);
        header = parseHeader(line);
        if (!header) return { ok: false, reason: "no header" };
        if (header.format !== SNAPSHOT_FORMAT) return { ok: false, reason: `format ${header.format}, not ${SNAPSHOT_FORMAT}` };
        const refused = refuse(header);
        if (refused) return { ok: false, reason: refused };
        continue;
      }
      const value = parse(line);
      if (Array.isArray(value)) {
        hash.update(`${line}\n`);
        const document = toDocument(value, header.fields.length);
        if (!document) return { ok: false, reason: `record ${count + 1} malformed` };
        count += 1;
        await put(document);
        continue;
      }
      if (isTrailer(value)) {
        trailer = value;
        continue;
      }
      return { ok: false, reason: `line ${count + 2} malformed` };
    }
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  } finally {
    lines.close();
  }
  if (!header) return { ok: false, reason: "empty" };
  if (!trailer) return { ok: false, reason: "cut short (no trailer)" };
  if (trailer.records !== count) return { ok: false, reason: `${count} records, the trailer says ${trailer.records}` };
  if (trailer.sha256 !== hash.digest("hex")) return { ok: false, reason: "checksum mismatch" };
  return { ok: true, header: { ...header, records: count } };
}

/** A temporary file left by a writer stopped mid-write (killed) is removed once it is an hour old. */
const STALE_MS = 60 * 60_000;

async function removeStale(file: string): Promise<void> {
  const prefix = `${basename(file)}.`;
  for (const name of await readdir(dirname(file)).catch(() => [] as string[])) {
    if (!name.startsWith(prefix) || !name.endsWith(".tmp")) continue;
    const path = join(dirname(file), name);
    const info = await stat(path).catch(() => undefined);
    if (info && Date.now() - info.mtimeMs > STALE_MS) await rm(path, { force: true });
  }
}

function parse(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

function parseHeader(line: string): SnapshotHeader | undefined {
  const value = parse(line) as Partial<SnapshotHeader> | undefined;
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const ok =
    typeof value.format === "number" &&
    typeof value.analysis === "number" &&
    typeof value.workspace === "string" &&
    typeof value.collection === "string" &&
    typeof value.collectionId === "string" &&
    typeof value.embedding?.model === "string" &&
    typeof value.embedding.dimension === "number" &&
    Array.isArray(value.fields) &&
    Number.isSafeInteger(value.position) &&
    value.position! >= 0;
  return ok ? (value as SnapshotHeader) : undefined;
}

function isTrailer(value: unknown): value is { end: true; records: number; sha256: string } {
  const v = value as { end?: unknown; records?: unknown; sha256?: unknown } | undefined;
  return typeof v === "object" && v !== null && v.end === true && typeof v.records === "number" && typeof v.sha256 === "string";
}

function toDocument(value: unknown[], fieldCount: number): AnalyzedDocument | undefined {
  const [id, facts, fields] = value;
  if (typeof id !== "string" || typeof facts !== "object" || facts === null || Array.isArray(facts)) return undefined;
  if (!Array.isArray(fields) || fields.length !== fieldCount) return undefined;
  const analyzed: AnalyzedField[] = [];
  for (const field of fields as unknown[]) {
    if (!Array.isArray(field) || typeof field[0] !== "number" || field.length % 2 !== 1) return undefined;
    analyzed.push({ length: field[0], terms: field.slice(1) as Array<string | number> });
  }
  return { id, facts: facts as Facts, analyzed };
}
