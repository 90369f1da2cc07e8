import { randomBytes } from "node:crypto";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join, basename } from "node:path";

/**
 * Writes through a temporary file in the same folder and a rename: a reader (a harness, memory-core) sees the old
 * file or the new one, never half of one. The folder is made if missing; `mode` sets the new file's permissions.
 */
export async function writeAtomically(path: string, content: string, options: { mode?: number } = {}): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(4).toString("hex")}.tmp`);
  try {
    await writeFile(temporary, content, { flag: "wx", ...(options.mode === undefined ? {} : { mode: options.mode }) });
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
