/** The loader's settings: the only reader of the environment it is given. */
export interface LoaderConfig {
  /** A running memory-core to lint pointers against; unset: no lint. */
  memoryCoreUrl: URL | undefined;
  token: string | undefined;
  /** How long the prompt hook waits for Cairn before it prints nothing. */
  hookTimeoutMs: number;
  /** How long the edit hook takes at most, Cairn and git together, before it prints nothing. */
  editHookTimeoutMs: number;
}

const DEFAULT_HOOK_TIMEOUT_MS = 1500;
/** An edit waits on the hook: it gets less time than a prompt. */
const DEFAULT_EDIT_HOOK_TIMEOUT_MS = 1000;

export function loadLoaderConfig(env: Readonly<Record<string, string | undefined>>): LoaderConfig {
  const raw = env.CAIRN_URL?.trim();
  let memoryCoreUrl: URL | undefined;
  if (raw) {
    try {
      memoryCoreUrl = new URL(raw);
    } catch {
      throw new Error(`CAIRN_URL: must be the memory-core URL, such as http://127.0.0.1:8790, not "${raw}"`);
    }
  }
  const rawTimeout = env.CAIRN_HOOK_TIMEOUT_MS?.trim();
  if (rawTimeout && !/^\d+$/.test(rawTimeout))
    throw new Error(`CAIRN_HOOK_TIMEOUT_MS: must be a whole number of milliseconds, not "${rawTimeout}"`);
  return {
    memoryCoreUrl,
    token: env.CAIRN_TOKEN?.trim() || undefined,
    hookTimeoutMs: rawTimeout ? Number(rawTimeout) : DEFAULT_HOOK_TIMEOUT_MS,
    editHookTimeoutMs: rawTimeout ? Number(rawTimeout) : DEFAULT_EDIT_HOOK_TIMEOUT_MS,
  };
}
