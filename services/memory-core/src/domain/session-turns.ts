import type { Condition } from "../records/filters.js";
import type { LexicalIndexes } from "../lexical/indexes.js";
import type { StoredTurn } from "../records/stored-turn.js";
import type { TurnRepository } from "../records/turn-repository.js";

/**
 * A session's turns (of one agent, or all), with their documents, every one acknowledged before the call.
 * The caught-up lexical index keeps turns by session: which they are costs a lookup, and Chroma hands them
 * over by id, where Chroma 1.0.0's filtered `get` scans the whole collection. Only while a write in flight
 * holds the index's catch-up back does Chroma answer.
 */
export class SessionTurns {
  constructor(
    private readonly turns: TurnRepository,
    private readonly lexical: LexicalIndexes,
  ) {}

  async list(workspace: string, sessionId: string, agent?: string): Promise<StoredTurn[]> {
    const conditions: Condition[] = [{ field: "session_id", op: "eq", value: sessionId }];
    if (agent !== undefined) conditions.push({ field: "agent", op: "eq", value: agent });
    const index = await this.lexical.snapshot(workspace, "turns", "complete");
    const ids = index?.matching(conditions);
    if (index && ids) {
      // By id: Chroma finds them without the scan its filtered `get` makes.
      const records = await index.turns(ids);
      if (records.length === ids.length) return records;
    }
    return this.turns.ofSession(workspace, sessionId, { withText: true, ...(agent === undefined ? {} : { agent }) });
  }
}
