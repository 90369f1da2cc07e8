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

  /** Marks that the turn of `contentId` was stored under `turnId`; the first marker of a content id stays. */
  async leave(workspace: string, contentId: string, turnId: string): Promise<void> {
    await this.ledger.insertIfAbsent(workspace, [{ id: keyedMarkerId(contentId), metadata: { turn_id: turnId } }]);
  }
}
