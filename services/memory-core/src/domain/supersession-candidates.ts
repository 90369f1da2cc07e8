import type { OperationOutput } from "@cairn/openapi";
import { taskText } from "../records/memory-brief.js";
import { turnFields } from "../records/turn-record.js";
import type { AddMemoryRequest } from "../records/types.js";
import type { HybridRetrieval } from "../retrieval/hybrid-retrieval.js";

export type PossibleSupersession = NonNullable<OperationOutput<"add_memory">["possible_supersedes"]>[number];

/** Named at most: a decision rarely settles anew more than one or two earlier ones. */
const CANDIDATES = 3;
const DECISION_CHARS = 120;

/**
 * Live decisions of the workspace that a new decision seems to settle anew: about the same subject by its words
 * and by its meaning alike. Only proposed (the agent calls supersede_memory when it agrees); nothing is
 * superseded here. The subject is the decision's task; the earlier ones must match it by words and by meaning,
 * at high confidence by default (docs/benchmarks.md, "Possible supersessions": lower settings propose too much).
 */
export async function possibleSupersessions(
  retrieval: HybridRetrieval,
  workspace: string,
  decision: Pick<AddMemoryRequest, "kind" | "prompt" | "supersedes">,
  ownId: string,
  now: number,
  minConfidence: "high" | "medium" = "high",
): Promise<PossibleSupersession[]> {
  if (decision.kind !== "decision") return [];
  const already = new Set([ownId, ...(decision.supersedes ?? [])]);
  const ranked = await retrieval.search(workspace, "turns", {
    // The task states the subject; the outcome mostly states the new choice, whose words the earlier one lacks.
    query: decision.prompt.slice(0, 1000),
    limit: CANDIDATES + already.size,
    mode: "hybrid",
    minConfidence,
    conditions: [
      { field: "kind", op: "eq", value: "decision" },
      { field: "valid_until", op: "gt", value: now },
      { field: "valid_from", op: "lte", value: now },
    ],
  });
  return ranked
    .filter((hit) => !already.has(hit.record.id) && hit.matched_by.includes("lexical") && hit.matched_by.includes("semantic"))
    .slice(0, CANDIDATES)
    .map(({ record }) => {
      const outcome = turnFields(record).response.replace(/\s+/g, " ").trim();
      return {
        id: record.id,
        agent: String(record.metadata.agent),
        recorded_at: new Date(Number(record.metadata.recorded_at)).toISOString(),
        decision: outcome.length > DECISION_CHARS ? `${outcome.slice(0, DECISION_CHARS - 1).trimEnd()}…` : outcome || taskText(record),
      };
    });
}
