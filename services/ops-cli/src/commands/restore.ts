import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { damageOf, describeDamage, hasPrefixOf, prefixOf, type components } from "@cairn/openapi";
import {
  Checksums,
  FORMAT,
  isHeaderLine,
  isManifestLine,
  isRecordLine,
  noCounts,
  COLLECTION_ORDER,
  VERSION,
  type ExportedRecord,
  type ManifestLine,
  type TransferCollection,
  type WorkspaceManifest,
} from "../backup-format.js";
import { CliError, type Io } from "../io.js";
import { ProgressBar } from "../progress.js";
import type { Target } from "../tokens.js";

/** memory-core takes bodies up to 512 kB: batches stay well below, whatever the records weigh. */
const BATCH_BYTES = 384 * 1024;
const BATCH_RECORDS = 200;

type ImportResult = components["schemas"]["ImportResult"];

export type RestoreTotals = Record<TransferCollection, Omit<ImportResult, "workspace" | "collection">>;

export interface RestoreSummary {
  workspaces: Array<{ workspace: string; totals: RestoreTotals }>;
  records: number;
}

/**
 * Streams the records of a file that `checkFile` passed into each workspace in batches. memory-core skips records it holds already, so a restore can be
 * run again, or after an interruption, without storing anything twice.
 */
export async function restore(
  file: string,
  manifest: ManifestLine,
  targets: Target[],
  only: string | undefined,
  io: Io,
): Promise<RestoreSummary> {
  const wanted = manifest.workspaces.filter((w) => only === undefined || w.workspace === only);
  if (only !== undefined && wanted.length === 0) {
    throw new CliError(`the backup holds no workspace ${only} (it holds ${names(manifest.workspaces)})`, 2);
  }
  const clients = new Map(targets.map((t) => [t.workspace, t.client]));
  const missing = wanted.filter((w) => !clients.has(w.workspace));
  if (missing.length > 0) {
    throw new CliError(
      `no admin token for workspace ${names(missing)} of the backup: pass a --tokens-file that holds one, or --workspace to restore only some`,
      2,
    );
  }
  const totals = new Map(wanted.map((w) => [w.workspace, emptyTotals()]));
  const total = wanted.reduce((n, w) => n + COLLECTION_ORDER.reduce((m, c) => m + w.counts[c], 0), 0);
  const bar = new ProgressBar(io.stderr, "restore", total);
  let done = 0;

  let batch: ExportedRecord[] = [];
  let batchBytes = 0;
  let batchOf: { workspace: string; collection: TransferCollection } | undefined;
  const flush = async () => {
    if (!batchOf || batch.length === 0) return;
    const { workspace, collection } = batchOf;
    const stamps = manifest.workspaces.find((w) => w.workspace === workspace)!.stamps;
    const stamp = collection === "turns" || collection === "summaries" ? stamps[collection] : null;
    const result = await clients.get(workspace)!.call("import_records", { collection, ...(stamp ? { stamp } : {}), records: batch });
    const sum = totals.get(workspace)![collection];
    for (const key of ["stored", "skipped", "forgotten", "reembedded"] as const) sum[key] += result[key];
    done += batch.length;
    bar.update(done);
    batch = [];
    batchBytes = 0;
  };

  for await (const { value: line, number } of lines(file)) {
    if (line.type !== "record") continue;
    // checkFile has passed every line: one that fails now was changed since.
    if (!isRecordLine(line)) throw new CliError(`${file} changed while it was restored: line ${number} is not a record line`);
    if (!totals.has(line.workspace)) continue;
    if (batchOf && (batchOf.workspace !== line.workspace || batchOf.collection !== line.collection)) await flush();
    batchOf = { workspace: line.workspace, collection: line.collection };
    let record = line.record;
    let size = Buffer.byteLength(JSON.stringify(record));
    if (size > BATCH_BYTES && record.embedding) {
      // Too big to send with its vector: memory-core embeds the document again (same model, same vector).
      const { embedding: _dropped, ...rest } = record;
      record = rest;
      size = Buffer.byteLength(JSON.stringify(record));
    }
    if (batch.length >= BATCH_RECORDS || (batch.length > 0 && batchBytes + size > BATCH_BYTES)) await flush();
    batch.push(record);
    batchBytes += size;
  }
  await flush();
  bar.finish();
  return { workspaces: [...totals].map(([workspace, t]) => ({ workspace, totals: t })), records: done };
}

