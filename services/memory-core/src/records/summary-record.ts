import type { Metadata, StoredRecord } from "../store/chroma-store.js";
import { parseList } from "./stored-turn.js";
import type { Summary } from "./types.js";

/** Summaries are filtered by agent through one boolean key per agent: Chroma metadata holds no lists. */
export const agentFlag = (agent: string) => `agent:${agent}`;

export function summaryDocument(summary: Summary): string {
  return [
    summary.title,
    summary.summary,
    ...summary.decisions.map((d) => (d.evidence ? `${d.decision} (${d.evidence})` : d.decision)),
    ...summary.dropped.map((d) => `Dropped: ${d.approach}${d.reason ? ` (${d.reason})` : ""}`),
    ...summary.open_questions,
    ...summary.next_steps,
  ].join("\n");
}

export function summaryMetadata(summary: Summary): Metadata {
  const metadata: Metadata = {
    session_id: summary.session_id,
    title: summary.title,
    summary: summary.summary,
    agents: JSON.stringify(summary.agents),
    decisions: JSON.stringify(summary.decisions),
    dropped: JSON.stringify(summary.dropped),
    open_questions: JSON.stringify(summary.open_questions),
    next_steps: JSON.stringify(summary.next_steps),
    turn_count: summary.turn_count,
    first_turn_at: Date.parse(summary.first_turn_at),
    last_turn_at: Date.parse(summary.last_turn_at),
    covered_through: Date.parse(summary.covered_through),
    method: summary.method,
    generated_at: Date.parse(summary.generated_at),
  };
  if (summary.model) metadata.model = summary.model;
  for (const agent of summary.agents) metadata[agentFlag(agent)] = true;
  return metadata;
}

export function summaryFromRecord(record: StoredRecord): Summary {
  const m = record.metadata;
  const summary: Summary = {
    id: record.id,
    session_id: String(m.session_id),
    agents: parseList<string>(m.agents),
    title: String(m.title ?? ""),
    summary: String(m.summary ?? ""),
    decisions: parseList<Summary["decisions"][number]>(m.decisions),
    // A summary without a `dropped` field lists none.
    dropped: parseList<Summary["dropped"][number]>(m.dropped),
    open_questions: parseList<string>(m.open_questions),
    next_steps: parseList<string>(m.next_steps),
    turn_count: Number(m.turn_count ?? 0),
    first_turn_at: new Date(Number(m.first_turn_at)).toISOString(),
    last_turn_at: new Date(Number(m.last_turn_at)).toISOString(),
    // A summary without `covered_through` covers at least up to its last turn.
    covered_through: new Date(Number(m.covered_through ?? m.last_turn_at)).toISOString(),
    method: m.method === "model" ? "model" : "extractive",
    generated_at: new Date(Number(m.generated_at)).toISOString(),
  };
  if (typeof m.model === "string") summary.model = m.model;
  return summary;
}
