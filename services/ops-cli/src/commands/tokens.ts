import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import yaml from "js-yaml";
import { AGENT_PATTERN, newToken, parseTokensFile, sha256, WORKSPACE_PATTERN, type TokenEntry } from "@cairn/memory-core/tokens-file";
import { writeAtomically } from "@cairn/loader/atomic-write";
import { defaultTokensFile } from "../config.js";
import { CliError, usageError, type Io } from "../io.js";

export const ROLES = ["agent", "importer", "admin"] as const;
type Role = (typeof ROLES)[number];

const HEADER = "# Cairn bearer tokens: each names a workspace, an agent and a role. Keep this file private.\n";

/**
 * The tokens file `cairn tokens` edits: `--tokens-file`, else the one memory-core finds (`defaultTokensFile`).
 * memory-core applies a change within seconds.
 */
export function tokensFilePath(flag: string | undefined, env: Io["env"], cwd: string): string {
  return flag ? resolve(cwd, flag) : defaultTokensFile(env, cwd);
}

interface FileState {
  /** The entries as written, kept byte for byte in meaning (a `token_sha256` entry stays one). */
  raw: Array<Record<string, unknown>>;
  entries: TokenEntry[];
}

async function readState(file: string, missingOk: boolean): Promise<FileState> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch {
    if (missingOk) return { raw: [], entries: [] };
    throw new CliError(`no tokens file at ${file} (start Cairn once, or pass --tokens-file FILE)`);
  }
  let entries: TokenEntry[];
  try {
    entries = parseTokensFile(text, file);
  } catch (error) {
    throw new CliError(`${(error as Error).message}; fix the file first, nothing was changed`);
  }
  const raw = (yaml.load(text) as { tokens: Array<Record<string, unknown>> }).tokens;
  return { raw, entries };
}

/** Through a temporary file and a rename, private to its owner: memory-core never reads half a file. */
async function writeState(file: string, raw: Array<Record<string, unknown>>): Promise<void> {
  const text = `${HEADER}${yaml.dump({ tokens: raw })}`;
  parseTokensFile(text, file);
  await writeAtomically(file, text, { mode: 0o600 });
}

/** Adds a token and prints it once: the file keeps only its SHA-256. */
export async function addToken(
  file: string,
  options: { agent: string | undefined; workspace: string | undefined; role: string | undefined },
  io: Io,
): Promise<void> {
  const { agent } = options;
  if (!agent) throw usageError("tokens add: --agent NAME is required");
  if (!AGENT_PATTERN.test(agent)) throw usageError(`tokens add: --agent must be 1-64 characters of letters, digits, ., _ and -`);
  const role = (options.role ?? "agent") as Role;
  if (!(ROLES as readonly string[]).includes(role)) throw usageError(`tokens add: --role must be one of ${ROLES.join(", ")}`);
  const state = await readState(file, true);
  const workspace = options.workspace ?? onlyWorkspace(state.entries, "tokens add") ?? "default";
  if (!WORKSPACE_PATTERN.test(workspace)) throw usageError("tokens add: --workspace must be 3-63 characters of a-z, 0-9, _ and -");
  if (state.entries.some((e) => e.agent === agent && e.workspace === workspace)) {
    throw new CliError(
      `agent "${agent}" already has a token in workspace "${workspace}": to replace it, cairn tokens revoke --agent ${agent} --workspace ${workspace}, then add`,
    );
  }
  const token = newToken();
  await writeState(file, [...state.raw, { token_sha256: sha256(token), workspace, agent, role }]);
  io.stderr.write(`added ${role} "${agent}" in workspace "${workspace}" to ${file}; memory-core applies it within seconds.\n`);
  io.stderr.write("The token is shown this once (the file keeps only its SHA-256):\n");
  io.stdout.write(`${token}\n`);
}

export async function listTokens(file: string, json: boolean, io: Io): Promise<void> {
  const { raw, entries } = await readState(file, false);
  const rows = entries.map((e, i) => ({
    workspace: e.workspace,
    agent: e.agent,
    role: e.role,
    stored: typeof raw[i]?.token === "string" ? "plain" : "sha256",
    fingerprint: e.tokenSha256.slice(0, 8),
  }));
  if (json) {
    io.stdout.write(`${JSON.stringify(rows)}\n`);
    return;
  }
  io.stdout.write(`${"workspace".padEnd(24)}${"agent".padEnd(24)}${"role".padEnd(8)}${"stored".padEnd(8)}fingerprint\n`);
  for (const r of rows) {
    io.stdout.write(`${r.workspace.padEnd(24)}${r.agent.padEnd(24)}${r.role.padEnd(8)}${r.stored.padEnd(8)}${r.fingerprint}\n`);
  }
}

export async function revokeToken(
  file: string,
  options: { agent: string | undefined; workspace: string | undefined },
  io: Io,
): Promise<void> {
  const { agent } = options;
  if (!agent) throw usageError("tokens revoke: --agent NAME is required");
  const state = await readState(file, false);
  const matching = state.entries.filter((e) => e.agent === agent && (options.workspace === undefined || e.workspace === options.workspace));
  if (matching.length === 0) {
    throw new CliError(`no token of agent "${agent}"${options.workspace ? ` in workspace "${options.workspace}"` : ""} in ${file}`);
  }
  const workspaces = [...new Set(matching.map((e) => e.workspace))];
  if (workspaces.length > 1) {
    throw usageError(`tokens revoke: agent "${agent}" has tokens in ${workspaces.join(", ")}: name one with --workspace`);
  }
  const kept = state.raw.filter((_, i) => !matching.includes(state.entries[i]!));
  if (kept.length === 0) throw new CliError("these are the file's last tokens: memory-core needs at least one; add another first");
  await writeState(file, kept);
  io.stderr.write(
    `revoked ${matching.length} token${matching.length === 1 ? "" : "s"} of "${agent}" in workspace "${workspaces[0]}"; ` +
      "memory-core refuses it within seconds.\n",
  );
}

function onlyWorkspace(entries: readonly TokenEntry[], command: string): string | undefined {
  const workspaces = [...new Set(entries.map((e) => e.workspace))];
  if (workspaces.length > 1) throw usageError(`${command}: the file names workspaces ${workspaces.join(", ")}: name one with --workspace`);
  return workspaces[0];
}
