import type { OperationInput, OperationOutput } from "@cairn/openapi";
import type { Principal } from "../auth/principal.js";
import type { Embedder } from "../embeddings/embedder.js";
import type { Logger } from "../logger.js";
import { internal, notFound, validationFailed } from "../errors.js";
import { AuditLog, replacementEntry } from "../ledger/audit-log.js";
import { ChangeFeed } from "../ledger/change-feed.js";
import { KeyedMarkers } from "../ledger/keyed-markers.js";
import { Sequences } from "../ledger/sequences.js";
import { Verifications } from "../ledger/verifications.js";
import { EMBEDDED_COLLECTIONS, type ChromaStore, type StoredRecord } from "../store/chroma-store.js";
import { bestOf } from "../retrieval/confidence.js";
import type { Condition } from "../retrieval/filters.js";
import {
  decodeCursor,
  encodeCursor,
  encodeItemCursor,
  encodeOffsetCursor,
  itemPositionFrom,
  offsetFrom,
  oldestFirst,
  type Listing,
} from "../records/cursor.js";
import { summaryId } from "../records/ids.js";
import { Corrections, verdictState, type Tombstone } from "./corrections.js";
import { LexicalIndexes, type LexicalStats, type SnapshotOptions } from "../lexical/indexes.js";
import { RecencyIndex } from "./recency.js";
import { IntegrityCheck } from "../admin/integrity.js";
import { RecordExport } from "../admin/record-export.js";
import { RecordImport } from "../admin/record-import.js";
import { Reembedding } from "../admin/reembedding.js";
import { HybridRetrieval } from "../retrieval/hybrid-retrieval.js";
import { DEFAULT_TUNING, type RetrievalTuning } from "../retrieval/retrieval-tuning.js";
import { briefOf, listingText, snippetText } from "../records/memory-brief.js";
import { SessionTurns } from "./session-turns.js";
import { agentFlag, summaryDocument, summaryFromRecord, summaryMetadata } from "../records/summary-record.js";
import { memoryFromRecord, parseList, positionOf, reviewOf } from "../records/turn-record.js";
import { TeamStatus } from "./team-status.js";
import { assessChange } from "./change-assessment.js";
import { writeAdvice } from "../records/write-advice.js";
import { possibleSupersessions } from "./supersession-candidates.js";
import { BulkWrites, type AddMemoriesResult } from "./bulk-writes.js";
import type { AddMemoryOutcome } from "./turn-writes.js";
import type {
  AddMemoryRequest,
  Correction,
  Detail,
  ExportPage,
  ImportRequest,
  ImportResult,
  IntegrityReport,
  Memory,
  MemoryBrief,
  QueryMemoriesResult,
  QuerySummariesResult,
  RecentTurnsResult,
  ReembedProgress,
  RepairReport,
  SessionResult,
  Summary,
} from "../records/types.js";

export type { AddMemoryOutcome } from "./turn-writes.js";

export type NewSummary = Omit<Summary, "id" | "covered_through" | "dropped"> & { covered_through?: string; dropped?: Summary["dropped"] };

/** The memory domain: what each operation means, over the store and the embedder, for one principal's scope. */
export class MemoryService {
  private readonly sequences: Sequences;
  private readonly feed: ChangeFeed;
  private readonly keyedMarkers: KeyedMarkers;
  private readonly recency: RecencyIndex;
  private readonly retrieval: HybridRetrieval;
  private readonly lexical: LexicalIndexes;
  private readonly sessions: SessionTurns;
  private readonly corrections: Corrections;
  private readonly audit: AuditLog;
  private readonly exports: RecordExport;
  private readonly imports: RecordImport;
  private readonly integrity: IntegrityCheck;
  private readonly reembedding: Reembedding;
  private readonly team: TeamStatus;
  private readonly verifications: Verifications;
  private readonly bulk: BulkWrites;
  private readonly log: Logger | undefined;
  private readonly now: () => number;

