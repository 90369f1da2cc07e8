import { captureHook } from "./capture-hook.js";
import type { Io } from "./cli.js";
import { loadCaptureConfig, loadLoaderConfig } from "./config.js";
import { HARNESSES as TRANSCRIPT_HARNESSES, type Harness } from "./transcript/exchanges.js";

/** `cairn-load --hook capture`: never fails the harness; whatever happens, exit 0, nothing on stdout, what it did on stderr. */
export async function runCaptureHook(io: Io, flags: { harness: string | undefined; project: string | undefined }): Promise<number> {
  try {
    if (flags.harness !== undefined && !(TRANSCRIPT_HARNESSES as readonly string[]).includes(flags.harness)) {
      throw new Error(`--harness is claude-code or codex for a capture, not "${flags.harness}"`);
    }
    const config = loadLoaderConfig(io.env);
    const capture = loadCaptureConfig(io.env);
    const report = await captureHook(io.stdin ? await io.stdin() : "", {
      memoryCoreUrl: config.memoryCoreUrl,
      token: config.token,
      timeoutMs: capture.timeoutMs,
      stateDir: capture.stateDir,
      harness: flags.harness as Harness | undefined,
      projectFlag: flags.project,
      env: io.env,
      cwd: io.cwd,
    });
    io.stderr.write(`cairn-load: capture hook: ${report}\n`);
  } catch (error) {
    io.stderr.write(`cairn-load: capture hook: ${(error as Error).message}\n`);
  }
  return 0;
}
