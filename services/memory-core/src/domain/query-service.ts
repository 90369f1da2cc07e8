import type { OperationInput, OperationOutput } from "@cairn/openapi";
import { setImmediate } from "node:timers/promises";
import type { Principal } from "../auth/principal.js";
import { notFound, validationFailed } from "../errors.js";
import { decodeCursor, encodeCursor, encodeOffsetCursor, offsetFrom, oldestFirst, type Listing } from "../records/cursor.js";
import { briefOf, listingText } from "../records/memory-brief.js";
import { snippetText } from "../lexical/snippets.js";
import { agentFlag } from "../records/summary-record.js";
import type { StoredTurn } from "../records/stored-turn.js";
import { memoryOf, positionOf } from "../records/turn-record.js";
import type {
  Detail,
  Memory,
  MemoryBrief,
  QueryMemoriesRequest,
  QueryMemoriesResult,
  QuerySummariesResult,
  RecentTurnsResult,
  SessionResult,
} from "../records/types.js";
import { bestOf } from "../retrieval/confidence.js";
import { citesCondition, type Condition } from "../records/filters.js";
import type { BriefView } from "../records/memory-brief.js";
import type { HybridRetrieval, SearchRequest } from "../retrieval/hybrid-retrieval.js";
import type { Storage } from "../storage.js";
import { assessChange } from "./change-assessment.js";
import type { Corrections } from "./corrections.js";
import type { RecencyIndex } from "./recency.js";
import type { SessionTurns } from "./session-turns.js";
import type { TeamStatus } from "./team-status.js";

/** What agents read: their newest turns, searches, sessions, one memory, the team, how changes like one ended. */
export class QueryService {
  constructor(
    private readonly storage: Pick<Storage, "summaries">,
    private readonly parts: {
      recency: RecencyIndex;
      sessions: SessionTurns;
      retrieval: HybridRetrieval;
      corrections: Corrections;
      team: TeamStatus;
    },
    private readonly now: () => number,
  ) {}

  async recentTurns(principal: Principal, input: OperationInput<"query_recent_turns">): Promise<RecentTurnsResult> {
    const agent = input.agent ?? principal.agent;
    const listing: Listing = { name: "recent", workspace: principal.workspace, scope: [agent, input.session_id] };
    const before = input.before === undefined ? undefined : offsetFrom(input.before, "before", listing);
    const page =
      input.session_id === undefined
        ? await this.parts.recency.newestPage(principal.workspace, agent, input.limit, before)
        : await this.parts.recency.newestPageOfSession(principal.workspace, agent, input.session_id, input.limit, before);
    const last = page.entries.at(-1);
    return {
      turns: page.entries.map((e) => shown(e.turn, input.detail)),
      next_cursor: page.more && last ? encodeOffsetCursor(listing, last.seq) : null,
    };
  }

  async queryMemories(principal: Principal, input: OperationInput<"query_raw_memories">): Promise<QueryMemoriesResult> {
    const { query, paths } = input;
    if (query === undefined && paths === undefined) {
      throw validationFailed(
        [{ path: "", message: "needs `query`, `paths` or both" }],
        "Pass `query` (the words to look for), `paths` (files or folders the memories cite), or both.",
      );
    }
    const conditions: Condition[] = [];
    if (input.agent !== undefined) conditions.push({ field: "agent", op: "eq", value: input.agent });
    if (input.session_id !== undefined) conditions.push({ field: "session_id", op: "eq", value: input.session_id });
    if (input.kind !== undefined) conditions.push({ field: "kind", op: "eq", value: input.kind });
    if (input.since !== undefined) conditions.push({ field: "recorded_at", op: "gte", value: Date.parse(input.since) });
    if (input.until !== undefined) conditions.push({ field: "recorded_at", op: "lt", value: Date.parse(input.until) });
    if (input.check_status !== undefined) conditions.push({ field: "check_status", op: "eq", value: input.check_status });
    if (input.review_state !== undefined) conditions.push({ field: "review_state", op: "eq", value: input.review_state });
    if (paths !== undefined) conditions.push(citesCondition(paths));
    if (!input.include_superseded) {
      // Valid at the instant asked about: begun by then, not yet superseded then.
      const at = input.as_of === undefined ? this.now() : Date.parse(input.as_of);
      conditions.push({ field: "valid_until", op: "gt", value: at }, { field: "valid_from", op: "lte", value: at });
    }
    const ranked =
      query === undefined
        ? await this.parts.retrieval.newestCiting(principal.workspace, conditions, input.limit ?? 10)
        : await this.parts.retrieval.searchTurns(principal.workspace, {
            ...searchOf({ ...input, query }, 10, conditions),
            evidence: input.evidence === true,
          });
    const detail = input.detail ?? "brief";
    const view: BriefView = {
      ...(paths !== undefined ? { paths } : {}),
      ...(input.branch !== undefined ? { branch: input.branch } : {}),
      ...(input.default_branch !== undefined ? { defaultBranch: input.default_branch } : {}),
    };
    const hits = [];
    for (const { turn, ...rank } of ranked) {
      // A brief hit's text is looked for in its turn (snippetText): other requests are served between two hits.
      if (detail === "brief" && hits.length > 0) await setImmediate();
      hits.push({
        ...rank,
        matched_by:
          paths !== undefined && !rank.matched_by.includes("path") ? [...rank.matched_by, "path" as const].sort() : rank.matched_by,
        memory:
          detail === "brief"
            ? briefOf(turn, query === undefined ? listingText(turn) : snippetText(turn, query), view)
            : memoryOf(turn, "full"),
      });
    }
    return { hits, confidence: bestOf(hits.map((h) => h.confidence)) };
  }