  constructor(
    private readonly store: ChromaStore,
    private readonly embedder: Embedder,
    options: {
      now?: () => number;
      tuning?: RetrievalTuning;
      log?: Logger;
      snapshots?: SnapshotOptions;
      /** The agents of a workspace that import history (importer tokens): not teammates in query_team_status. */
      importers?: (workspace: string) => ReadonlySet<string>;
    } = {},
  ) {
    const now = options.now ?? Date.now;
    this.now = now;
    const tuning = options.tuning ?? DEFAULT_TUNING;
    this.sequences = new Sequences(store, now);
    this.feed = new ChangeFeed(this.sequences);
    this.keyedMarkers = new KeyedMarkers(store);
    this.lexical = new LexicalIndexes(store, this.sequences, tuning, {
      now,
      ...(options.log ? { log: options.log } : {}),
      ...(options.snapshots ? { snapshots: options.snapshots } : {}),
    });
    this.sessions = new SessionTurns(store, this.lexical);
    this.recency = new RecencyIndex(store, this.sequences, this.sessions);
    this.corrections = new Corrections(store, this.sequences, now);
    this.audit = new AuditLog(store, this.sequences);
    this.retrieval = new HybridRetrieval(store, embedder, this.lexical, tuning);
    this.exports = new RecordExport(store);
    this.imports = new RecordImport(store, embedder, this.sequences, this.audit);
    this.integrity = new IntegrityCheck(store, this.sequences, this.audit, now);
    this.reembedding = new Reembedding(store, embedder);
    this.team = new TeamStatus(this.lexical, this.recency, options.importers ?? (() => new Set()));
    this.verifications = new Verifications(store);
    this.bulk = new BulkWrites(store, embedder, this.sequences, this.keyedMarkers, this.corrections, this.audit);
    this.log = options.log;
  }

  /** Stores the turn (once, whatever the retries) and says how it will recall, when it will recall badly. */
  async addMemory(principal: Principal, request: AddMemoryRequest): Promise<AddMemoryOutcome> {
    // Concurrent calls on this replica are written together, each judged as if alone (bulk-writes.ts).
    const outcome = await this.bulk.writeOne(principal, request);
    const advice = writeAdvice(request);
    const possible = await possibleSupersessions(this.retrieval, principal.workspace, request, outcome.result.id, this.now()).catch(
      (error: unknown) => {
        // The write is stored: a failed look for earlier decisions costs the hint, never the write.
        this.log?.warn("no look for decisions a write may supersede", { error: String(error) });
        return [];
      },
    );
    return {
      ...outcome,
      result: {
        ...outcome.result,
        ...(advice.length > 0 ? { advice } : {}),
        ...(possible.length > 0 ? { possible_supersedes: possible } : {}),
      },
    };
  }

  /** Many turns, each stored as addMemory stores it, in few Chroma requests; one result per item (see bulk-writes.ts). */
  addMemories(principal: Principal, requests: readonly AddMemoryRequest[]): Promise<AddMemoriesResult> {
    return this.bulk.write(principal, requests);
  }

  async recentTurns(principal: Principal, input: OperationInput<"query_recent_turns">): Promise<RecentTurnsResult> {
    const agent = input.agent ?? principal.agent;
    const listing: Listing = { name: "recent", workspace: principal.workspace, scope: [agent, input.session_id] };
    const before = input.before === undefined ? undefined : offsetFrom(input.before, "before", listing);
    const page =
      input.session_id === undefined
        ? await this.recency.newestPage(principal.workspace, agent, input.limit, before)
        : await this.recency.newestPageOfSession(principal.workspace, agent, input.session_id, input.limit, before);
    const last = page.entries.at(-1);
    return {
      turns: page.entries.map((e) => shown(e.turn, input.detail)),
      next_cursor: page.more && last ? encodeOffsetCursor(listing, last.seq) : null,
    };
  }

  async queryMemories(principal: Principal, input: OperationInput<"query_raw_memories">): Promise<QueryMemoriesResult> {
    const conditions: Condition[] = [];
    if (input.agent !== undefined) conditions.push({ field: "agent", op: "eq", value: input.agent });
    if (input.session_id !== undefined) conditions.push({ field: "session_id", op: "eq", value: input.session_id });
    if (input.kind !== undefined) conditions.push({ field: "kind", op: "eq", value: input.kind });
    if (input.since !== undefined) conditions.push({ field: "recorded_at", op: "gte", value: Date.parse(input.since) });
    if (input.until !== undefined) conditions.push({ field: "recorded_at", op: "lt", value: Date.parse(input.until) });
    if (input.check_status !== undefined) conditions.push({ field: "check_status", op: "eq", value: input.check_status });
    if (input.review_state !== undefined) conditions.push({ field: "review_state", op: "eq", value: input.review_state });
    if (!input.include_superseded) {
      // Valid at the instant asked about: begun by then, not yet superseded then.
      const at = input.as_of === undefined ? this.now() : Date.parse(input.as_of);
      conditions.push({ field: "valid_until", op: "gt", value: at }, { field: "valid_from", op: "lte", value: at });
    }
    const ranked = await this.retrieval.search(principal.workspace, "turns", {
      query: input.query,
      limit: input.limit ?? 10,
      mode: input.mode ?? "hybrid",
      minConfidence: input.min_confidence ?? "none",
      conditions,
    });
    const detail = input.detail ?? "brief";
    const hits = ranked.map(({ record, ...rank }) => ({
      ...rank,
      memory: detail === "brief" ? briefOf(record, snippetText(record, input.query)) : memoryFromRecord(record, "full"),
    }));
    return { hits, confidence: bestOf(hits.map((h) => h.confidence)) };
  }

