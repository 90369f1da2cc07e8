import { ContractError } from "@cairn/openapi";
import { TokensFileError } from "./auth/tokens.js";
import { ConfigError } from "./config.js";
import { DataDirBusyError } from "./embedded/data-dir.js";
import { EmbeddedChromaError } from "./embedded/chroma-server.js";
import { CairnError } from "./errors.js";
import { WarmUpError } from "./runtime.js";

/** One line for an operator: what stopped the start and, where we know it, what to do. */
export function describeStartError(error: unknown): string {
  if (
    error instanceof ConfigError ||
    error instanceof TokensFileError ||
    error instanceof ContractError ||
    error instanceof DataDirBusyError ||
    error instanceof EmbeddedChromaError ||
    error instanceof WarmUpError
  ) {
    return error.message;
  }
  if (error instanceof CairnError) {
    if (error.code === "unavailable" && /cannot be reached/.test(error.detail)) {
      return "Chroma cannot be reached: check CAIRN_CHROMA_URL, or unset it to run the embedded Chroma.";
    }
    return error.hint ? `${error.detail} ${error.hint}` : error.detail;
  }
  return `start failed: ${String((error as Error)?.message ?? error)}`;
}
