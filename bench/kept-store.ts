import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import yaml from "js-yaml";
import { newToken } from "../services/memory-core/src/auth/tokens.js";

export interface BenchToken {
  token: string;
  workspace: string;
  agent: string;
  role: "admin";
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
 * The data directory of a bench that loads many turns: `--data-dir DIR` keeps it for later runs, otherwise a
 * temporary one. Admin tokens, one per agent (`add_memories` is an operator's call; each writes as its own
 * agent, so recency is per agent); a kept store keeps its tokens, so its agents stay the same across runs.
 */
export async function keptStore(
  dataDirOption: string | undefined,
  options: { prefix: string; agents: number; workspace: string },
): Promise<KeptStore> {
  const kept = dataDirOption !== undefined;
  const dataDir = kept ? resolve(dataDirOption) : await mkdtemp(join(tmpdir(), options.prefix));
  await mkdir(dataDir, { recursive: true });
  const tokensFile = join(dataDir, "tokens.yaml");
  const tokens: BenchToken[] = existsSync(tokensFile)
    ? (yaml.load(await readFile(tokensFile, "utf8")) as { tokens: BenchToken[] }).tokens
    : Array.from({ length: options.agents }, (_, i) => ({
        token: newToken(),
        workspace: options.workspace,
        agent: `agent-${i}`,
        role: "admin" as const,
      }));
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
