import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

export class LoaderError extends Error {
  override name = "LoaderError";
}

export interface AgentIndex {
  agent: string;
  index: string;
  identity: string | undefined;
}

/** `DIR/NAME/MEMORY.md` (required) and `DIR/NAME/identity.md` (optional). */
export async function readAgentIndex(indexDir: string, agent: string): Promise<AgentIndex> {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(agent)) {
    throw new LoaderError(`"${agent}" is not an agent name (letters, digits, ., _ and -)`);
  }
  let agents: string[];
  try {
    agents = (await readdir(indexDir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    throw new LoaderError(`the index folder ${indexDir} cannot be read (set --index-dir)`);
  }
  if (!agents.includes(agent)) {
    throw new LoaderError(
      `unknown agent "${agent}": no folder ${join(indexDir, agent)}${agents.length ? ` (known: ${agents.sort().join(", ")})` : ""}`,
    );
  }
  const index = await readFile(join(indexDir, agent, "MEMORY.md"), "utf8").catch(() => undefined);
  if (index === undefined) throw new LoaderError(`agent "${agent}" has no index: ${join(indexDir, agent, "MEMORY.md")} is missing`);
  const identity = await readFile(join(indexDir, agent, "identity.md"), "utf8").catch(() => undefined);
  return { agent, index, identity };
}

/** The block's content: who the agent is, then its index. */
export function renderBlock(agentIndex: AgentIndex): string {
  const parts = [`# Cairn memory of ${agentIndex.agent}`];
  if (agentIndex.identity?.trim()) parts.push("## Identity", agentIndex.identity.trim());
  parts.push("## Index (lessons and pointers into the archive; query Cairn for the rest)", agentIndex.index.trim());
  return `${parts.join("\n\n")}\n`;
}
