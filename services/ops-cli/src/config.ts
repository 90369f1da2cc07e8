import { resolve } from "node:path";
import { usageError } from "./io.js";

/** The CLI's settings from its flags and environment: the only reader of the environment. */
export interface CliConfig {
  url: URL;
  /** One admin token (`--token` or `CAIRN_ADMIN_TOKEN`). */
  token: string | undefined;
  /** A tokens file whose admin tokens name the workspaces to work on. */
  tokensFile: string | undefined;
}

export const DEFAULT_URL = "http://127.0.0.1:8790";

export function loadCliConfig(
  flags: { url?: string; token?: string; "tokens-file"?: string },
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
): CliConfig {
  const url = urlOf(flags, env);
  const tokensFile = flags["tokens-file"] ? resolve(cwd, flags["tokens-file"]) : undefined;
  const token = flags.token ?? (tokensFile ? undefined : env.CAIRN_ADMIN_TOKEN?.trim() || undefined);
  if (flags.token !== undefined && tokensFile) throw usageError("give either --token or --tokens-file, not both");
  if (!token && !tokensFile) {
    throw usageError("no admin token: pass --token TOKEN, set CAIRN_ADMIN_TOKEN, or pass --tokens-file FILE");
  }
  return { url, token, tokensFile };
}

/**
 * The settings of an import: one token, whose workspace receives the memories and whose agent writes them. An
 * agent token does (`--token` or `CAIRN_TOKEN`, the variable stdio clients use) and so does an admin token
 * (`CAIRN_ADMIN_TOKEN`). A tokens file names many workspaces, and an import writes into one: it is refused.
 */
export function loadImportConfig(
  flags: { url?: string; token?: string; "tokens-file"?: string },
  env: Readonly<Record<string, string | undefined>>,
): { url: URL; token: string } {
  const url = urlOf(flags, env);
  if (flags["tokens-file"])
    throw usageError("an import writes into one workspace: pass --token TOKEN (an agent or admin token), not --tokens-file");
  const token = flags.token ?? (env.CAIRN_TOKEN?.trim() || env.CAIRN_ADMIN_TOKEN?.trim() || undefined);
  if (!token) throw usageError("no token: pass --token TOKEN (an agent or admin token), or set CAIRN_TOKEN or CAIRN_ADMIN_TOKEN");
  return { url, token };
}

/** memory-core's URL: `--url`, else `CAIRN_URL`, else the default; an http(s) URL or a usage error. */
export function urlOf(flags: { url?: string }, env: Readonly<Record<string, string | undefined>>): URL {
  const rawUrl = flags.url ?? env.CAIRN_URL?.trim() ?? DEFAULT_URL;
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw usageError(`--url must be memory-core's URL, such as ${DEFAULT_URL}, not "${rawUrl}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw usageError(`--url must be an http(s) URL, not "${rawUrl}"`);
  return url;
}
