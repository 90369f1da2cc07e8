/** Where the CLI writes and what it is given: process streams in the bin, capturing streams in tests. */
export interface Io {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown; isTTY?: boolean; columns?: number };
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
}

/** A failure the operator can act on: one line, no stack. `exitCode` 2 is bad usage, 1 anything else. */
export class CliError extends Error {
  override name = "CliError";
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
  }
}

export const usageError = (message: string) => new CliError(message, 2);
