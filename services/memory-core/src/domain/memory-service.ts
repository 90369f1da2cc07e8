import { randomUUID } from "node:crypto";
import type { Principal } from "../auth/principal.js";
import type { Embedder } from "../embeddings/embedder.js";
import { CairnError, internal, notFound, validationFailed } from "../errors.js";
import type { ChromaStore, ScoredRecord, StoredRecord, Where } from "../store/chroma-store.js";
import { atLeast, semanticConfidence } from "./confidence.js";
import { decodeCursor, encodeCursor, oldestFirst } from "./cursor.js";
import { contentKey, summaryId, turnId } from "./ids.js";
import { and, RecencyIndex } from "./recency.js";
import { agentFlag, summaryDocument, summaryFromRecord, summaryMetadata } from "./summary-record.js";
import { buildTurnRecord, memoryFromRecord, payloadHash, positionOf, turnDocument } from "./turn-record.js";
import type {
  AddMemoryRequest,
  AddMemoryResult,
  Confidence,
  Detail,
  QueryMemoriesRequest,
  QueryMemoriesResult,
  QuerySummariesRequest,
  QuerySummariesResult,
  RecentTurnsResult,
  SessionResult,
  Summary,
} from "./types.js";

export interface RecentTurnsInput {
  agent?: string;
  session_id?: string;
  limit: number;
  before?: string;
  detail: Detail;
}

export interface GetSessionInput {
  session_id: string;
  limit: number;
  after?: string;
  detail: Detail;
}

interface Ranked {
  record: ScoredRecord;
  score: number;
  confidence: Confidence;
  matched_by: Array<"lexical" | "semantic">;
}

export interface AddMemoryOutcome {
  created: boolean;
  result: AddMemoryResult;
}

/** The memory domain: what each operation means, over the store and the embedder, for one principal's scope. */
export class MemoryService {
  private readonly recency: RecencyIndex;
  /** Identical writes in flight on this replica share one store round trip; other replicas are reconciled in Chroma. */
  private readonly inFlight = new Map<string, Promise<StoredRecord>>();

  constructor(
    private readonly store: ChromaStore,
    private readonly embedder: Embedder,
    now: () => number = Date.now,
  ) {
    this.recency = new RecencyIndex(store, now);
  }

  async addMemory(principal: Principal, input: AddMemoryRequest): Promise<AddMemoryOutcome> {
    assertWellFormed(input);
    const keyGiven = input.idempotency_key !== undefined;
    const key = input.idempotency_key ?? contentKey(input.session_id, input.prompt, input.thought, input.response);
    const id = turnId(principal.agent, key);
    const hash = payloadHash(input);
    const flightKey = `${principal.workspace}/${id}`;

    const pending = this.inFlight.get(flightKey);
    if (pending) return replayOrConflict(await pending, hash, keyGiven);

    const writeId = randomUUID();
    const write = this.writeTurn(principal, input, id, key, writeId);
    this.inFlight.set(flightKey, write);
    try {
      const stored = await write;
      if (stored.metadata.write_id === writeId) return { created: true, result: addResult(stored, false) };
      return replayOrConflict(stored, hash, keyGiven);
    } finally {
      this.inFlight.delete(flightKey);
    }
  }

  /** Stores the turn unless its id exists; answers with whatever record holds the id afterwards. */
  private async writeTurn(
    principal: Principal,
    input: AddMemoryRequest,
    id: string,
    idempotencyKey: string,
    writeId: string,
  ): Promise<StoredRecord> {
    const turns = await this.store.collection(principal.workspace, "turns");
    const [existing] = await turns.get({ ids: [id] });
    if (existing) return existing;
    const [embedding] = await this.embedder.embed([turnDocument(input)]);
    if (!embedding) throw internal();
    // The slot comes before the turn: a writer that dies in between leaves a slot that readers skip,
    // never a turn that recency cannot find.
    const { seq, recordedAt } = await this.recency.allocate(principal.workspace, principal.agent, id, writeId);
    const record = buildTurnRecord({ input, agent: principal.agent, idempotencyKey, recordedAt, seq, writeId });
    // Chroma keeps the first record for an id: a racing replica's add is ignored, and reading back tells who won.
    await turns.add([{ id, embedding, ...record }]);
    const [stored] = await turns.get({ ids: [id] });
    if (!stored) throw internal();
    return stored;
  }

