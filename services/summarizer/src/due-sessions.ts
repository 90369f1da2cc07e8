import { FEED_PENDING_MS, type SessionChange, type SummarizerPort } from "@cairn/memory-core";

const PAGE = 500;
/** A forgotten turn's content must leave its session's summary soon, not after the idle time. */
const FORGET_GRACE_MS = 5_000;
/** Feed entries read again after the first scan (see scan()). */
const RECENT_TAIL = 256;

interface Pending {
  /** Server time of the newest change seen. */
  lastChange: number;
  /** A turn was forgotten: due soon whatever the idle time. */
  urgentAt: number | undefined;
  /** Bumped on every change, so a session that changed while it was being summarized stays pending. */
  version: number;
  /** Turns the feed says were written, and forgotten: a summary must have seen the first or they must be in the second. */
  written: Set<string>;
  forgotten: Set<string>;
}

const newPending = (lastChange: number, urgentAt?: number): Pending => ({
  lastChange,
  urgentAt,
  version: 0,
  written: new Set(),
  forgotten: new Set(),
});

interface WorkspaceState {
  /** Entries of the `@turns` feed consumed. */
  position: number;
  pending: Map<string, Pending>;
}

/**
 * Which sessions may need a summary, per workspace. At first use it reads every turn's and summary's
 * metadata once (sessions written while no worker ran); after that it follows the `@turns` change feed
 * from where it stood, which names the session of every write. It only proposes: the writer decides under
 * the session's lease, from what is in Chroma, whether a summary is really out of date.
 */
export class DueSessions {
  private readonly states = new Map<string, WorkspaceState>();

  constructor(
    private readonly memory: SummarizerPort,
    private readonly idleMs: number,
  ) {}

  /** Catches up with the changes since the last call. */
  async refresh(workspace: string): Promise<void> {
    let state = this.states.get(workspace);
    if (!state) {
      state = await this.scan(workspace);
      this.states.set(workspace, state);
    }
    await this.follow(workspace, state);
  }

  /** Sessions idle long enough (or with a forgotten turn), oldest change first. */
  due(workspace: string, now: number): Array<{ sessionId: string; version: number }> {
    const state = this.states.get(workspace);
    if (!state) return [];
    return [...state.pending]
      .filter(([, p]) => now - p.lastChange >= this.idleMs || (p.urgentAt !== undefined && now >= p.urgentAt))
      .sort(([, a], [, b]) => a.lastChange - b.lastChange)
      .map(([sessionId, p]) => ({ sessionId, version: p.version }));
  }

  /**
   * The session was dealt with as it stood at `version`, seeing `turnIds`. It stays pending after a change
   * since, or while a turn the feed announced has not reached Chroma yet (so was not seen).
   */
  settle(workspace: string, sessionId: string, version: number, turnIds: readonly string[], now: number): void {
    const pending = this.states.get(workspace)?.pending;
    const entry = pending?.get(sessionId);
    if (!pending || !entry || entry.version !== version) return;
    const seen = new Set(turnIds);
    const inFlight = [...entry.written].some((id) => !seen.has(id) && !entry.forgotten.has(id));
    // A feed entry comes before its turn reaches Chroma; a turn missing for longer had a writer that died.
    if (!inFlight || now - entry.lastChange >= FEED_PENDING_MS) pending.delete(sessionId);
  }

  pendingCount(workspace: string): number {
    return this.states.get(workspace)?.pending.size ?? 0;
  }

  private async scan(workspace: string): Promise<WorkspaceState> {
    // The feed position first: a write during the scan is then seen again by the feed (harmless). The recent
    // tail is read again too, so that a turn whose entry was written but not its record yet is waited for.
    const position = Math.max(0, (await this.memory.changesEnd(workspace)) - RECENT_TAIL);
    const { sessions, summaries } = await this.memory.sessionsOverview(workspace);
    const pending = new Map<string, Pending>();
    for (const [sessionId, s] of sessions) {
      const summary = summaries.get(sessionId);
      if (summary && summary.turnCount === s.turnCount && summary.coveredThrough === s.newestAt) continue;
      pending.set(sessionId, newPending(s.newestAt));
    }
    // A summary whose turns are all gone: removed at once.
    for (const sessionId of summaries.keys()) {
      if (!sessions.has(sessionId)) pending.set(sessionId, newPending(0, 0));
    }
    return { position, pending };
  }

  private async follow(workspace: string, state: WorkspaceState): Promise<void> {
    const end = await this.memory.changesEnd(workspace);
    while (state.position < end) {
      const wanted = Math.min(PAGE, end - state.position);
      const { changes, next } = await this.memory.sessionChanges(workspace, state.position, wanted);
      for (const change of changes) this.note(state, change);
      // Stopped short at a write in flight: read on from it next time.
      const stoppedShort = next < state.position + wanted;
      state.position = next;
      if (stoppedShort) return;
    }
  }

  private note(state: WorkspaceState, change: SessionChange): void {
    const pending = state.pending.get(change.sessionId) ?? newPending(0);
    pending.version++;
    if (change.forgotten) {
      pending.urgentAt = Math.min(pending.urgentAt ?? Infinity, change.at + FORGET_GRACE_MS);
      pending.forgotten.add(change.turnId);
    } else {
      pending.lastChange = Math.max(pending.lastChange, change.at);
      pending.written.add(change.turnId);
    }
    state.pending.set(change.sessionId, pending);
  }
}
