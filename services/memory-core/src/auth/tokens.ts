import { createHash, randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import yaml from "js-yaml";
import type { Principal, Role } from "./principal.js";

/** Workspace names become Chroma database names. */
export const WORKSPACE_PATTERN = /^[a-z0-9][a-z0-9_-]{1,61}[a-z0-9]$/;
export const AGENT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export class TokensFileError extends Error {
  override name = "TokensFileError";
}

export interface TokenEntry extends Principal {
  tokenSha256: string;
}

/**
 * Resolves bearer tokens to principals. Tokens are compared by their SHA-256, never kept in clear. The set can be
 * replaced while serving (auth/tokens-reload.ts): a request is judged by the set in force when it arrives.
 */
export class TokenRegistry {
  private byHash: Map<string, Principal>;

  constructor(entries: readonly TokenEntry[]) {
    this.byHash = TokenRegistry.index(entries);
  }

  replace(entries: readonly TokenEntry[]): void {
    this.byHash = TokenRegistry.index(entries);
  }

  private static index(entries: readonly TokenEntry[]): Map<string, Principal> {
    return new Map(entries.map((e) => [e.tokenSha256, { workspace: e.workspace, agent: e.agent, role: e.role }]));
  }

  resolve(token: string | undefined): Principal | undefined {
    if (!token) return undefined;
    return this.byHash.get(sha256(token));
  }

  /** The agents of a workspace whose tokens import history: writers of record, not teammates. */
  importers(workspace: string): Set<string> {
    return new Set([...this.byHash.values()].filter((p) => p.workspace === workspace && p.role === "importer").map((p) => p.agent));
  }

  /** The agents that hold a token of the workspace, whatever its role. */
  agents(workspace: string): Set<string> {
    return new Set([...this.byHash.values()].filter((p) => p.workspace === workspace).map((p) => p.agent));
  }

  workspaces(): string[] {
    return [...new Set([...this.byHash.values()].map((p) => p.workspace))].sort();
  }
}

export function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** Parses a tokens file; every problem names the entry, never the token. */
export function parseTokensFile(text: string, source = "tokens file"): TokenEntry[] {
  return entriesOf(text, source).map(({ entry }) => entry);
}

/**
 * The entries of a tokens file that hold their token in plain text, with it: what a client on this machine (the
 * operators' CLI) can call memory-core with. Checked as memory-core checks the file.
 */
export function plainTokens(text: string, source = "tokens file"): Array<TokenEntry & { token: string }> {
  return entriesOf(text, source).flatMap(({ entry, token }) => (token === undefined ? [] : [{ ...entry, token }]));
}

function entriesOf(text: string, source: string): Array<{ entry: TokenEntry; token: string | undefined }> {
  let doc: unknown;
  try {
    doc = yaml.load(text);
  } catch {
    throw new TokensFileError(`${source} is not valid YAML`);
  }
  const list = (doc as { tokens?: unknown } | null)?.tokens;
  if (!Array.isArray(list) || list.length === 0) {
    throw new TokensFileError(`${source} must have a non-empty list \`tokens:\``);
  }
  const seen = new Set<string>();
  return list.map((raw: unknown, index) => {
    const where = `${source}, tokens[${index}]`;
    if (typeof raw !== "object" || raw === null) throw new TokensFileError(`${where} must be a mapping`);
    const e = raw as Record<string, unknown>;
    const token = e.token;
    const hash = e.token_sha256;
    if ((token === undefined) === (hash === undefined)) {
      throw new TokensFileError(`${where} needs exactly one of token or token_sha256`);
    }
    if (token !== undefined && (typeof token !== "string" || token.length < 16)) {
      throw new TokensFileError(`${where}: token must be a string of at least 16 characters`);
    }
    if (hash !== undefined && (typeof hash !== "string" || !/^[0-9a-f]{64}$/.test(hash))) {
      throw new TokensFileError(`${where}: token_sha256 must be 64 lowercase hex digits`);
    }
    if (typeof e.workspace !== "string" || !WORKSPACE_PATTERN.test(e.workspace)) {
      throw new TokensFileError(`${where}: workspace must be 3-63 characters of a-z, 0-9, _ and -`);
    }
    if (typeof e.agent !== "string" || !AGENT_PATTERN.test(e.agent)) {
      throw new TokensFileError(`${where}: agent must be 1-64 characters of letters, digits, ., _ and -`);
    }
    const role = e.role ?? "agent";
    if (role !== "agent" && role !== "admin" && role !== "importer") {
      throw new TokensFileError(`${where}: role must be agent, importer or admin`);
    }
    const tokenSha256 = typeof token === "string" ? sha256(token) : (hash as string);
    if (seen.has(tokenSha256)) throw new TokensFileError(`${where} repeats a token`);
    seen.add(tokenSha256);
    return {
      entry: { tokenSha256, workspace: e.workspace, agent: e.agent, role: role as Role },
      token: typeof token === "string" ? token : undefined,
    };
  });
}

export async function loadTokenRegistry(path: string): Promise<TokenRegistry> {
  return new TokenRegistry(parseTokensFile(await readTokensFile(path)));
}

export async function readTokensFile(path: string): Promise<string> {
  try {
    return await readFile(path, "utf8");
  } catch {
    throw new TokensFileError("the tokens file (CAIRN_TOKENS_FILE) cannot be read");
  }
}

export interface GeneratedToken extends Principal {
  token: string;
}

/**
 * First start of the embedded default: an admin token, an agent token and an importer token (what `cairn import`
 * uses when given none) in workspace `default`.
 */
export async function writeGeneratedTokensFile(path: string): Promise<GeneratedToken[]> {
  const tokens: GeneratedToken[] = [
    { token: newToken(), workspace: "default", agent: "operator", role: "admin" },
    { token: newToken(), workspace: "default", agent: "agent", role: "agent" },
    { token: newToken(), workspace: "default", agent: "importer", role: "importer" },
  ];
  const body = yaml.dump({
    tokens: tokens.map((t) => ({ token: t.token, workspace: t.workspace, agent: t.agent, role: t.role })),
  });
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, `# Cairn bearer tokens: each names a workspace, an agent and a role. Keep this file private.\n${body}`, {
    mode: 0o600,
    flag: "wx",
  });
  return tokens;
}

export function newToken(): string {
  return `cairn_${randomBytes(24).toString("base64url")}`;
}
