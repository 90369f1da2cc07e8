import { turnFields, type ChromaStore, type StoredRecord, type Summary } from "@cairn/memory-core";

/** One turn of a session, as the summarizer reads it. */
export interface SessionTurn {
  id: string;
  agent: string;
  kind: string;
  prompt: string;
  thought: string;
  response: string;
  /** Server clock (epoch ms): what coverage and idleness are judged by. */
  recordedAt: number;
  /** When it happened (imports), else when it was recorded. */
  happenedAt: number;
  /** The stored vector of the whole turn; centrality starts from it. */
  embedding: number[] | undefined;
}

/** What a summary must cover to be current: every turn there is, up to the newest one recorded. */
export interface Coverage {
  turnCount: number;
  coveredThrough: number;
}

/** The session's turns, oldest first. Chroma filters on session_id; a session is small next to a workspace. */
export async function loadSession(store: ChromaStore, workspace: string, sessionId: string): Promise<SessionTurn[]> {
  const turns = await store.collection(workspace, "turns");
  const records = await turns.get({ where: { session_id: sessionId }, withDocuments: true, withEmbeddings: true });
  return records.map(toSessionTurn).sort((a, b) => a.recordedAt - b.recordedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

function toSessionTurn(record: StoredRecord): SessionTurn {
  const m = record.metadata;
  const recordedAt = Number(m.recorded_at);
  return {
    id: record.id,
    agent: String(m.agent),
    kind: String(m.kind ?? "turn"),
    ...turnFields(record),
    recordedAt,
    happenedAt: typeof m.occurred_at === "number" ? m.occurred_at : recordedAt,
    embedding: record.embedding && record.embedding.length > 0 ? record.embedding : undefined,
  };
}

export function coverageOf(turns: readonly SessionTurn[]): Coverage {
  return { turnCount: turns.length, coveredThrough: Math.max(...turns.map((t) => t.recordedAt)) };
}

/** Unchanged since its summary: same number of turns, none recorded after what it covers. */
export const isCovered = (summary: Pick<Summary, "turn_count" | "covered_through">, coverage: Coverage) =>
  summary.turn_count === coverage.turnCount && Date.parse(summary.covered_through) === coverage.coveredThrough;