  async recentTurns(principal: Principal, input: RecentTurnsInput): Promise<RecentTurnsResult> {
    const agent = input.agent ?? principal.agent;
    const before = input.before === undefined ? undefined : decodeRecencyCursor(input.before, agent);
    const page =
      input.session_id === undefined
        ? await this.recency.newestPage(principal.workspace, agent, input.limit, before)
        : await this.recency.newestPageOfSession(principal.workspace, agent, input.session_id, input.limit, before);
    const last = page.entries.at(-1);
    return {
      turns: page.entries.map((e) => memoryFromRecord(e.turn, input.detail)),
      next_cursor: page.more && last ? encodeCursor({ at: last.seq, id: agent }) : null,
    };
  }

  async queryMemories(principal: Principal, input: QueryMemoriesRequest): Promise<QueryMemoriesResult> {
    const filter: Where[] = [];
    if (input.agent !== undefined) filter.push({ agent: input.agent });
    if (input.session_id !== undefined) filter.push({ session_id: input.session_id });
    if (input.kind !== undefined) filter.push({ kind: input.kind });
    if (input.since !== undefined) filter.push({ recorded_at: { $gte: Date.parse(input.since) } });
    if (input.until !== undefined) filter.push({ recorded_at: { $lt: Date.parse(input.until) } });
    const ranked = await this.search(principal.workspace, "turns", input, input.limit ?? 10, filter);
    const hits = ranked.map(({ record, ...rank }) => ({ ...rank, memory: memoryFromRecord(record, "full") }));
    return { hits, confidence: hits[0]?.confidence ?? "none" };
  }

  async querySummaries(principal: Principal, input: QuerySummariesRequest): Promise<QuerySummariesResult> {
    const filter: Where[] = [];
    if (input.agent !== undefined) filter.push({ [agentFlag(input.agent)]: true });
    if (input.since !== undefined) filter.push({ last_turn_at: { $gte: Date.parse(input.since) } });
    if (input.until !== undefined) filter.push({ first_turn_at: { $lt: Date.parse(input.until) } });
    const ranked = await this.search(principal.workspace, "summaries", input, input.limit ?? 5, filter);
    const hits = ranked.map(({ record, ...rank }) => ({ ...rank, summary: summaryFromRecord(record) }));
    return { hits, confidence: hits[0]?.confidence ?? "none" };
  }

  async getSession(principal: Principal, input: GetSessionInput): Promise<SessionResult> {
    const after = input.after === undefined ? undefined : decodeCursor(input.after, "after");
    const turns = await this.store.collection(principal.workspace, "turns");
    const all = (await turns.get({ where: { session_id: input.session_id } })).sort((a, b) =>
      oldestFirst(positionOf(a), positionOf(b)),
    );
    const rest = after ? all.filter((r) => oldestFirst(after, positionOf(r)) < 0) : all;
    const page = rest.slice(0, input.limit);
    const summaries = await this.store.collection(principal.workspace, "summaries");
    const [summaryRecord] = await summaries.get({ ids: [summaryId(input.session_id)] });
    if (all.length === 0 && !summaryRecord) {
      throw notFound(
        `No session ${input.session_id} in this workspace.`,
        "Check the session_id; query_recent_turns lists the sessions of recent turns.",
      );
    }
    const last = page.at(-1);
    return {
      session_id: input.session_id,
      turns: (await this.withDocuments(principal.workspace, page)).map((r) => memoryFromRecord(r, input.detail)),
      summary: summaryRecord ? summaryFromRecord(summaryRecord) : null,
      next_cursor: rest.length > page.length && last ? encodeCursor(positionOf(last)) : null,
    };
  }

