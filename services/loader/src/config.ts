import { join, resolve } from "node:path";

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

/** The capture hook's settings (`cairn-load --hook capture`). */
export interface CaptureConfig {
  /** How long one capture may take, reading and sending; what is not sent by then is sent at the next capture. */
  timeoutMs: number;
  /** Where it keeps, per transcript, how far it has sent: the user's state folder, outside every project. */
  stateDir: string;
}

const DEFAULT_CAPTURE_TIMEOUT_MS = 5000;

export function loadCaptureConfig(env: Readonly<Record<string, string | undefined>>): CaptureConfig {
  const raw = env.CAIRN_CAPTURE_TIMEOUT_MS?.trim();
  if (raw && (!/^\d+$/.test(raw) || Number(raw) === 0))
    throw new Error(`CAIRN_CAPTURE_TIMEOUT_MS: must be a positive whole number of milliseconds, not "${raw}"`);
  // The XDG base directory rule: $XDG_STATE_HOME, else ~/.local/state.
  const stateHome = env.XDG_STATE_HOME?.trim() || (env.HOME?.trim() ? join(env.HOME.trim(), ".local", "state") : undefined);
  if (!stateHome) throw new Error("neither XDG_STATE_HOME nor HOME is set: no folder to keep the capture position in");
  return { timeoutMs: raw ? Number(raw) : DEFAULT_CAPTURE_TIMEOUT_MS, stateDir: join(resolve(stateHome), "cairn", "capture") };
}
