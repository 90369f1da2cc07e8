import { validationFailed } from "./errors.js";

/**
 * How deep a request's JSON may nest. The contract's deepest input is a few levels; validators and the MCP
 * SDK's schema checks recurse once per level, so a body nested thousands deep would overflow the stack
 * before it could be refused. Checked first, on every transport.
 */
export const MAX_INPUT_DEPTH = 64;

/** Refuses input nested deeper than `MAX_INPUT_DEPTH`; iterative, so any depth is judged without recursion. */
export function assertInputDepth(input: unknown): void {
  const pending: Array<[unknown, number]> = [[input, 1]];
  while (pending.length > 0) {
    const [value, depth] = pending.pop()!;
    if (typeof value !== "object" || value === null) continue;
    if (depth > MAX_INPUT_DEPTH) {
      throw validationFailed(
        [{ path: "", message: `is nested deeper than ${MAX_INPUT_DEPTH} levels` }],
        `No input of this contract nests more than a few levels; send the fields the contract (GET /openapi.json) describes, at most ${MAX_INPUT_DEPTH} levels deep.`,
      );
    }
    for (const child of Object.values(value)) pending.push([child, depth + 1]);
  }
}
