import { readFile } from "node:fs/promises";
import { RestClient } from "@cairn/openapi";
import { plainTokens } from "@cairn/memory-core/tokens-file";
import type { CliConfig } from "./config.js";
import { CliError, usageError } from "./io.js";

/** One workspace the CLI may work on, with the admin token that memory-core confirmed is for it. */
export interface Target {
  workspace: string;
  client: RestClient;
}

/**
 * The workspaces to work on: the one of `--token`, or one per workspace for which the tokens file (the same
 * YAML file memory-core reads) holds an admin token in plain text. Each workspace is named by memory-core's
 * answer to its own token, so one workspace's token never carries another's records.
 */
export async function resolveTargets(config: CliConfig): Promise<Target[]> {
  const tokens = config.token ? [config.token] : await adminTokensOf(config.tokensFile!);
  const targets = new Map<string, Target>();
  for (const token of tokens) {
    const client = new RestClient({ baseUrl: config.url, token });
    // The workspace as memory-core says (never as a file claims), from an admin operation: a token of
    // another role is refused here, before any command's work.
    const { workspace } = await client.call("export_records", { collection: "tombstones", limit: 1, include_embeddings: false });
    if (!targets.has(workspace)) targets.set(workspace, { workspace, client });
  }
  return [...targets.values()].sort((a, b) => (a.workspace < b.workspace ? -1 : 1));
}

async function adminTokensOf(file: string): Promise<string[]> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch {
    throw usageError(`--tokens-file: cannot read ${file}`);
  }
  let entries: ReturnType<typeof plainTokens>;
  try {
    entries = plainTokens(text, file);
  } catch (error) {
    throw usageError(`--tokens-file: ${error instanceof Error ? error.message : String(error)}`);
  }
  const admin = entries.filter((e) => e.role === "admin");
  if (admin.length === 0) {
    throw new CliError(`--tokens-file: ${file} holds no admin token in plain text (token_sha256 entries cannot be used by a client)`, 2);
  }
  // One token per workspace named in the file; memory-core confirms the name for each.
  const byWorkspace = new Map<string, string>();
  for (const e of admin) if (!byWorkspace.has(e.workspace)) byWorkspace.set(e.workspace, e.token);
  return [...byWorkspace.values()];
}
