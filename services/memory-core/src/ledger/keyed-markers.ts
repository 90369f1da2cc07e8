import type { ChromaStore } from "../store/chroma-store.js";
import { keyedMarkerId, Ledger, tombstoneId } from "./ledger.js";

/**
 * A write with an idempotency key leaves a marker `keyed:<content id>` naming the id it stored the turn under,
 * so that a retry of the same turn without the key replays it (see memory-service.ts).
 */
export class KeyedMarkers {
  private readonly ledger: Ledger;

  constructor(store: ChromaStore) {
    this.ledger = new Ledger(store);
  }

  /**
   * What the ledger holds against writing turn `id`, in one lookup: whether it was forgotten and, for a write
   * without a key (`contentId` given), the turn a write of the same content with a key stored.
   */
  async beforeWrite(
    workspace: string,
    id: string,
    contentId: string | undefined,
  ): Promise<{ forgotten: boolean; keyedTurn: string | undefined }> {
    const ids = contentId === undefined ? [tombstoneId(id)] : [tombstoneId(id), keyedMarkerId(contentId)];
    const found = new Map((await this.ledger.get(workspace, ids)).map((m) => [m.id, m.metadata]));
    const keyedTurn = contentId === undefined ? undefined : found.get(keyedMarkerId(contentId))?.turn_id;
    return { forgotten: found.has(tombstoneId(id)), keyedTurn: typeof keyedTurn === "string" ? keyedTurn : undefined };
  }

  /**
   * `beforeWrite` for many writes in one lookup (a bulk write): the ids of those forgotten, and for each content
   * id asked about, the turn a write of the same content with a key stored.
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

  /** `leave` for many turns in one `add`; the first marker of a content id stays, in Chroma and in the list. */
  async leaveMany(workspace: string, markers: ReadonlyArray<{ contentId: string; turnId: string }>): Promise<void> {
    const first = new Map<string, string>();
    for (const m of markers) if (!first.has(m.contentId)) first.set(m.contentId, m.turnId);
    await this.ledger.insertIfAbsent(
      workspace,
      [...first].map(([contentId, turnId]) => ({ id: keyedMarkerId(contentId), metadata: { turn_id: turnId } })),
    );
  }

  /** Marks that the turn of `contentId` was stored under `turnId`; the first marker of a content id stays. */
  async leave(workspace: string, contentId: string, turnId: string): Promise<void> {
    await this.ledger.insertIfAbsent(workspace, [{ id: keyedMarkerId(contentId), metadata: { turn_id: turnId } }]);
  }
}
