import { keyedMarkerId, tombstoneId, type Ledger } from "./ledger.js";

/**
 * A write with an idempotency key leaves a marker `keyed:<content id>` naming the id it stored the turn under,
 * so that a retry of the same turn without the key replays it (see domain/bulk-writes.ts).
 */
export class KeyedMarkers {
  constructor(private readonly ledger: Ledger) {}

  /**
   * What the ledger holds against writing the turns `ids`, in one lookup: the ids of those forgotten, and for each
   * content id asked about (writes without a key), the turn a write of the same content with a key stored.
   */
  async beforeWrites(
    workspace: string,
    ids: readonly string[],
    contentIds: readonly string[],
  ): Promise<{ forgotten: Set<string>; keyedTurns: Map<string, string> }> {
    const found = new Map(
      (await this.ledger.get(workspace, [...new Set([...ids.map(tombstoneId), ...contentIds.map(keyedMarkerId)])])).map((m) => [
        m.id,
        m.metadata,
      ]),
    );
    const keyedTurns = new Map<string, string>();
    for (const contentId of contentIds) {
      const turn = found.get(keyedMarkerId(contentId))?.turn_id;
      if (typeof turn === "string") keyedTurns.set(contentId, turn);
    }
    return { forgotten: new Set(ids.filter((id) => found.has(tombstoneId(id)))), keyedTurns };
  }

  /**
   * Marks that the turn of each content id was stored under its turn id, in one `add`; the first marker of a
   * content id stays, in Chroma and in the list.
   */
  async leaveMany(workspace: string, markers: ReadonlyArray<{ contentId: string; turnId: string }>): Promise<void> {
    const first = new Map<string, string>();
    for (const m of markers) if (!first.has(m.contentId)) first.set(m.contentId, m.turnId);
    await this.ledger.insertIfAbsent(
      workspace,
      [...first].map(([contentId, turnId]) => ({ id: keyedMarkerId(contentId), metadata: { turn_id: turnId } })),
    );
  }
}
