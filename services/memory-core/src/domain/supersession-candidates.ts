import type { OperationOutput } from "@cairn/openapi";
import { terms } from "../lexical/text-analysis.js";
import { taskText } from "../records/memory-brief.js";
import { textOf, type StoredTurn } from "../records/stored-turn.js";
import { clip } from "../text.js";
import type { AddMemoryRequest } from "../records/types.js";
import type { Condition } from "../records/filters.js";
import type { HybridRetrieval } from "../retrieval/hybrid-retrieval.js";

export type PossibleSupersession = NonNullable<OperationOutput<"add_memory">["possible_supersedes"]>[number];

/** Named at most: a decision rarely settles anew more than one or two earlier ones. */
const CANDIDATES = 3;
/**
 * Live decisions the new one is compared with: the nearest by words, as the comparison is by words too. Their
 * words also weigh the terms. A decision that says it changes something is also compared with as many nearest by
 * meaning.
 */
const NEIGHBOURS = 20;
/**
 * The share of an earlier decision's weighted terms that the new one must repeat to be proposed as settling it
 * anew. Chosen on the labelled pairs, checked on held-out ones (docs/benchmarks.md, "Possible supersessions").
 */
const SAME_SUBJECT = 0.5;
/**
 * How far the earlier decision nearest to a changing one (similarity plus share) must stand above the next one
 * for it to be named as the one changed. Chosen on the labelled pairs (docs/benchmarks.md, "Possible
 * supersessions in other words").
 */
const STANDS_APART = 0.1;
/**
 * Wording by which a decision says it replaces an earlier choice ("moves to", "instead of", "from now on", "is
 * retired"). English: a decision in another language is judged by its words alone.
 */
const CHANGE_WORDING =
  /\b(?:instead|rather than|replac\w*|switch\w*|mov(?:e|es|ed|ing)|migrat\w*|from now on|no longer|any ?more|drop(?:s|ped)?|retir\w*|revok\w*|deprecat\w*|abandon\w*|stop(?:s|ped)?|ends|back to|supersed\w*|revert\w*|phased? out|sunset\w*)\b/i;
const CHANGE_WORDS = new RegExp(CHANGE_WORDING.source, "gi");
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
 *
 * A replacement may also name its subject in other words (UTC for "Europe/Berlin local time", integer cents for
 * "floats"). Meaning alone cannot tell it from a decision of the same area (the embedder puts "the mobile app's
 * image formats" as near to "its image resizing" as any replacement), so meaning is heard only from a decision
 * that says it changes something: then the earlier decision nearest to it by meaning and words together (the
 * cosine similarity of the two stored texts plus the share, the change wording left out) is proposed, when its similarity reaches the embedder's `medium` floor and it
 * stands clearly above the next one.
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
  const changing = CHANGE_WORDING.test(said);
  const conditions: Condition[] = [
    { field: "kind", op: "eq", value: "decision" },
    { field: "valid_until", op: "gt", value: now },
    { field: "valid_from", op: "lte", value: now },
  ];
  const [ranked, near] = await Promise.all([
    retrieval.searchTurns(workspace, {
      query: said.slice(0, 1000),
      limit: NEIGHBOURS + already.size,
      mode: "lexical",
      minConfidence: "none",
      conditions,
    }),
    // Its stored vector is the query: the similarity is the one of the two stored texts, and nothing is embedded.
    changing ? retrieval.nearestTurns(workspace, { like: ownId, conditions }, NEIGHBOURS + already.size) : [],
  ]);
  const byMeaning = near.filter(({ turn }) => !already.has(turn.id));
  const neighbours = new Map(ranked.filter((hit) => !already.has(hit.turn.id)).map((hit) => [hit.turn.id, hit.turn]));
  for (const { turn } of byMeaning) if (!neighbours.has(turn.id)) neighbours.set(turn.id, turn);
  const proposed = restated(said, [...neighbours.values()])
    .filter(({ share }) => share >= SAME_SUBJECT)
    .map(({ record }) => record);
  if (changing) {
    // The words that say a change is made ("from now on") are no words of its subject: changes of two different
    // subjects share them.
    const subject = said.replace(CHANGE_WORDS, " ");
    const shares = new Map(restated(subject, [...neighbours.values()]).map(({ record, share }) => [record.id, share]));
    const changed = nearestApart(byMeaning, shares, retrieval.similarityFloor("medium"));
    if (changed && !proposed.some((record) => record.id === changed.id)) proposed.push(changed);
  }
  return proposed.slice(0, CANDIDATES).map((record) => {
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
 * Of the decisions nearest by meaning, the one nearest by meaning and words together (similarity plus share), if
 * its similarity reaches `floor` and it stands STANDS_APART above the next (or above the floor, alone).
 */
function nearestApart(
  near: ReadonlyArray<{ turn: StoredTurn; similarity: number }>,
  shares: ReadonlyMap<string, number>,
  floor: number,
): StoredTurn | undefined {
  const [first, second] = near
    .map(({ turn, similarity }) => ({ turn, similarity, score: similarity + (shares.get(turn.id) ?? 0) }))
    .sort((a, b) => b.score - a.score);
  if (!first || first.similarity < floor) return undefined;
  return first.score - (second?.score ?? floor) >= STANDS_APART ? first.turn : undefined;
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
