import { execFile } from "node:child_process";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";

/** The `cairn` CLI as an operator runs it: a child process talking real HTTP to a running memory-core. */

const BIN = fileURLToPath(new URL("../../bin/cairn.mjs", import.meta.url));

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export function cairnCli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      // From a directory of its own: the CLI reads `.cairn/tokens.yaml` under its working directory when given no token.
      { cwd: tmpdir(), env: { PATH: process.env.PATH ?? "", ...env }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
