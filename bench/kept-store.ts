import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import yaml from "js-yaml";
import type { Role } from "../services/memory-core/src/auth/principal.js";
import { newToken } from "../services/memory-core/src/auth/tokens.js";

/** An agent a bench store makes a token for, and the role the token has. */
export interface BenchAgent {
  agent: string;
  role: Role;
}

export interface BenchToken extends BenchAgent {
  token: string;
  workspace: string;
}

export interface KeptStore {
  dataDir: string;
  tokensFile: string;
  /** Whether the store outlives the run (`--data-dir`). */
  kept: boolean;
  tokens: BenchToken[];
  tokenOf: Map<string, string>;
  /** Removes the store unless it is kept. */
  dispose(): Promise<void>;
}

/**
 * Admin agents for a bench that loads many turns: `add_memories` is an operator's call; each writes as its own
 * agent, so recency is per agent.
 */
export const adminAgents = (count: number): BenchAgent[] =>
  Array.from({ length: count }, (_, i) => ({ agent: `agent-${i}`, role: "admin" }));

/**
 * The data directory of a bench that keeps its store: `--data-dir DIR` keeps it for later runs, otherwise a
 * temporary one. A token for each of `agents`; a kept store keeps its tokens, so its agents stay the same across
 * runs.
 */
export async function keptStore(
  dataDirOption: string | undefined,
  options: { prefix: string; agents: readonly BenchAgent[]; workspace: string },
): Promise<KeptStore> {
  const kept = dataDirOption !== undefined;
  const dataDir = kept ? resolve(dataDirOption) : await mkdtemp(join(tmpdir(), options.prefix));
  await mkdir(dataDir, { recursive: true });
  const tokensFile = join(dataDir, "tokens.yaml");
  const tokens: BenchToken[] = existsSync(tokensFile)
    ? (yaml.load(await readFile(tokensFile, "utf8")) as { tokens: BenchToken[] }).tokens
    : options.agents.map(({ agent, role }) => ({ token: newToken(), workspace: options.workspace, agent, role }));
  await writeFile(tokensFile, yaml.dump({ tokens }));
  return {
    dataDir,
    tokensFile,
    kept,
    tokens,
    tokenOf: new Map(tokens.map((t) => [t.agent, t.token])),
    dispose: async () => {
      if (!kept) await rm(dataDir, { recursive: true, force: true });
    },
  };
}
