import type { OperationOutput } from "@cairn/openapi";
import { terms } from "../lexical/text-analysis.js";
import { taskText } from "../records/memory-brief.js";
import { textOf, type StoredTurn } from "../records/stored-turn.js";
import { clip } from "../text.js";
import type { AddMemoryRequest } from "../records/types.js";
import type { HybridRetrieval } from "../retrieval/hybrid-retrieval.js";

export type PossibleSupersession = NonNullable<OperationOutput<"add_memory">["possible_supersedes"]>[number];

/** Named at most: a decision rarely settles anew more than one or two earlier ones. */
const CANDIDATES = 3;
/**
 * Live decisions the new one is compared with: the nearest by words, as the comparison is by words too. Their
 * words also weigh the terms.
 */
const NEIGHBOURS = 20;
/**
 * The share of an earlier decision's weighted terms that the new one must repeat to be proposed as settling it
 * anew. Chosen on the labelled pairs, checked on held-out ones (docs/benchmarks.md, "Possible supersessions").
 */
const SAME_SUBJECT = 0.5;
const DECISION_CHARS = 120;

/**
 * Live decisions of the workspace that a new decision seems to settle anew. Only proposed (the agent calls
 * supersede_memory when it agrees); nothing is superseded here.
 *
 * A later decision on the same subject restates it: it names the subject, and usually the choice it replaces
 * ("from axios to undici", "the Tuesday train ends"). So each neighbour is judged by how much of what it said
 * (its task and its outcome) the new decision says again, each word weighed by how rare it is among the
 * neighbours: words every decision nearby shares ("service", "decided") count little, the subject's own words
 * much. Search confidence is not used: it is calibrated for questions, and a decision is not one.
 */
export async function possibleSupersessions(
  retrieval: HybridRetrieval,
  workspace: string,
  decision: Pick<AddMemoryRequest, "kind" | "prompt" | "response" | "supersedes">,
  ownId: string,
  now: number,
): Promise<PossibleSupersession[]> {
  if (decision.kind !== "decision") return [];
  const already = new Set([ownId, ...(decision.supersedes ?? [])]);
  const said = `${decision.prompt}\n${decision.response}`;
  const ranked = await retrieval.searchTurns(workspace, {
    query: said.slice(0, 1000),
    limit: NEIGHBOURS + already.size,
    mode: "lexical",
    minConfidence: "none",
    conditions: [
      { field: "kind", op: "eq", value: "decision" },
      { field: "valid_until", op: "gt", value: now },
      { field: "valid_from", op: "lte", value: now },
    ],
  });
  const neighbours = ranked.filter((hit) => !already.has(hit.turn.id)).map((hit) => hit.turn);
  return restated(said, neighbours)
    .filter(({ share }) => share >= SAME_SUBJECT)
    .slice(0, CANDIDATES)
    .map(({ record }) => {
      const outcome = textOf(record).response.replace(/\s+/g, " ").trim();
      return {
        id: record.id,
        agent: record.agent,
        recorded_at: new Date(record.recordedAt).toISOString(),
        decision: clip(outcome, DECISION_CHARS) || taskText(record),
      };
    });
}

/**
 * For each earlier decision, the share of its terms (task and outcome), weighed by their rarity among the
 * decisions given (BM25's idf), that `said` repeats; the largest share first.
 */
export function restated(said: string, earlier: readonly StoredTurn[]): Array<{ record: StoredTurn; share: number }> {
  const later = new Set(terms(said));
  const termSets = earlier.map((record) => {
    const { prompt, response } = textOf(record);
    return new Set(terms(`${prompt}\n${response}`));
  });
  const documentFrequency = new Map<string, number>();
  for (const set of termSets) for (const term of set) documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
  // The new decision counts among the documents, so that a word of every earlier one still weighs something.
  const documents = termSets.length + 1;
  const idf = (term: string) => {
    const df = documentFrequency.get(term) ?? 0;
    return Math.log(1 + (documents - df + 0.5) / (df + 0.5));
  };
  return earlier
    .map((record, i) => {
      let repeated = 0;
      let all = 0;
      for (const term of termSets[i]!) {
        const weight = idf(term);
        all += weight;
        if (later.has(term)) repeated += weight;
      }
      return { record, share: all === 0 ? 0 : repeated / all };
    })
    .sort((a, b) => b.share - a.share);
}
