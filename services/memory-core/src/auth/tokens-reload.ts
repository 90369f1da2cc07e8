import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { Logger } from "../logger.js";
import { parseTokensFile, type TokenEntry, type TokenRegistry } from "./tokens.js";

/**
 * How often the tokens file is read for changes. A changed text is acted on when two looks in a row read it alike,
 * so a token added or revoked is in force within about two intervals.
 */
export const TOKENS_RELOAD_INTERVAL_MS = 1000;

export interface TokensReload {
  /** Reads the file now and acts on a change read alike at the look before; what the timer does at each interval. */
  check(): Promise<void>;
  stop(): void;
}

/**
 * Keeps a registry in step with its tokens file while memory-core serves (`cairn tokens add|revoke` write it):
 * a changed file that parses replaces the whole set, after every workspace it newly names is readied the way a
 * start readies it (`openWorkspace`); a file that does not parse, or a workspace that cannot be readied, leaves
 * the last good set in force and is said once in the log (naming the entry or the workspace, never a token).
 * A change counts only once two looks in a row read the same text: an editor that writes the file in place
 * (truncate, then write) can be read half-written, and such a text is neither applied (a partial list would revoke
 * the tokens it lost) nor refused. A revoked token is refused from the next request on; requests already running
 * finish as they began.
 */
export function watchTokensFile(options: {
  file: string;
  registry: TokenRegistry;
  log: Logger;
  openWorkspace: (workspace: string) => Promise<void>;
  /** The file's text the registry was built from. */
  inForce: string;
  intervalMs?: number;
}): TokensReload {
  const { file, registry, log } = options;
  const digestOf = (text: string) => createHash("sha256").update(text).digest("hex");
  let applied = digestOf(options.inForce);
  let refused: string | undefined;
  let lastLook = applied;
  let running: Promise<void> | undefined;

  const apply = async () => {
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch {
      // A file being replaced by a rename can be missing for an instant: the next interval reads it.
      return;
    }
    const digest = digestOf(text);
    const settled = digest === lastLook;
    lastLook = digest;
    if (digest === applied || !settled) return;
    let entries: TokenEntry[];
    try {
      entries = parseTokensFile(text, "the tokens file");
      const known = new Set(registry.workspaces());
      for (const workspace of new Set(entries.map((e) => e.workspace))) {
        if (!known.has(workspace)) await openWorkspaceOrExplain(options.openWorkspace, workspace);
      }
    } catch (error) {
      if (refused !== digest) {
        refused = digest;
        log.error("tokens file changed but was not applied: the tokens in force stay as they were", {
          file,
          reason: (error as Error).message,
        });
      }
      return;
    }
    registry.replace(entries);
    applied = digest;
    refused = undefined;
    log.info("tokens file applied", { file, tokens: entries.length, workspaces: registry.workspaces().length });
  };

  const check = () => (running ??= apply().finally(() => (running = undefined)));
  const timer = setInterval(() => void check(), options.intervalMs ?? TOKENS_RELOAD_INTERVAL_MS);
  timer.unref();
  return {
    check,
    stop: () => clearInterval(timer),
  };
}

async function openWorkspaceOrExplain(open: (workspace: string) => Promise<void>, workspace: string): Promise<void> {
  try {
    await open(workspace);
  } catch (error) {
    throw new Error(`workspace "${workspace}" could not be readied (${(error as Error).message}); it is tried again at the next interval`);
  }
}
