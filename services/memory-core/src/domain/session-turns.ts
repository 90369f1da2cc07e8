import type { ChromaStore, StoredRecord, Where } from "../store/chroma-store.js";
import type { Condition } from "../records/filters.js";
import type { LexicalIndexes } from "../lexical/indexes.js";

/**
 * A session's turns (of one agent, or all), with their documents, every one acknowledged before the call.
 * The caught-up lexical index keeps turns by session: which they are costs a lookup, and Chroma hands them
 * over by id, where Chroma 1.0.0's filtered `get` scans the whole collection. Only while a write in flight
 * holds the index's catch-up back does Chroma answer.
 */
export class SessionTurns {
  constructor(
    private readonly store: ChromaStore,
    private readonly lexical: LexicalIndexes,
  ) {}

  async list(workspace: string, sessionId: string, agent?: string): Promise<StoredRecord[]> {
    const conditions: Condition[] = [{ field: "session_id", op: "eq", value: sessionId }];
    if (agent !== undefined) conditions.push({ field: "agent", op: "eq", value: agent });
    const index = await this.lexical.snapshot(workspace, "turns", "complete");
    const ids = index?.matching(conditions);
    if (index && ids) {
      // By id: Chroma finds them without the scan its filtered `get` makes.
      const records = await index.records(ids);
      if (records.length === ids.length) return records;
    }
    const where: Where = agent === undefined ? { session_id: sessionId } : { $and: [{ agent }, { session_id: sessionId }] };
    const turns = await this.store.collection(workspace, "turns");
    return turns.get({ where, withDocuments: true });
  }
}
