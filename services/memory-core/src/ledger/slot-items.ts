import type { Metadata } from "../store/chroma-store.js";

/**
 * What a slot of a sequence holds (sequences.ts): one entry, its fields flat in the slot, or, in a batch slot,
 * the entries of several writes at once under `items`. A batch slot is how a write batch's change-feed and audit
 * entries take a slot for many turns instead of one each (sequences.ts, `slotsFor`; docs/benchmarks.md, "A store
 * of N turns": "16 writers split into two batches that alternate"): a ledger record for many rather than one per
 * turn.
 *
 * A batch slot's fields are `items` (a JSON array of the entries' fields, each with its own `write_id`: the write
 * whose turn it announces, which is what `stands`, verify and repair match on), the slot's own `stream`, `seq`,
 * `write_id` (the attempt that took the slot) and `recorded_at` (every entry's time), and `voided` (a JSON array of
 * the positions of entries retired by repair_store; a flat slot is retired whole, by `void`). The arrays are JSON
 * strings because a ledger entry's fields are scalars (ledger.ts).
 *
 * Readers take a slot's entries through `itemsOf` and never read `items` themselves, so that a flat slot, a
 * batch slot and an entry stored one key per field read alike.
 */

/** An entry of a slot, as a flat slot's fields read: its stream, position and time are the slot's. */
export type SlotItem = Metadata & {
  /** Its place in the slot: 0 for a flat slot's one entry. */
  item: number;
};

const ITEMS = "items";
const VOIDED = "voided";

/** Whether the slot holds a batch's entries rather than one. */
export const isBatchSlot = (slot: Metadata): boolean => typeof slot[ITEMS] === "string";

/** The slot's entries in their order; a void one (the slot's `void`, or its place in `voided`) says `void: true`. */
export function itemsOf(slot: Metadata): SlotItem[] {
  if (!isBatchSlot(slot)) return [{ ...slot, item: 0 }];
  const voided = voidedOf(slot);
  return (JSON.parse(slot[ITEMS] as string) as Metadata[]).map((fields, item) => {
    const entry: SlotItem = { ...fields, stream: slot.stream!, seq: slot.seq!, recorded_at: slot.recorded_at!, item };
    if (slot.void === true || voided.has(item)) entry.void = true;
    return entry;
  });
}

/** The slot's fields with the entries at `items` retired (or put back): its `void` for a flat slot. */
export function markItems(slot: Metadata, items: ReadonlySet<number>, retired: boolean): Metadata {
  if (!isBatchSlot(slot)) return items.has(0) ? { ...slot, void: retired } : slot;
  const count = (JSON.parse(slot[ITEMS] as string) as unknown[]).length;
  // A batch slot retired whole keeps that in `voided`, so that one entry of it can be put back on its own.
  const voided = slot.void === true ? new Set(Array.from({ length: count }, (_, i) => i)) : voidedOf(slot);
  for (const item of items) {
    if (item < 0 || item >= count) continue;
    if (retired) voided.add(item);
    else voided.delete(item);
  }
  const { void: _void, ...rest } = slot;
  return { ...rest, [VOIDED]: JSON.stringify([...voided].sort((a, b) => a - b)) };
}

function voidedOf(slot: Metadata): Set<number> {
  const voided = slot[VOIDED];
  return new Set(typeof voided === "string" ? (JSON.parse(voided) as number[]) : []);
}

/** A batch slot's payload for `entries` (each with the write id it announces): what Sequences appends. */
export function batchPayload(entries: readonly Metadata[]): Metadata {
  return { [ITEMS]: JSON.stringify(entries) };
}
