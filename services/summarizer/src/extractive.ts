import type { Embedder } from "@cairn/memory-core";
import { readUnits, type ReadFunction } from "@cairn/reading";
import type { SessionTurn } from "./session.js";
import { choicesOf, evidenceFor, titleOf, type Choice } from "./choices.js";
import { NEXT_CUE, OPEN_CUE, splitSentences, type Sentence } from "./sentences.js";
import type { StructuredSummary } from "./structured.js";

/** Turns whose sentences are read: the most central ones, every decision, and the last. */
const CENTRAL_TURNS = 12;
const MAX_DECISIONS = 6;
const MAX_DROPPED = 4;
/** Turns holding a choice that are read too (the newest first), beyond the central ones. */
const CHOICE_TURNS = 12;
/** What makes a decision the one the session settled on, beside its centrality: a decision turn, lateness. */
const DECISION_TURN_BONUS = 0.1;
const LATENESS_BONUS = 0.1;
const MAX_OPEN_QUESTIONS = 3;
const MAX_TITLE = 80;
const NEAR_DUPLICATE = 0.95;
/**
 * How much a sentence's likeness to those already picked counts against it (maximal marginal relevance):
 * without it, boilerplate every turn repeats ("keep the build green") is the most central and fills the summary.
 */
const REDUNDANCY_WEIGHT = 0.6;

/**
 * A summary without a chat model, from the session's own sentences ranked by centrality: how close each is
 * to the session's centroid in the embedder's space. The centroid and the first cut come from the turns'
 * stored vectors (no embedding cost); only the sentences of the chosen turns are embedded, so the cost per
 * session stays flat as sessions grow. Decisions and dropped approaches are read from the turns' own words
 * and kinds (choices.ts); the title is the decision the session settled on; the last next step is the last
 * sentence that names one.
 */
export async function extractiveSummary(
  sessionId: string,
  turns: readonly SessionTurn[],
  embedder: Embedder,
  read: ReadFunction = readUnits,
): Promise<StructuredSummary> {
  const turnVectors = await vectorsOf(turns, embedder);
  const centroid = normalize(sum(turnVectors));
  const turnScores = turnVectors.map((v) => dot(v, centroid));
  const chosen = new Set(
    turnScores
      .map((score, index) => ({ score, index }))
      .sort((a, b) => b.score - a.score)
      .slice(0, CENTRAL_TURNS)
      .map((t) => t.index),
  );
  turns.forEach((t, i) => t.kind === "decision" && chosen.add(i));
  chosen.add(turns.length - 1);
  const choices = choicesOf(turns, read);
  [...new Set(choices.map((c) => c.turn))].slice(-CHOICE_TURNS).forEach((i) => chosen.add(i));
  const decisions = choices.filter((c) => c.kind === "decision");

  const sentences = [...chosen].sort((a, b) => a - b).flatMap((index) => sentencesOf(turns[index]!, index));
  // The decisions' own clauses are embedded too: the settled one is chosen partly by centrality.
  const texts = [...sentences.map((s) => s.text), ...decisions.map((d) => d.text)];
  const allVectors = texts.length > 0 ? (await embedder.embed(texts)).map(normalize) : [];
  const vectors = allVectors.slice(0, sentences.length);
  const ranked = sentences.map((sentence, i) => ({ sentence, vector: vectors[i]!, score: dot(vectors[i]!, centroid) }));
  const byScore = [...ranked].sort((a, b) => b.score - a.score);

  const promptSentence = byScore.find((r) => r.sentence.field === "prompt")?.sentence.text;
  const settled = settledTitle(
    decisions.map((d, i) => ({ choice: d, centrality: dot(allVectors[sentences.length + i]!, centroid) })),
    turns.length,
  );
  const title =
    settled ?? cut(promptSentence ?? byScore[0]?.sentence.text ?? firstWords(turns[0]!.prompt) ?? `Session ${sessionId}`, MAX_TITLE);

  const summaryLength = Math.min(7, Math.max(3, 2 + Math.round(Math.log2(turns.length))));
  // The title states the task; the summary is mostly what was found, decided and done (thoughts, responses).
  const maxPromptSentences = Math.ceil(summaryLength / 3);
  const picked: typeof ranked = [];
  const candidates = byScore.filter((r) => r.sentence.text !== promptSentence);
  while (picked.length < summaryLength && candidates.length > 0) {
    let best = 0;
    let bestValue = -Infinity;
    const promptsPicked = picked.filter((p) => p.sentence.field === "prompt").length;
    candidates.forEach((c, i) => {
      if (c.sentence.field === "prompt" && promptsPicked >= maxPromptSentences) return;
      const redundancy = Math.max(0, ...picked.map((p) => dot(p.vector, c.vector)));
      const value = redundancy > NEAR_DUPLICATE ? -Infinity : c.score - REDUNDANCY_WEIGHT * redundancy;
      if (value > bestValue) [best, bestValue] = [i, value];
    });
    if (bestValue === -Infinity) break;
    picked.push(candidates.splice(best, 1)[0]!);
  }
  const summary = picked
    .sort((a, b) => readingOrder(a.sentence, b.sentence))
    .map((p) => p.sentence.text)
    .join(" ");

  return {
    title,
    summary: summary || fallbackText(turns),
    ...decisionsAndDropped(choices, turns),
    open_questions: [
      ...new Set(ranked.filter((r) => r.sentence.field !== "prompt" && OPEN_CUE.test(r.sentence.text)).map((r) => r.sentence.text)),
    ].slice(-MAX_OPEN_QUESTIONS),
    next_steps: [lastNextStep(turns)].filter((s): s is string => Boolean(s)),
  };
}

