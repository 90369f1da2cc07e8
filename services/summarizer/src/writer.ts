import type { Logger, SessionLeases, Summary, SummarizerPort } from "@cairn/memory-core";
import { extractiveSummary } from "./extractive.js";
import { ModelUnavailableError, type ChatModel } from "./model/chat-client.js";
import { summarizeWithModel, type ModelSummaryOptions } from "./model/model-summary.js";
import { coverageOf, isCovered, type SessionTurn } from "./session.js";
import type { StructuredSummary } from "./structured.js";

export type WriteOutcome =
  | { kind: "written"; summary: Summary; turnIds: string[] }
  /** The stored summary covers every turn: nothing was asked of any model. */
  | { kind: "current"; summary: Summary; turnIds: string[] }
  /** Another worker holds the session's lease. */
  | { kind: "busy" }
  /** The session has no turns (never had, or all were forgotten; a summary left over is removed). */
  | { kind: "empty"; turnIds: [] };

export interface WriterDeps {
  memory: SummarizerPort;
  leases: SessionLeases;
  /** Undefined: extractive only. */
  model: { chat: ChatModel; options: ModelSummaryOptions } | undefined;
  log: Logger;
  now?: () => number;
}

/** Summarizes one session under its lease: the one place a summary is decided and written. */
export class SummaryWriter {
  private readonly now: () => number;

  constructor(private readonly deps: WriterDeps) {
    this.now = deps.now ?? Date.now;
  }

  async write(workspace: string, sessionId: string, options: { force: boolean; signal: AbortSignal }): Promise<WriteOutcome> {
    const lease = await this.deps.leases.acquire(workspace, sessionId);
    if (!lease) return { kind: "busy" };
    try {
      // Read under the lease: a worker that held it a moment ago may have just covered these turns.
      const turns = await this.deps.memory.sessionTurns(workspace, sessionId);
      const existing = await this.deps.memory.storedSummary(workspace, sessionId);
      if (turns.length === 0) {
        if (existing) await this.deps.memory.removeSummary(workspace, sessionId);
        return { kind: "empty", turnIds: [] };
      }
      const coverage = coverageOf(turns);
      const turnIds = turns.map((t) => t.id);
      if (existing && !options.force && isCovered(existing, coverage)) return { kind: "current", summary: existing, turnIds };

      const { content, method, model } = await this.compose(sessionId, turns, options.signal);
      if (!(await lease.stillHeld())) return { kind: "busy" };
      const summary = await this.deps.memory.putSummary(workspace, {
        session_id: sessionId,
        agents: [...new Set(turns.map((t) => t.agent))].sort(),
        ...content,
        turn_count: coverage.turnCount,
        first_turn_at: new Date(Math.min(...turns.map((t) => t.happenedAt))).toISOString(),
        last_turn_at: new Date(Math.max(...turns.map((t) => t.happenedAt))).toISOString(),
        covered_through: new Date(coverage.coveredThrough).toISOString(),
        method,
        model,
        generated_at: new Date(this.now()).toISOString(),
      });
      this.deps.log.info("session summarized", { workspace, session_id: sessionId, method, turns: coverage.turnCount });
      return { kind: "written", summary, turnIds };
    } finally {
      await lease.release();
    }
  }

  /** Whether the session has turns or a summary: asked before anything is written for it (a lease is a write). */
  async hasSession(workspace: string, sessionId: string): Promise<boolean> {
    return (
      (await this.deps.memory.sessionTurns(workspace, sessionId)).length > 0 ||
      (await this.deps.memory.storedSummary(workspace, sessionId)) !== undefined
    );
  }

  /** The model's summary when there is a model and it answers usably; otherwise the extractive one. */
  private async compose(
    sessionId: string,
    turns: SessionTurn[],
    signal: AbortSignal,
  ): Promise<{ content: StructuredSummary; method: Summary["method"]; model: string }> {
    const { model, memory, log } = this.deps;
    if (model) {
      try {
        const content = await summarizeWithModel(model.chat, sessionId, turns, model.options, log, signal);
        return { content, method: "model", model: model.chat.name };
      } catch (error) {
        if (!(error instanceof ModelUnavailableError)) throw error;
        log.warn("chat model gave no usable summary; writing an extractive one", { session_id: sessionId, reason: error.message });
      }
    }
    return { content: await extractiveSummary(sessionId, turns, memory.embedder), method: "extractive", model: memory.embedder.model };
  }
}
