import { invalidCursor } from "../errors.js";

/** A position in a time-ordered listing: the last record returned. Opaque to callers. */
export interface Position {
  at: number;
  id: string;
}

export function encodeCursor(position: Position): string {
  return Buffer.from(JSON.stringify([position.at, position.id]), "utf8").toString("base64url");
}

/**
 * Reads back exactly what `encodeCursor` writes — a pair of a non-negative integer and a non-empty name —
 * and refuses anything else as `invalid_cursor`. Whether the position lies within its listing is for the
 * listing to judge (it alone knows its length).
 */
export function decodeCursor(cursor: string, field: string): Position {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw invalidCursor(field);
  }
  if (Array.isArray(decoded) && decoded.length === 2) {
    const [at, id] = decoded as unknown[];
    if (typeof at === "number" && Number.isSafeInteger(at) && at >= 0 && typeof id === "string" && id.length > 0) return { at, id };
  }
  throw invalidCursor(field);
}

/**
 * The position of a cursor that the listing of `owner` issued (an agent's recency, the audit log, a collection's
 * export); one another listing issued is refused, so it cannot be replayed against this one.
 */
export function positionFrom(cursor: string, field: string, owner: string, listing: string): number {
  const position = decodeCursor(cursor, field);
  if (position.id !== owner) throw invalidCursor(field, `belongs to another ${listing}`);
  return position.at;
}

/** A position in a listing whose slots may hold several entries: the slot, and the entry of it to read next. */
export interface ItemPosition {
  at: number;
  item: number;
}

/**
 * The cursor of `owner`'s listing for `position`. At a slot's start it is the cursor `positionFrom` reads, so that
 * cursors issued before slots held several entries still page; within a slot the name carries the entry too.
 */
export const encodeItemCursor = (position: ItemPosition, owner: string): string =>
  encodeCursor({ at: position.at, id: position.item === 0 ? owner : `${owner}:${position.item}` });

/**
 * The position of a cursor that `encodeItemCursor` wrote for the listing of `owner`: `owner` at a slot's start,
 * `owner:<entry>` within one. Anything else is refused as `positionFrom` refuses another listing's cursor.
 */
export function itemPositionFrom(cursor: string, field: string, owner: string, listing: string): ItemPosition {
  const position = decodeCursor(cursor, field);
  if (position.id === owner) return { at: position.at, item: 0 };
  const entry = position.id.startsWith(`${owner}:`) ? position.id.slice(owner.length + 1) : "";
  // Only the form the server writes: a slot's first entry has no suffix, so `:0` (or `:01`) was never issued.
  if (/^[1-9][0-9]*$/.test(entry) && Number.isSafeInteger(Number(entry))) return { at: position.at, item: Number(entry) };
  throw invalidCursor(field, `belongs to another ${listing}`);
}

/**
 * A listing read position by position from a cursor refuses one past its length: the server never issued it,
 * and walking to it would cost a lookup per position that never existed.
 */
export function assertWithinListing(position: number | undefined, length: number, field: string): void {
  if (position !== undefined && position > length) throw invalidCursor(field, "points past the end of this listing");
}

/** Oldest first; ties broken by id so that paging never skips or repeats. */
export const oldestFirst = (a: Position, b: Position) => a.at - b.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