  async querySummaries(principal: Principal, input: OperationInput<"query_summaries">): Promise<QuerySummariesResult> {
    const conditions: Condition[] = [];
    if (input.agent !== undefined) conditions.push({ field: agentFlag(input.agent), op: "eq", value: true });
    if (input.since !== undefined) conditions.push({ field: "last_turn_at", op: "gte", value: Date.parse(input.since) });
    if (input.until !== undefined) conditions.push({ field: "first_turn_at", op: "lt", value: Date.parse(input.until) });
    const ranked = await this.retrieval.search(principal.workspace, "summaries", {
      query: input.query,
      limit: input.limit ?? 5,
      mode: input.mode ?? "hybrid",
      minConfidence: input.min_confidence ?? "none",
      conditions,
    });
    const hits = ranked.map(({ record, ...rank }) => ({ ...rank, summary: summaryFromRecord(record) }));
    return { hits, confidence: bestOf(hits.map((h) => h.confidence)) };
  }

  async getSession(principal: Principal, input: OperationInput<"get_session">): Promise<SessionResult> {
    const listing: Listing = { name: "session", workspace: principal.workspace, scope: [input.session_id] };
    const after = input.after === undefined ? undefined : decodeCursor(input.after, "after", listing);
    const all = (await this.sessions.list(principal.workspace, input.session_id)).sort((a, b) => oldestFirst(positionOf(a), positionOf(b)));
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
      turns: page.map((r) => shown(r, input.detail)),
      summary: summaryRecord ? summaryFromRecord(summaryRecord) : null,
      next_cursor: rest.length > page.length && last ? encodeCursor(listing, positionOf(last)) : null,
    };
  }

  async getMemory(principal: Principal, memoryId: string): Promise<Memory> {
    return memoryFromRecord(await this.corrections.existing(principal.workspace, memoryId), "full");
  }

  async supersedeMemory(principal: Principal, input: OperationInput<"supersede_memory">): Promise<Memory> {
    const memoryId = input.memory_id;
    const record = await this.corrections.existing(principal.workspace, memoryId);
    if (input.by !== undefined) {
      if (input.by === memoryId) throw validationFailed([{ path: "by", message: "cannot be the memory itself" }]);
      await this.corrections.existing(principal.workspace, input.by);
    }
    // The same correction again (a retry) answers the memory as it stands and records nothing more.
    if (repeats(record, { kind: "superseded", reason: input.reason, by: principal.agent, replaced_by: input.by }))
      return memoryFromRecord(record, "full");
    const { record: superseded, linked } = await this.corrections.supersede(principal, record, input.by, input.reason);
    await this.audit.appendMany(principal.workspace, [
      { action: "supersede", actor: principal.agent, memoryId, reason: input.reason },
      ...(linked ? [replacementEntry(principal.agent, linked, memoryId, input.reason)] : []),
    ]);
    return memoryFromRecord(superseded, "full");
  }

  async markOutdated(principal: Principal, input: OperationInput<"mark_outdated">): Promise<Memory> {
    const memoryId = input.memory_id;
    const record = await this.corrections.existing(principal.workspace, memoryId);
    if (repeats(record, { kind: "outdated", reason: input.reason, by: principal.agent, commit: input.commit }))
      return memoryFromRecord(record, "full");
    const marked = await this.corrections.markOutdated(principal, record, input.reason, input.commit);
    await this.audit.append(principal.workspace, { action: "mark_outdated", actor: principal.agent, memoryId, reason: input.reason });
    return memoryFromRecord(marked, "full");
  }

  async reviewMemory(principal: Principal, input: OperationInput<"review_memory">): Promise<Memory> {
    const record = await this.corrections.existing(principal.workspace, input.memory_id);
    const state = verdictState(input.decision);
    // The same verdict again (a retry) answers the memory as it stands and records nothing more.
    const review = reviewOf(record.metadata);
    if (review?.state === state && review.by === principal.agent && review.reason === input.reason) return memoryFromRecord(record, "full");
    const reviewed = await this.corrections.review(principal, record, input.decision, input.reason);
    await this.audit.append(principal.workspace, {
      action: input.decision,
      actor: principal.agent,
      memoryId: record.id,
      reason: input.reason,
    });
    return memoryFromRecord(reviewed, "full");
  }

  /** The memories waiting for review, oldest first, a page after the `after` cursor's position. */
  async reviewQueue(principal: Principal, input: OperationInput<"query_review_queue">): Promise<OperationOutput<"query_review_queue">> {
    const listing: Listing = { name: "review", workspace: principal.workspace, scope: [] };
    const after = input.after === undefined ? undefined : decodeCursor(input.after, "after", listing);
    const index = await this.lexical.snapshot(principal.workspace, "turns");
    // Ordered on the index's metadata; only the page is fetched whole.
    const waiting = (index.matching([{ field: "review_state", op: "eq", value: "pending" }]) ?? [])
      .flatMap((id) => {
        const metadata = index.metadata(id);
        return metadata ? [{ id, metadata }] : [];
      })
      .filter((r) => !after || oldestFirst(after, positionOf(r)) < 0)
      .sort((a, b) => oldestFirst(positionOf(a), positionOf(b)));
    const page = await index.records(waiting.slice(0, input.limit).map((r) => r.id));
    const last = page.at(-1);
    return {
      memories: page.map((r) => briefOf(r, listingText(r))),
      next_cursor: waiting.length > page.length && last ? encodeCursor(listing, positionOf(last)) : null,
    };
  }

  async forgetMemory(principal: Principal, memoryId: string, reason: string): Promise<Tombstone> {
    const { tombstone, forgottenNow } = await this.corrections.forget(principal, memoryId, reason);
    if (forgottenNow) await this.audit.append(principal.workspace, { action: "forget", actor: principal.agent, memoryId, reason });
    return tombstone;
  }

  async auditLog(principal: Principal, input: OperationInput<"get_audit_log">): Promise<OperationOutput<"get_audit_log">> {
    const filter = {
      ...(input.memory_id !== undefined ? { memoryId: input.memory_id } : {}),
      ...(input.agent !== undefined ? { agent: input.agent } : {}),
      ...(input.since !== undefined ? { since: Date.parse(input.since) } : {}),
      ...(input.until !== undefined ? { until: Date.parse(input.until) } : {}),
    };
    // Instants as numbers, so that two spellings of one instant page the same listing.
    const listing: Listing = {
      name: "audit",
      workspace: principal.workspace,
      scope: [filter.memoryId, filter.agent, filter.since, filter.until],
    };
    const from = input.after === undefined ? { at: 0, item: 0 } : itemPositionFrom(input.after, "after", listing);
    const page = await this.audit.read(principal.workspace, filter, input.limit, from);
    return { entries: page.entries, next_cursor: page.next === null ? null : encodeItemCursor(listing, page.next) };
  }

  /** Each agent's newest turn, its next step and its failed checks still standing; most recently active first. */
  teamStatus(principal: Principal, input: OperationInput<"query_team_status">): Promise<OperationOutput<"query_team_status">> {
    return this.team.query(principal.workspace, input.limit);
  }

  /** How the changes most like an intended one ended: reverted, fixed, outdated, failed checks, or stood. */
  assessChange(principal: Principal, input: OperationInput<"assess_change">): Promise<OperationOutput<"assess_change">> {
    return assessChange(this.retrieval, principal.workspace, input);
  }

  /** One page of a collection's records as stored, for backups. */
  exportRecords(principal: Principal, input: OperationInput<"export_records">): Promise<ExportPage> {
    return this.exports.page(principal.workspace, input);
  }

  /** Exported records stored back; what is present already is skipped. */
  importRecords(principal: Principal, request: ImportRequest): Promise<ImportResult> {
    return this.imports.run(principal, request);
  }

  async verifyStore(principal: Principal): Promise<IntegrityReport> {
    await this.verifications.reserve(principal.workspace);
    const report = await this.integrity.run(principal.workspace);
    await this.verifications.record(principal.workspace, {
      at: new Date(this.now()).toISOString(),
      by: principal.agent,
      healthy: report.healthy,
      problem_counts: report.problem_counts,
    });
    return report;
  }

  /** Counts and the last integrity check: what an operator's status page shows without a full read. */
  async storeStatus(principal: Principal): Promise<OperationOutput<"get_store_status">> {
    const count = async (name: "turns" | "summaries") => (await this.store.collection(principal.workspace, name)).count();
    const [turns, summaries, lastVerify] = await Promise.all([
      count("turns"),
      count("summaries"),
      this.verifications.last(principal.workspace),
    ]);
    return { workspace: principal.workspace, turns, summaries, last_verify: lastVerify };
  }

  /** What verifyStore finds in the logs, mended when `apply` (see integrity.ts). */
  repairStore(principal: Principal, apply: boolean): Promise<RepairReport> {
    return this.integrity.repair(principal, apply);
  }

  /** One batch of re-embedding with this server's model. */
  reembed(principal: Principal, limit: number): Promise<ReembedProgress> {
    return this.reembedding.step(principal.workspace, limit);
  }

  /** Stops the lexical ranking thread; the service is not used after. */
  async close(): Promise<void> {
    await this.lexical.close();
  }

  /** The sizes of the lexical indexes built so far (for /metrics). */
  lexicalStats(): Promise<LexicalStats> {
    return this.lexical.stats();
  }

  /** Builds the workspace's lexical indexes now rather than at its first query. */
  async warmUp(workspace: string): Promise<void> {
    // Chroma loads a collection's vector index at its first search, which in a large store takes seconds: one
    // search each now, so that it loads while the lexical indexes do, not in the first caller's query. Its
    // answer does not matter, nor does its failure (the lexical side reports a Chroma out of reach).
    const probe = Array.from({ length: this.store.stamp.dimension }, (_, i) => (i === 0 ? 1 : 0));
    const vectors = Promise.all(
      EMBEDDED_COLLECTIONS.map(async (name) => (await this.store.collection(workspace, name)).query({ embedding: probe, n: 1 })),
    ).catch(() => undefined);
    // Ready means answering: each index is awaited until the ranking thread has indexed what it was sent.
    const ready = (collection: "turns" | "summaries") => this.lexical.snapshot(workspace, collection).then((index) => index.ready());
    await Promise.all([ready("turns"), ready("summaries"), vectors]);
  }

  /**
   * Writes (or replaces) a session's summary. The summarizer's entry point. `covered_through` defaults to
   * the last turn's time.
   */
  async putSummary(workspace: string, summary: NewSummary): Promise<Summary> {
    const full: Summary = {
      ...summary,
      dropped: summary.dropped ?? [],
      covered_through: summary.covered_through ?? summary.last_turn_at,
      id: summaryId(summary.session_id),
    };
    const document = summaryDocument(full);
    const [embedding] = await this.embedder.embed([document]);
    if (!embedding) throw internal();
    const summaries = await this.store.collection(workspace, "summaries");
    // A summary may be replaced in place.
    await this.feed.announcedRewrite(workspace, "summaries", { record_id: full.id }, () =>
      summaries.upsert([{ id: full.id, embedding, document, metadata: summaryMetadata(full) }]),
    );
    return full;
  }

  /** Removes a session's summary (its turns were all forgotten): from the store and, via the feed, every index. */
  async removeSummary(workspace: string, sessionId: string): Promise<void> {
    const id = summaryId(sessionId);
    const summaries = await this.store.collection(workspace, "summaries");
    await this.feed.append(workspace, "summaries", { record_id: id, op: "remove" });
    await summaries.delete([id]);
  }
}

/** A listed turn as `detail` asks: in a few words, with long fields cut, or whole. */
const shown = (record: StoredRecord, detail: Detail): Memory | MemoryBrief =>
  detail === "brief" ? briefOf(record, listingText(record)) : memoryFromRecord(record, detail);

/** Whether the memory's newest correction is this one, by the same agent: a retry of it. */
function repeats(record: StoredRecord, correction: Pick<Correction, "kind" | "reason" | "by" | "replaced_by" | "commit">): boolean {
  const last = parseList<Correction>(record.metadata.corrections).at(-1);
  return (
    last !== undefined &&
    last.kind === correction.kind &&
    last.reason === correction.reason &&
    last.by === correction.by &&
    last.replaced_by === correction.replaced_by &&
    last.commit === correction.commit
  );
}
