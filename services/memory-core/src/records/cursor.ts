import { createHash } from "node:crypto";
import { invalidCursor } from "../errors.js";

/**
 * Paging cursors, opaque to callers. A cursor is bound to the listing that issued it: the operation's listing
 * (`name`), the workspace, and the parameters that choose what that listing holds (`scope`: its agent, session,
 * collection or filters; never `limit` or `detail`, which only shape a page). It carries a tag of that binding
 * beside its position, and a listing refuses, as `invalid_cursor`, a cursor whose tag is not its own — one of
 * another listing, another workspace or other filters — as well as anything it did not write.
 *
 * The tag is a digest, not a signature: a cursor grants nothing (the workspace comes from the token, and every
 * listing bounds the position it is given, so any position a caller could spell costs what a real one costs).
 * It tells a caller who mixed up cursors so, rather than answering a page of something else; a secret would
 * add a key every replica must share and rotate, for no protection a position needs.
 */
export interface Listing {
  name: "recent" | "session" | "review" | "audit" | "export" | "inbox";
  workspace: string;
  scope: ReadonlyArray<string | number | undefined>;
}

/** A digest of what the cursor is bound to; it keeps the cursor short, whatever the names and filters. */
export const cursorTag = (listing: Listing): string =>
  createHash("sha256")
    .update(JSON.stringify([listing.name, listing.workspace, ...listing.scope.map((v) => v ?? null)]), "utf8")
    .digest("base64url")
    .slice(0, 16);

const issue = (listing: Listing, position: ReadonlyArray<string | number>): string =>
  Buffer.from(JSON.stringify([cursorTag(listing), ...position]), "utf8").toString("base64url");

/** The position a cursor of `listing` carries, as written; refused unless the cursor is this listing's. */
function read(cursor: string, field: string, listing: Listing, size: number): unknown[] {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw invalidCursor(field);
  }
  if (!Array.isArray(decoded) || decoded.length !== size + 1) throw invalidCursor(field);
  const [tag, ...position] = decoded as unknown[];
  if (tag !== cursorTag(listing)) throw invalidCursor(field, "was issued by another listing, workspace or filters");
  return position;
}

const isCount = (value: unknown): value is number => typeof value === "number" && Number.isSafeInteger(value) && value >= 0;

/** A position in a time-ordered listing: the last record returned. */
export interface Position {
  at: number;
  id: string;
}

export const encodeCursor = (listing: Listing, position: Position): string => issue(listing, [position.at, position.id]);

/** Reads back exactly what `encodeCursor` wrote for this listing: a non-negative integer and a non-empty name. */
export function decodeCursor(cursor: string, field: string, listing: Listing): Position {
  const [at, id] = read(cursor, field, listing, 2);
  if (isCount(at) && typeof id === "string" && id.length > 0) return { at, id };
  throw invalidCursor(field);
}

/**
 * A cursor at a place in a listing read by number (an agent's recency slot, an export's offset). Whether the place
 * lies within its listing is for the listing to judge (it alone knows its length: see `assertWithinListing`).
 */
export const encodeOffsetCursor = (listing: Listing, at: number): string => issue(listing, [at]);

export function offsetFrom(cursor: string, field: string, listing: Listing): number {
  const [at] = read(cursor, field, listing, 1);
  if (isCount(at)) return at;
  throw invalidCursor(field);
}

/** A position in a listing whose slots may hold several entries: the slot, and the entry of it to read next. */
export interface ItemPosition {
  at: number;
  item: number;
}

export const encodeItemCursor = (listing: Listing, position: ItemPosition): string => issue(listing, [position.at, position.item]);

/** A cursor at a place given by several counts (a mailbox's place in each stream it merges: see domain/messages.ts). */
export const encodeCountsCursor = (listing: Listing, counts: readonly number[]): string => issue(listing, counts);

/** Reads back the `size` counts `encodeCountsCursor` wrote for this listing. */
export function countsFrom(cursor: string, field: string, listing: Listing, size: number): number[] {
  const counts = read(cursor, field, listing, size);
  if (counts.every(isCount)) return counts as number[];
  throw invalidCursor(field);
}

/** Reads back what `encodeItemCursor` wrote for this listing; an entry past its slot's last reads as the slot's end. */
export function itemPositionFrom(cursor: string, field: string, listing: Listing): ItemPosition {
  const [at, item] = read(cursor, field, listing, 2);
  if (isCount(at) && isCount(item)) return { at, item };
  throw invalidCursor(field);
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
