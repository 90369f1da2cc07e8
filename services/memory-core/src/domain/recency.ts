import type { RecordCollection, StoredRecord, Where } from "../store/chroma-store.js";
import { newestFirst, type Position } from "./cursor.js";
import { positionOf } from "./turn-record.js";

const HOUR_MS = 3_600_000;
const MAX_HINTS = 1_000;

/**
 * Chroma cannot order a `get`, so the newest records are found by scanning windows of `recorded_at`
 * backwards from the cursor: a window that comes back full is halved (it held more than a page's worth),
 * one that comes back short is followed by an older, wider one. The cost follows the page size and the
 * density of recent writes, not the length of the history.
 */
export class RecencyScanner {
  /** Last window width that fit, per filter: a hint that saves halvings, never a source of truth. */
  private readonly widthHints = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  async newestPage(
    collection: RecordCollection,
    filter: Where[],
    limit: number,
    before: Position | undefined,
    hintKey: string,
  ): Promise<{ records: StoredRecord[]; more: boolean }> {
    const want = limit + 1;
    const cap = Math.max(4 * want, 256);
    let width = this.widthHints.get(hintKey) ?? HOUR_MS;
    let upper: { at: number; inclusive: boolean } | undefined = before ? { at: before.at, inclusive: true } : undefined;
    let anchor = before?.at ?? this.now();
    const collected: StoredRecord[] = [];

    for (;;) {
      const lower = anchor - width;
      const window = [...filter, { recorded_at: { $gte: lower } }];
      if (upper) window.push({ recorded_at: { [upper.inclusive ? "$lte" : "$lt"]: upper.at } });
      let batch = await collection.get({ where: and(window), limit: cap });
      if (batch.length >= cap) {
        if (width > 1) {
          width = Math.ceil(width / 2);
          continue;
        }
        // More than `cap` records in one millisecond: take them all.
        batch = await collection.get({ where: and(window) });
      }
      for (const record of batch) {
        if (!before || newestFirst(before, positionOf(record)) < 0) collected.push(record);
      }
      if (collected.length >= want) break;
      upper = { at: lower, inclusive: false };
      anchor = lower;
      const older = await collection.get({ where: and([...filter, { recorded_at: { $lt: lower } }]), limit: 1 });
      if (older.length === 0) break;
      width *= 4;
    }

    this.rememberWidth(hintKey, width);
    collected.sort((a, b) => newestFirst(positionOf(a), positionOf(b)));
    return { records: collected.slice(0, limit), more: collected.length > limit };
  }

  private rememberWidth(key: string, width: number) {
    if (this.widthHints.size >= MAX_HINTS && !this.widthHints.has(key)) this.widthHints.clear();
    this.widthHints.set(key, width);
  }
}

/** Chroma wants `$and` only for two or more clauses. */
export function and(clauses: Where[]): Where | undefined {
  if (clauses.length === 0) return undefined;
  if (clauses.length === 1) return clauses[0];
  return { $and: clauses };
}