  /** Writes (or replaces) a session's summary. The summarizer's entry point. */
  async putSummary(workspace: string, summary: Omit<Summary, "id">): Promise<Summary> {
    const full: Summary = { ...summary, id: summaryId(summary.session_id) };
    const document = summaryDocument(full);
    const [embedding] = await this.embedder.embed([document]);
    if (!embedding) throw internal();
    const summaries = await this.store.collection(workspace, "summaries");
    await summaries.upsert([{ id: full.id, embedding, document, metadata: summaryMetadata(full) }]);
    return full;
  }

  /** Nearest records to the query, best first, with their confidence; those below `min_confidence` dropped. */
  private async search(
    workspace: string,
    collectionName: "turns" | "summaries",
    request: { query: string; min_confidence?: Confidence },
    limit: number,
    filter: Where[],
  ): Promise<Ranked[]> {
    const [embedding] = await this.embedder.embed([request.query]);
    if (!embedding) throw internal();
    const collection = await this.store.collection(workspace, collectionName);
    const records = await collection.query({ embedding, n: limit, where: and(filter), withDocuments: true });
    return records
      .map((record) => {
        const score = round(1 - record.distance);
        const confidence = semanticConfidence(score, this.embedder.model);
        return { record, score, confidence, matched_by: ["semantic" as const] };
      })
      .filter((ranked) => atLeast(ranked.confidence, request.min_confidence ?? "none"));
  }

  /** Fetches the documents of records listed with metadata only, keeping their order. */
  private async withDocuments(workspace: string, records: StoredRecord[]): Promise<StoredRecord[]> {
    if (records.length === 0) return [];
    const turns = await this.store.collection(workspace, "turns");
    const full = await turns.get({ ids: records.map((r) => r.id), withDocuments: true });
    const byId = new Map(full.map((r) => [r.id, r]));
    return records.map((r) => byId.get(r.id) ?? r);
  }
}

function replayOrConflict(stored: StoredRecord, hash: string, keyGiven: boolean): AddMemoryOutcome {
  if (stored.metadata.payload_sha256 === hash) return { created: false, result: addResult(stored, true) };
  throw new CairnError(
    "idempotency_conflict",
    409,
    `Memory ${stored.id} was stored earlier under this idempotency key with a different payload; nothing was changed.`,
    keyGiven
      ? "Use a new idempotency_key for a new turn; resend the original payload unchanged to get the original record back."
      : "This session already holds a turn with exactly this prompt, thought and response but other fields; pass an idempotency_key to store it as a separate turn.",
  );
}

function addResult(stored: StoredRecord, replayed: boolean): AddMemoryResult {
  return {
    id: stored.id,
    session_id: String(stored.metadata.session_id),
    agent: String(stored.metadata.agent),
    recorded_at: new Date(Number(stored.metadata.recorded_at)).toISOString(),
    replayed,
  };
}

/** Lone UTF-16 surrogates cannot be stored as UTF-8: refuse them rather than store something else. */
function assertWellFormed(input: AddMemoryRequest) {
  const errors = (["prompt", "thought", "response"] as const)
    .filter((field) => !input[field].isWellFormed())
    .map((path) => ({ path, message: "must be well-formed Unicode (it holds a lone surrogate)" }));
  if (errors.length > 0) throw validationFailed(errors);
}

const round = (n: number) => Math.round(n * 1e6) / 1e6;

/** A recency cursor names the agent whose sequence it points into: it cannot be replayed against another. */
function decodeRecencyCursor(cursor: string, agent: string): number {
  const position = decodeCursor(cursor, "before");
  if (position.id !== agent) {
    throw validationFailed(
      [{ path: "before", message: "belongs to another agent's listing" }],
      "Pass the `next_cursor` of the previous page with the same `agent` and `session_id`.",
    );
  }
  return position.at;
}
