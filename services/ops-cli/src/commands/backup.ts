import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { chmod, rename, rm } from "node:fs/promises";
import {
  COLLECTION_ORDER,
  Checksums,
  FORMAT,
  noCounts,
  VERSION,
  type EmbeddingStamp,
  type ExportPage,
  type HeaderLine,
  type ManifestLine,
  type RecordLine,
  type WorkspaceManifest,
} from "../backup-format.js";
import { CliError, type Io } from "../io.js";
import { ProgressBar } from "../progress.js";
import type { Target } from "../tokens.js";

const PAGE = 200;
const BACKUP_MODE = 0o600;

export interface BackupSummary {
  file: string;
  workspaces: WorkspaceManifest[];
  records: number;
  bytes: number;
}

/**
 * Streams every record of each workspace into an NDJSON file, page by page, never holding more than a page.
 * Written to `FILE.partial` and renamed when the manifest is written: a file named FILE is always complete.
 */
export async function backup(targets: Target[], file: string, io: Io): Promise<BackupSummary> {
  const partial = `${file}.partial`;
  // A backup holds every memory of its workspaces: its owner's alone. The mode applies when the file is
  // created; the chmod covers a `.partial` left behind by an earlier run, which keeps the mode it had.
  const out = createWriteStream(partial, { encoding: "utf8", mode: BACKUP_MODE });
  const failed = new Promise<never>((_, reject) => out.once("error", reject));
  failed.catch(() => undefined);
  let bytes = 0;
  const checksums = new Checksums();
  const write = async (value: HeaderLine | RecordLine | ManifestLine) => {
    const text = JSON.stringify(value);
    if (value.type !== "manifest") checksums.line(text, value);
    bytes += Buffer.byteLength(text) + 1;
    if (!out.write(`${text}\n`)) await Promise.race([once(out, "drain"), failed]);
  };
  try {
    await Promise.race([once(out, "open"), failed]).catch((error: NodeJS.ErrnoException) => {
      throw new CliError(`cannot write ${file} (${error.code ?? "error"})`);
    });
    await chmod(partial, BACKUP_MODE);
    const createdAt = new Date().toISOString();
    await write({ type: "header", format: FORMAT, version: VERSION, created_at: createdAt });
    const stamps = new Map<string, WorkspaceManifest["stamps"]>();
    for (const { workspace, client } of targets) {
      const workspaceStamps: WorkspaceManifest["stamps"] = { turns: null, summaries: null };
      for (const collection of COLLECTION_ORDER) {
        let after: string | null = null;
        let bar: ProgressBar | undefined;
        let written = 0;
        do {
          const page: ExportPage = await client.call("export_records", {
            collection,
            limit: PAGE,
            include_embeddings: true,
            ...(after ? { after } : {}),
          });
          bar ??= new ProgressBar(io.stderr, `backup ${workspace} ${collection}`, page.total);
          if (collection === "turns" || collection === "summaries") workspaceStamps[collection] = page.stamp as EmbeddingStamp | null;
          for (const record of page.records) await write({ type: "record", workspace, collection, record });
          written += page.records.length;
          bar.setTotal(Math.max(page.total, written));
          bar.update(written);
          after = page.next_cursor;
        } while (after);
        bar?.finish();
      }
      stamps.set(workspace, workspaceStamps);
    }
    const sums = checksums.result();
    const workspaces: WorkspaceManifest[] = targets.map(({ workspace }) => ({
      workspace,
      counts: sums.workspaces.get(workspace)?.counts ?? noCounts(),
      stamps: stamps.get(workspace)!,
      sha256: sums.workspaces.get(workspace)?.sha256 ?? EMPTY_SHA256,
    }));
    await write({
      type: "manifest",
      format: FORMAT,
      version: VERSION,
      created_at: createdAt,
      workspaces,
      records: checksums.records,
      sha256: sums.sha256,
    });
    out.end();
    await Promise.race([once(out, "finish"), failed]);
    await rename(partial, file);
    return { file, workspaces, records: checksums.records, bytes };
  } catch (error) {
    out.destroy();
    await rm(partial, { force: true });
    throw error;
  }
}

const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
