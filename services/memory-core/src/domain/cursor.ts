import { validationFailed } from "../errors.js";

/** A position in a time-ordered listing: the last record returned. Opaque to callers. */
export interface Position {
  at: number;
  id: string;
}

export function encodeCursor(position: Position): string {
  return Buffer.from(JSON.stringify([position.at, position.id]), "utf8").toString("base64url");
}

export function decodeCursor(cursor: string, field: string): Position {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown[];
    if (typeof at === "number" && Number.isSafeInteger(at) && typeof id === "string" && id.length > 0) return { at, id };
  } catch {
    // fall through to the caller-facing error
  }
  throw validationFailed(
    [{ path: field, message: "is not a cursor this server issued" }],
    `Pass the \`next_cursor\` of the previous page unchanged, or omit \`${field}\` to start from the beginning.`,
  );
}

/** Oldest first; ties broken by id so that paging never skips or repeats. */
export const oldestFirst = (a: Position, b: Position) => a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
