import { RECENCY_VECTOR, type NewRecord, type Scalar } from "../store/chroma-store.js";

/** A forgotten memory's tombstone lives in `recency` under this id: who, when, why — never what. */
export const tombstoneId = (memoryId: string) => `tomb:${memoryId}`;

/**
 * The tombstone of a memory. It keeps the forgotten write's id when one is known, so that the memory's
 * provisional `add` audit entry still stands once the memory is gone (see audit.ts).
 */
export function tombstoneRecord(
  memoryId: string,
  forgotten: { at: Scalar; by: Scalar; reason: Scalar; writeId: Scalar | undefined },
): NewRecord {
  return {
    id: tombstoneId(memoryId),
    embedding: RECENCY_VECTOR,
    document: "",
    metadata: {
      forgotten_at: forgotten.at,
      forgotten_by: forgotten.by,
      reason: forgotten.reason,
      ...(forgotten.writeId !== undefined ? { write_id: forgotten.writeId } : {}),
    },
  };
}
