import { ChangeFeed, FEED_PENDING_MS, Sequences, type ChromaStore, type Metadata } from "@cairn/memory-core";

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
  private readonly feed: ChangeFeed;

  constructor(
    private readonly store: ChromaStore,
    private readonly idleMs: number,
  ) {
    this.feed = new ChangeFeed(new Sequences(store));
  }

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
    const position = Math.max(0, (await this.feed.length(workspace, "turns")) - RECENT_TAIL);
    const sessions = new Map<string, { count: number; newest: number }>();
    for await (const m of this.allMetadata(workspace, "turns")) {
      const id = String(m.session_id);
      const s = sessions.get(id) ?? { count: 0, newest: 0 };
      s.count++;
      s.newest = Math.max(s.newest, Number(m.recorded_at));
      sessions.set(id, s);
    }
    const covered = new Map<string, { count: number; through: number }>();
    for await (const m of this.allMetadata(workspace, "summaries")) {
      covered.set(String(m.session_id), { count: Number(m.turn_count), through: Number(m.covered_through ?? m.last_turn_at) });
    }
    const pending = new Map<string, Pending>();
    for (const [sessionId, s] of sessions) {
      const summary = covered.get(sessionId);
      if (summary && summary.count === s.count && summary.through === s.newest) continue;
      pending.set(sessionId, newPending(s.newest));
    }
    // A summary whose turns are all gone: removed at once.
    for (const sessionId of covered.keys()) {
      if (!sessions.has(sessionId)) pending.set(sessionId, newPending(0, 0));
    }
    return { position, pending };
  }

  private async follow(workspace: string, state: WorkspaceState): Promise<void> {
    const length = await this.feed.length(workspace, "turns");
    while (state.position < length) {
      const seqs = Array.from({ length: Math.min(PAGE, length - state.position) }, (_, i) => state.position + i);
      const slots = await this.feed.read(workspace, "turns", seqs);
      const unnamed = [...slots.values()].filter((s) => typeof s.session_id !== "string");
      const sessionOf = await this.sessionsOf(
        workspace,
        unnamed.map((s) => String(s.record_id)),
      );
      for (const slot of slots.values()) {
        const sessionId = typeof slot.session_id === "string" ? slot.session_id : sessionOf.get(String(slot.record_id));
        if (sessionId !== undefined) this.note(state, sessionId, slot);
      }
      // Slots are dense; a missing one is a write whose append is in flight: read it next time.
      const firstMissing = seqs.find((n) => !slots.has(n));
      state.position = firstMissing ?? state.position + seqs.length;
      if (firstMissing !== undefined) return;
    }
  }

  private note(state: WorkspaceState, sessionId: string, slot: Metadata): void {
    const at = Number(slot.recorded_at);
    const pending = state.pending.get(sessionId) ?? newPending(0);
    pending.version++;
    const recordId = String(slot.record_id);
    if (slot.op === "remove") {
      pending.urgentAt = Math.min(pending.urgentAt ?? Infinity, at + FORGET_GRACE_MS);
      pending.forgotten.add(recordId);
    } else {
      pending.lastChange = Math.max(pending.lastChange, at);
      pending.written.add(recordId);
    }
    state.pending.set(sessionId, pending);
  }

  /** Feed entries written before entries named their session: the session is read from the turn. */
  private async sessionsOf(workspace: string, recordIds: string[]): Promise<Map<string, string>> {
    if (recordIds.length === 0) return new Map();
    const turns = await this.store.collection(workspace, "turns");
    const found = await turns.get({ ids: [...new Set(recordIds)] });
    return new Map(found.map((r) => [r.id, String(r.metadata.session_id)]));
  }

  private async *allMetadata(workspace: string, name: "turns" | "summaries"): AsyncGenerator<Metadata> {
    const records = await this.store.collection(workspace, name);
    for await (const page of records.pages({ size: PAGE })) {
      for (const record of page) yield record.metadata;
    }
  }
}
