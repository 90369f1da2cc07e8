import { constants } from "node:fs";
import { access, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { writeAtomically } from "./atomic-write.js";
import type { Harness } from "./harnesses.js";
import { LoaderError } from "./index-files.js";
import { hasBrokenBlock, upsertBlock } from "./managed-block.js";

export interface Projection {
  /** Files written or checked, and whether each changed. */
  files: Array<{ path: string; changed: boolean }>;
}

interface PlannedWrite {
  path: string;
  before: string;
  after: string;
}

/**
 * Puts the block where the harness reads it. Every file is planned before any is written, so a refusal
 * (a broken block, an unreadable opencode.json, an unwritable folder) leaves everything as it was.
 */
export async function project(harness: Harness, agent: string, content: string, target: string): Promise<Projection> {
  if (!harness.file) throw new Error(`${harness.name} prints; it has no file`);
  await assertWritable(target);
  const plans: PlannedWrite[] = [];
  const file = join(target, harness.file(agent));
  const before = await readOptional(file);
  if (harness.name === "opencode") {
    plans.push({ path: file, before, after: upsertBlock("", agent, content) });
    plans.push(await planOpencodeConfig(target, relative(target, file)));
  } else {
    if (hasBrokenBlock(before, agent)) {
      throw new LoaderError(`${file} holds a cairn block for ${agent} without its end marker; fix or remove it by hand`);
    }
    plans.push({ path: file, before, after: upsertBlock(before, agent, content) });
  }
  for (const plan of plans) {
    if (plan.after === plan.before) continue;
    await writeAtomically(plan.path, plan.after);
  }
  return { files: plans.map((p) => ({ path: p.path, changed: p.after !== p.before })) };
}

/** OpenCode's `instructions` must list the block's file; the rest of opencode.json is kept as it is. */
async function planOpencodeConfig(target: string, instructionPath: string): Promise<PlannedWrite> {
  const path = join(target, "opencode.json");
  const before = await readOptional(path);
  let config: Record<string, unknown> = { $schema: "https://opencode.ai/config.json" };
  if (before.trim()) {
    try {
      config = JSON.parse(before) as Record<string, unknown>;
    } catch {
      throw new LoaderError(`${path} is not valid JSON; fix it before loading`);
    }
  }
  const instructions = Array.isArray(config.instructions) ? (config.instructions as unknown[]) : [];
  if (instructions.includes(instructionPath)) return { path, before, after: before };
  config.instructions = [...instructions, instructionPath];
  return { path, before, after: `${JSON.stringify(config, null, 2)}\n` };
}

async function readOptional(path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "";
    throw new LoaderError(`${path} cannot be read`);
  }
}

async function assertWritable(target: string): Promise<void> {
  try {
    await access(target, constants.W_OK);
  } catch {
    throw new LoaderError(`the target ${target} does not exist or cannot be written`);
  }
}
