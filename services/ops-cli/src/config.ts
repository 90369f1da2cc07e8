import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { plainTokens } from "@cairn/memory-core/tokens-file";
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
 * memory-core's tokens file as `npm start` finds it: `CAIRN_TOKENS_FILE`, else `tokens.yaml` in `CAIRN_DATA_DIR`
 * (default `.cairn`), both against the working directory.
 */
export function defaultTokensFile(env: Readonly<Record<string, string | undefined>>, cwd: string): string {
  const named = env.CAIRN_TOKENS_FILE?.trim();
  if (named) return resolve(cwd, named);
  return resolve(cwd, env.CAIRN_DATA_DIR?.trim() || ".cairn", "tokens.yaml");
}

/**
 * The settings of an import: one token, whose workspace receives the memories and whose agent writes them. The
 * importer token (a role that writes history and is no teammate) is the one meant for it: `--token`, else
 * `CAIRN_IMPORT_TOKEN`, else the importer token of memory-core's tokens file (`defaultTokensFile`; the first
 * start writes one), else an agent's (`CAIRN_TOKEN`) or an admin's (`CAIRN_ADMIN_TOKEN`). A tokens file names
 * many workspaces, and an import writes into one: `--tokens-file` is refused.
 */
export function loadImportConfig(
  flags: { url?: string; token?: string; "tokens-file"?: string },
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
): { url: URL; token: string } {
  const url = urlOf(flags, env);
  if (flags["tokens-file"])
    throw usageError("an import writes into one workspace: pass --token TOKEN (an importer, agent or admin token), not --tokens-file");
  const token =
    flags.token ??
    (env.CAIRN_IMPORT_TOKEN?.trim() ||
      importerTokenOf(defaultTokensFile(env, cwd)) ||
      env.CAIRN_TOKEN?.trim() ||
      env.CAIRN_ADMIN_TOKEN?.trim() ||
      undefined);
  if (!token) {
    throw usageError(
      "no token: pass --token TOKEN, set CAIRN_IMPORT_TOKEN, or start Cairn once here (its tokens file holds an importer token)",
    );
  }
  return { url, token };
}

/** The one importer token a tokens file holds in plain text; none when it holds none, or several (say which with --token). */
function importerTokenOf(file: string): string | undefined {
  let importers: ReturnType<typeof plainTokens>;
  try {
    importers = plainTokens(readFileSync(file, "utf8"), file).filter((e) => e.role === "importer");
  } catch {
    return undefined;
  }
  if (importers.length > 1) throw usageError(`${file} holds ${importers.length} importer tokens: say which with --token TOKEN`);
  return importers[0]?.token;
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