/** Reads the file once: header first, manifest last, every line counted and hashed as the manifest says. */
export async function checkFile(file: string): Promise<ManifestLine> {
  const damaged = (why: string) => new CliError(`${file} is damaged or not a cairn backup: ${why}; nothing was restored`);
  const checksums = new Checksums();
  let manifest: ManifestLine | undefined;
  let first = true;
  for await (const { text, value, number } of lines(file)) {
    if (manifest) throw damaged(`line ${number} follows the manifest`);
    if (first) {
      if (value.type !== "header" || value.format !== FORMAT) throw damaged("the first line is not its header");
      if (value.version !== VERSION) throw damaged(`format version ${String(value.version)} is not ${VERSION}`);
      if (!isHeaderLine(value)) throw damaged(`line ${number} is not a header line`);
      first = false;
    }
    if (value.type === "manifest") {
      if (!isManifestLine(value)) throw damaged(`line ${number} is not a manifest line`);
      // A manifest from before the mailbox was backed up counts no messages.
      manifest = { ...value, workspaces: value.workspaces.map((w) => ({ ...w, counts: { ...noCounts(), ...w.counts } })) };
      continue;
    }
    if (value.type === "record") {
      const record = value;
      if (!isRecordLine(record)) throw damaged(`line ${number} is not a record line`);
      // What memory-core's import would refuse, found before anything is sent: such a file restores nothing.
      const damage = damageOf(record.collection, record.record.metadata, "write");
      if (!hasPrefixOf(record.collection, record.record.id))
        damage.unshift({ field: "id", problem: `does not start with ${prefixOf(record.collection)}` });
      if (damage.length > 0) {
        throw new CliError(
          `${file} holds a damaged record at line ${number} (${record.collection} ${record.record.id} of ${record.workspace}): ` +
            `${describeDamage(damage)}; nothing was restored. A backup holds records as the store held them: run ` +
            "`cairn repair --apply` on the store it was taken from (it moves damaged records into quarantine), then back up again.",
        );
      }
      checksums.line(text, record);
    } else if (number === 1 && isHeaderLine(value)) {
      checksums.line(text, value);
    } else {
      throw damaged(`line ${number} is of unknown type`);
    }
  }
  if (first) throw damaged("it is empty");
  if (!manifest) throw damaged("it has no manifest (the backup did not finish, or the file was cut short)");
  const sums = checksums.result();
  if (sums.sha256 !== manifest.sha256) throw damaged("its sha256 does not match the manifest");
  if (checksums.records !== manifest.records) throw damaged(`it holds ${checksums.records} records, the manifest says ${manifest.records}`);
  for (const w of manifest.workspaces) {
    const found = sums.workspaces.get(w.workspace);
    const counts = found?.counts ?? noCounts();
    for (const collection of COLLECTION_ORDER) {
      if (counts[collection] !== w.counts[collection]) {
        throw damaged(`${w.workspace} holds ${counts[collection]} ${collection}, the manifest says ${w.counts[collection]}`);
      }
    }
    if (found && found.sha256 !== w.sha256) throw damaged(`the sha256 of ${w.workspace} does not match the manifest`);
  }
  return manifest;
}

async function* lines(file: string): AsyncGenerator<{ text: string; value: { type?: unknown; [key: string]: unknown }; number: number }> {
  const input = createReadStream(file, { encoding: "utf8" });
  const opened = new Promise<void>((resolve, reject) => {
    input.once("open", () => resolve());
    input.once("error", reject);
  });
  try {
    await opened;
  } catch (error) {
    throw new CliError(`cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? "error"})`, 2);
  }
  let number = 0;
  for await (const text of createInterface({ input, crlfDelay: Infinity })) {
    number++;
    if (text === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new CliError(`${file} is damaged or not a cairn backup: line ${number} is not JSON; nothing was restored`);
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      throw new CliError(`${file} is damaged or not a cairn backup: line ${number} is not a JSON object; nothing was restored`);
    }
    yield { text, value: value as { type?: unknown }, number };
  }
}

const emptyTotals = (): RestoreTotals => ({
  tombstones: { stored: 0, skipped: 0, forgotten: 0, reembedded: 0 },
  turns: { stored: 0, skipped: 0, forgotten: 0, reembedded: 0 },
  summaries: { stored: 0, skipped: 0, forgotten: 0, reembedded: 0 },
  messages: { stored: 0, skipped: 0, forgotten: 0, reembedded: 0 },
});

const names = (workspaces: WorkspaceManifest[]) => workspaces.map((w) => w.workspace).join(", ") || "none";