  async querySummaries(principal: Principal, input: OperationInput<"query_summaries">): Promise<QuerySummariesResult> {
    const conditions: Condition[] = [];
    if (input.agent !== undefined) conditions.push({ field: agentFlag(input.agent), op: "eq", value: true });
    if (input.since !== undefined) conditions.push({ field: "last_turn_at", op: "gte", value: Date.parse(input.since) });
    if (input.until !== undefined) conditions.push({ field: "first_turn_at", op: "lt", value: Date.parse(input.until) });
    const hits = await this.parts.retrieval.searchSummaries(principal.workspace, searchOf(input, 5, conditions));
    return { hits, confidence: bestOf(hits.map((h) => h.confidence)) };
  }

  async getSession(principal: Principal, input: OperationInput<"get_session">): Promise<SessionResult> {
    const listing: Listing = { name: "session", workspace: principal.workspace, scope: [input.session_id] };
    const after = input.after === undefined ? undefined : decodeCursor(input.after, "after", listing);
    const all = (await this.parts.sessions.list(principal.workspace, input.session_id)).sort((a, b) =>
      oldestFirst(positionOf(a), positionOf(b)),
    );
    const rest = after ? all.filter((r) => oldestFirst(after, positionOf(r)) < 0) : all;
    const page = rest.slice(0, input.limit);
    const summary = await this.storage.summaries.ofSession(principal.workspace, input.session_id);
    if (all.length === 0 && !summary) {
      throw notFound(
        `No session ${input.session_id} in this workspace.`,
        "Check the session_id; query_recent_turns lists the sessions of recent turns.",
      );
    }
    const last = page.at(-1);
    return {
      session_id: input.session_id,
      turns: page.map((r) => shown(r, input.detail)),
      summary: summary ?? null,
      next_cursor: rest.length > page.length && last ? encodeCursor(listing, positionOf(last)) : null,
    };
  }

  async getMemory(principal: Principal, memoryId: string): Promise<Memory> {
    return memoryOf(await this.parts.corrections.existing(principal.workspace, memoryId), "full");
  }

  /** Each agent's newest turn, its next step and its failed checks still standing; most recently active first. */
  teamStatus(principal: Principal, input: OperationInput<"query_team_status">): Promise<OperationOutput<"query_team_status">> {
    return this.parts.team.query(principal.workspace, input.limit);
  }

  /** How the changes most like an intended one ended: reverted, fixed, outdated, failed checks, or stood. */
  assessChange(principal: Principal, input: OperationInput<"assess_change">): Promise<OperationOutput<"assess_change">> {
    return assessChange(this.parts.retrieval, principal.workspace, input);
  }
}

/** A listed turn as `detail` asks: in a few words, with long fields cut, or whole. */
const shown = (turn: StoredTurn, detail: Detail): Memory | MemoryBrief =>
  detail === "brief" ? briefOf(turn, listingText(turn)) : memoryOf(turn, detail);

/** A search as a caller asked for it, with the filters built from its fields and the operation's page size. */
const searchOf = (
  input: Pick<QueryMemoriesRequest, "limit" | "mode" | "min_confidence"> & { query: string },
  defaultLimit: number,
  conditions: Condition[],
): SearchRequest => ({
  query: input.query,
  limit: input.limit ?? defaultLimit,
  mode: input.mode ?? "hybrid",
  minConfidence: input.min_confidence ?? "none",
  conditions,
});
