import type { OperationOutput } from "@cairn/openapi";
import type { LexicalIndexes } from "../lexical/indexes.js";
import { taskText } from "../records/memory-brief.js";
import type { RecencyIndex } from "./recency.js";
import { isOutdated, isSuperseded, textOf, type StoredTurn } from "../records/stored-turn.js";
import { clip } from "../text.js";

type TeamStatusResult = OperationOutput<"query_team_status">;
type AgentStatus = TeamStatusResult["agents"][number];

/** Failed checks listed per agent: enough to act on, few enough for a census of the whole team. */
const FAILED_PER_AGENT = 5;
const NEXT_STEP_CHARS = 160;

/**
 * Where each agent of a workspace stands: its newest turn (from its recency sequence, as query_recent_turns
 * would list it), the next step that turn wrote, and its failed checks that still stand. The agents are the
 * ones the caught-up lexical index holds turns of, less the workspace's importers (history, not teammates); each
 * with its unread messages (three stream lengths, see ledger/mailbox.ts).
 */
export class TeamStatus {
  constructor(
    private readonly lexical: LexicalIndexes,
    private readonly recency: RecencyIndex,
    private readonly importers: (workspace: string) => ReadonlySet<string>,
    private readonly unread: (workspace: string, agent: string) => Promise<number> = () => Promise.resolve(0),
  ) {}

  async query(workspace: string, limit: number): Promise<TeamStatusResult> {
    const index = await this.lexical.snapshot(workspace, "turns");
    const importers = this.importers(workspace);
    // One recency read per agent of the workspace: as many as the workspace has agents, never a caller's number.
    const newest = await Promise.all(
      index
        .values("agent")
        .filter((agent) => !importers.has(agent))
        .map(async (agent) => ({ agent, turn: (await this.recency.newestPage(workspace, agent, 1, undefined)).entries[0]?.turn })),
    );
    const active = newest
      .filter((n): n is { agent: string; turn: StoredTurn } => n.turn !== undefined)
      .sort((a, b) => b.turn.recordedAt - a.turn.recordedAt);
    const agents = await Promise.all(
      active.slice(0, limit).map(async ({ agent, turn }): Promise<AgentStatus> => {
        // Chosen on the index's metadata; only the few shown are fetched whole (their checks stay in Chroma).
        const chosen = (
          index.matching([
            { field: "agent", op: "eq", value: agent },
            { field: "check_status", op: "eq", value: "failed" },
          ]) ?? []
        )
          .flatMap((id) => index.turn(id) ?? [])
          .filter((r) => !isSuperseded(r) && !isOutdated(r))
          .sort((a, b) => b.recordedAt - a.recordedAt)
          .slice(0, FAILED_PER_AGENT);
        const [failing, unread] = await Promise.all([index.turns(chosen.map((r) => r.id)), this.unread(workspace, agent)]);
        return {
          agent,
          unread_messages: unread,
          memory_id: turn.id,
          recorded_at: new Date(turn.recordedAt).toISOString(),
          session_id: turn.sessionId,
          task: taskText(turn),
          next_step: nextStep(turn),
          failed_checks: failing.map((r) => ({
            memory_id: r.id,
            checks: r.checks.filter((c) => c.status === "failed").map((c) => c.name),
          })),
        };
      }),
    );
    return { agents, more: active.length > limit };
  }
}

/** The sentence of the turn's outcome (else its reasoning) that names the next step: "Next: …", "Next step: …". */
export function nextStep(turn: StoredTurn): string | null {
  const { response, thought } = textOf(turn);
  for (const text of [response, thought]) {
    const match = /\bnext(?:\s+steps?)?\s*[:—–-]\s*(.+?)(?:(?<=[.!?])\s|\n|$)/i.exec(text);
    const step = match?.[1]?.trim();
    if (step) return clip(step, NEXT_STEP_CHARS);
  }
  return null;
}
