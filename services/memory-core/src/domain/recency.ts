import { assertWithinListing } from "../records/cursor.js";
import { recencyAppend, type Appended, type Sequences } from "../ledger/sequences.js";
import type { StoredTurn } from "../records/stored-turn.js";
import type { TurnRepository } from "../records/turn-repository.js";
import type { SessionTurns } from "./session-turns.js";

/**
 * Each agent's turns in the order they were recorded, at a cost that follows the page size, not the history.
 *
 * Every write first appends to its agent's sequence (see ledger/sequences.ts) a slot naming the turn; the turn stores
 * that slot number as `seq`. The newest page is then a lookup of slots n, n-1, ... and of their turns by id.
 * A slot whose turn never arrived (a writer that died) or whose turn names another slot (two replicas racing
 * on one idempotency key) is skipped. The order can be rebuilt from the turns' `seq` and `recorded_at`.
 */

/** How many times the slots still wanted one round may read. */
const MAX_READ_AHEAD = 16;

export interface RecentEntry {
  seq: number;
  turn: StoredTurn;
}

export class RecencyIndex {
  constructor(
    private readonly turns: TurnRepository,
    private readonly sequences: Sequences,
    private readonly sessions: SessionTurns,
  ) {}

  /** Takes the next slot of the agent's sequence alone (a write takes it with its other slots: see recencyAppend). */
  allocate(workspace: string, agent: string, turnId: string, writeId: string): Promise<Appended> {
    const { stream, payload } = recencyAppend(agent, turnId);
    return this.sequences.append(workspace, stream, payload, writeId);
  }

  /** The agent's newest turns below `before` (a slot number), newest first, and whether older ones exist. */
  async newestPage(
    workspace: string,
    agent: string,
    limit: number,
    before: number | undefined,
  ): Promise<{ entries: RecentEntry[]; more: boolean }> {
    const length = await this.sequences.length(workspace, agent);
    assertWithinListing(before, length, "before");
    let top = (before ?? length) - 1;
    const want = limit + 1;
    const entries: RecentEntry[] = [];
    // A round that came short met slots left by writes that did not land: the next reads further ahead, so
    // such slots cost a few rounds, not one round each.
    let ahead = 1;
    while (entries.length < want && top >= 0) {
      const seqs = descending(top, Math.max(0, top - (want - entries.length) * ahead + 1));
      ahead = Math.min(ahead * 2, MAX_READ_AHEAD);
      top -= seqs.length;
      const slots = await this.sequences.read(workspace, agent, seqs);
      const turnOf = new Map([...slots].filter(([, slot]) => slot.void !== true).map(([seq, slot]) => [seq, String(slot.turn_id)]));
      const found = await this.turns.byIds(workspace, [...new Set(turnOf.values())], { withText: true });
      const byId = new Map(found.map((t) => [t.id, t]));
      for (const seq of seqs) {
        const turn = byId.get(turnOf.get(seq) ?? "");
        if (turn && turn.seq === seq) entries.push({ seq, turn });
      }
    }
    return { entries: entries.slice(0, limit), more: entries.length > limit };
  }

  /** The same order for one session of the agent: read from the session's turns, which are few. */
  async newestPageOfSession(
    workspace: string,
    agent: string,
    sessionId: string,
    limit: number,
    before: number | undefined,
  ): Promise<{ entries: RecentEntry[]; more: boolean }> {
    if (before !== undefined) assertWithinListing(before, await this.sequences.length(workspace, agent), "before");
    const all = (await this.sessions.list(workspace, sessionId, agent))
      .map((turn) => ({ seq: turn.seq, turn }))
      .filter((e) => before === undefined || e.seq < before)
      .sort((a, b) => b.seq - a.seq);
    return { entries: all.slice(0, limit), more: all.length > limit };
  }
}

/** from, from-1, ..., to */
function descending(from: number, to: number): number[] {
  const out: number[] = [];
  for (let n = from; n >= to; n--) out.push(n);
  return out;
}