/**
 * The session's decisions in reading order, each with its evidence, and the approaches it dropped, each with
 * its reason when the turns give one.
 */
function decisionsAndDropped(choices: readonly Choice[], turns: readonly SessionTurn[]): Pick<StructuredSummary, "decisions" | "dropped"> {
  const pick = (kind: Choice["kind"], max: number) => {
    const of = choices.filter((c) => c.kind === kind);
    // Past the limit, decision turns' choices first, then the newest: the session's end is what it settled on.
    const keep = new Set([...of].sort((a, b) => Number(b.fromDecisionTurn) - Number(a.fromDecisionTurn) || b.turn - a.turn).slice(0, max));
    return of.filter((c) => keep.has(c));
  };
  return {
    decisions: pick("decision", MAX_DECISIONS).map((c) => {
      const evidence = evidenceFor(c, turns[c.turn]!, choices);
      return evidence ? { decision: cut(c.text, 300), evidence } : { decision: cut(c.text, 300) };
    }),
    dropped: pick("dropped", MAX_DROPPED).map((c) => {
      const reason = evidenceFor(c, turns[c.turn]!, choices);
      // "Dropped: X" names X; "Abandoned X", "Reverted X" keep the word that says how it was given up.
      const approach = cut(c.text.replace(/^Dropped:?\s*/i, ""), 300);
      return reason ? { approach, reason } : { approach };
    }),
  };
}

/**
 * The title is what the session settled on: of the decisions not dropped later, the most central, with a
 * lead for decision turns and for lateness. A revert kept as the remedy comes after the others: it puts back
 * what was, and what the session built beside it is what it settled on. Undefined when no decision names
 * enough to be a title.
 */
function settledTitle(decisions: Array<{ choice: Choice; centrality: number }>, turnCount: number): string | undefined {
  const lateness = (turn: number) => (turnCount > 1 ? turn / (turnCount - 1) : 1);
  const ranked = decisions
    .map((d) => ({
      ...d,
      value: d.centrality + (d.choice.fromDecisionTurn ? DECISION_TURN_BONUS : 0) + LATENESS_BONUS * lateness(d.choice.turn),
    }))
    .sort((a, b) => Number(Boolean(a.choice.undoes)) - Number(Boolean(b.choice.undoes)) || b.value - a.value);
  for (const d of ranked) {
    const title = titleOf(d.choice, MAX_TITLE);
    if (title) return title;
  }
  return undefined;
}

/** The last sentence that names a next step, from the newest turn back; else how the session ended. */
function lastNextStep(turns: readonly SessionTurn[]): string | undefined {
  for (let i = turns.length - 1; i >= 0; i--) {
    const found = splitSentences(turns[i]!.response)
      .filter((s) => NEXT_CUE.test(s))
      .at(-1);
    if (found) return found;
  }
  return splitSentences(turns.at(-1)!.response).at(-1);
}

function sentencesOf(turn: SessionTurn, index: number): Sentence[] {
  let position = 0;
  return (["prompt", "thought", "response"] as const).flatMap((field) =>
    splitSentences(turn[field]).map((text) => ({ text, turn: index, field, position: position++ })),
  );
}

/** Turns read without a vector (none stored with them, or it is missing) are embedded here. */
async function vectorsOf(turns: readonly SessionTurn[], embedder: Embedder): Promise<number[][]> {
  const missing = turns.flatMap((t, i) => (t.embedding ? [] : [i]));
  const embedded =
    missing.length > 0
      ? await embedder.embed(missing.map((i) => `${turns[i]!.prompt}\n\n${turns[i]!.thought}\n\n${turns[i]!.response}`))
      : [];
  const byIndex = new Map(missing.map((turnIndex, k) => [turnIndex, embedded[k]!]));
  return turns.map((t, i) => normalize(t.embedding ?? byIndex.get(i)!));
}

/** Never empty: a session of fragments too short to rank still says what was asked and how it ended. */
function fallbackText(turns: readonly SessionTurn[]): string {
  const first = turns[0]!;
  const last = turns.at(-1)!;
  const text = [first.prompt, last.response]
    .map((s) => s.trim())
    .filter(Boolean)
    .join(" — ");
  return cut(text || `${turns.length} turns without text.`, 600);
}

const readingOrder = (a: Sentence, b: Sentence) => a.turn - b.turn || a.position - b.position;
const firstWords = (text: string) => text.trim().split(/\s+/).slice(0, 12).join(" ") || undefined;
const cut = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`);
const dot = (a: readonly number[], b: readonly number[]) => a.reduce((s, v, i) => s + v * (b[i] ?? 0), 0);
const sum = (vectors: readonly number[][]) =>
  vectors.reduce((acc, v) => acc.map((x, i) => x + (v[i] ?? 0)), new Array<number>(vectors[0]?.length ?? 0).fill(0));
function normalize(v: readonly number[]): number[] {
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}
