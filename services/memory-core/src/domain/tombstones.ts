/** A forgotten memory's tombstone lives in `recency` under this id: who, when, why — never what. */
export const tombstoneId = (memoryId: string) => `tomb:${memoryId}`;
