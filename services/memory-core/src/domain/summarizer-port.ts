import type { TokenRegistry } from "../auth/tokens.js";
import type { Embedder } from "../embeddings/embedder.js";
import { itemsOf } from "../ledger/slot-items.js";
import type { Storage } from "../storage.js";
import type { NewSummary, WriteService } from "./write-service.js";
import type { SessionLeases } from "../ledger/session-leases.js";
import { textOf, type StoredTurn } from "../records/stored-turn.js";
import type { Summary } from "../records/types.js";

export type { Lease } from "../ledger/session-leases.js";

/** One turn of a session, as a summarizer reads it. */
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

/** Every session of a workspace with its turn count and newest turn, and what each stored summary covers. */
export interface SessionsOverview {
  sessions: Map<string, { turnCount: number; newestAt: number }>;
  summaries: Map<string, { turnCount: number; coveredThrough: number }>;
}

/** A turn written to or forgotten from a session, as the workspace's change feed tells it. */
export interface SessionChange {
  sessionId: string;
  turnId: string;
  forgotten: boolean;
  /** Server clock (epoch ms) of the change. */
  at: number;
}

/**
 * What a summarizer may read and write of memory-core, in domain terms: sessions, their turns and changes,
 * summaries, and a lease per session. memory-core defines and implements it; the summarizer never sees the
 * store, so how memory-core keeps these (Chroma, the change feed, lease records) stays its own business.
 */
export interface SummarizerPort {
  /** The workspaces this server holds tokens for. */
  workspaces(): string[];
  /** The embedder summaries are stored with (the extractive summary ranks sentences with it). */
  readonly embedder: Embedder;
  /** The session's turns, oldest first; empty when it has none. */
  sessionTurns(workspace: string, sessionId: string): Promise<SessionTurn[]>;
  storedSummary(workspace: string, sessionId: string): Promise<Summary | undefined>;
  putSummary(workspace: string, summary: NewSummary): Promise<Summary>;
  removeSummary(workspace: string, sessionId: string): Promise<void>;
  /** Read once when a summarizer starts on a workspace (sessions written while none ran). */
  sessionsOverview(workspace: string): Promise<SessionsOverview>;
  /**
   * Where the change feed ends now: changes are numbered from 0 up to it. A number is a slot of the feed, which
   * may carry several changes (a write batch's), told together.
   */
  changesEnd(workspace: string): Promise<number>;
  /**
   * The changes numbered `from` to `from + count - 1` (all below `changesEnd`), in order, each number's changes
   * together; `next` is where to read on. A change announced but not yet readable (a write in flight) holds `next`
   * back, so it and those after it are told again.
   */
  sessionChanges(workspace: string, from: number, count: number): Promise<{ changes: SessionChange[]; next: number }>;
  /** Leases on sessions held as `holder` for `ttlMs` at a time: one summarizer per session at once. */
  sessionLeases(options: { ttlMs: number; holder: string; now?: () => number }): SessionLeases;
}

const PAGE = 500;

/** The port over memory-core's own parts. */
export function summarizerPort(parts: {
  storage: Pick<Storage, "turns" | "summaries" | "feed" | "sessionLeases">;
  writes: WriteService;
  embedder: Embedder;
  tokens: TokenRegistry;
}): SummarizerPort {
  const { storage, writes, embedder, tokens } = parts;
  const { turns, summaries, feed } = storage;

  /** Feed entries that name no session: the session is read from the turn. */
  async function sessionsOf(workspace: string, turnIds: string[]): Promise<Map<string, string>> {
    if (turnIds.length === 0) return new Map();
    const found = await turns.byIds(workspace, [...new Set(turnIds)]);
    return new Map(found.map((t) => [t.id, t.sessionId]));
  }

  return {
    workspaces: () => tokens.workspaces(),
    embedder,

    async sessionTurns(workspace, sessionId) {
      // Chroma filters on session_id; a session is small next to a workspace.
      const found = await turns.ofSession(workspace, sessionId, { withText: true, withEmbeddings: true });
      return found.map(toSessionTurn).sort((a, b) => a.recordedAt - b.recordedAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    },

    storedSummary: (workspace, sessionId) => summaries.ofSession(workspace, sessionId),

    putSummary: (workspace, summary) => writes.putSummary(workspace, summary),
    removeSummary: (workspace, sessionId) => writes.removeSummary(workspace, sessionId),

    async sessionsOverview(workspace) {
      const sessions = new Map<string, { turnCount: number; newestAt: number }>();
      for await (const page of turns.pages(workspace, { size: PAGE })) {
        for (const turn of page) {
          const s = sessions.get(turn.sessionId) ?? { turnCount: 0, newestAt: 0 };
          s.turnCount++;
          s.newestAt = Math.max(s.newestAt, turn.recordedAt);
          sessions.set(turn.sessionId, s);
        }
      }
      const summarized = new Map<string, { turnCount: number; coveredThrough: number }>();
      for await (const page of summaries.pages(workspace, PAGE)) {
        for (const summary of page) {
          summarized.set(summary.session_id, { turnCount: summary.turn_count, coveredThrough: Date.parse(summary.covered_through) });
        }
      }
      return { sessions, summaries: summarized };
    },

    changesEnd: (workspace) => feed.length(workspace, "turns"),

    async sessionChanges(workspace, from, count) {
      // The caller asked changesEnd already: the feed's length is not read again for every page.
      const seqs = Array.from({ length: Math.max(0, count) }, (_, i) => from + i);
      if (seqs.length === 0) return { changes: [], next: from };
      const slots = await feed.read(workspace, "turns", seqs);
      // A slot may hold a batch's entries (slot-items.ts): each is a change, under the slot's number.
      const entries = [...slots].sort(([a], [b]) => a - b).flatMap(([, slot]) => itemsOf(slot));
      const unnamed = entries.filter((e) => typeof e.session_id !== "string");
      const sessionOf = await sessionsOf(
        workspace,
        unnamed.map((e) => String(e.record_id)),
      );
      const changes: SessionChange[] = [];
      for (const e of entries) {
        const turnId = String(e.record_id);
        const sessionId = typeof e.session_id === "string" ? e.session_id : sessionOf.get(turnId);
        if (sessionId !== undefined) changes.push({ sessionId, turnId, forgotten: e.op === "remove", at: Number(e.recorded_at) });
      }
      // Slots are dense; a missing one is a write whose append is in flight: read on from it next time (the
      // changes after it are told now and again then).
      const firstMissing = seqs.find((n) => !slots.has(n));
      return { changes, next: firstMissing ?? from + seqs.length };
    },

    sessionLeases: ({ ttlMs, holder, now }) => storage.sessionLeases({ ttlMs, holder, ...(now ? { now } : {}) }),
  };
}

function toSessionTurn(turn: StoredTurn): SessionTurn {
  return {
    id: turn.id,
    agent: turn.agent,
    kind: turn.kind,
    ...textOf(turn),
    recordedAt: turn.recordedAt,
    happenedAt: turn.occurredAt ?? turn.recordedAt,
    embedding: turn.embedding,
  };
}
