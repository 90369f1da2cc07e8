import type { Embedder } from "@cairn/memory-core";
import type { SessionTurn } from "./session.js";
import { DECISION_CUE, EVIDENCE_CUE, NEXT_CUE, OPEN_CUE, splitSentences, type Sentence } from "./sentences.js";
import type { StructuredSummary } from "./structured.js";

/** Turns whose sentences are read: the most central ones, every decision, and the last. */
const CENTRAL_TURNS = 12;
const MAX_DECISIONS = 6;
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
 * session stays flat as sessions grow. Decisions are the best sentences of decision turns and sentences
 * that say they decide; the last next step is the last sentence that names one.
 */
export async function extractiveSummary(sessionId: string, turns: readonly SessionTurn[], embedder: Embedder): Promise<StructuredSummary> {
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

  const sentences = [...chosen].sort((a, b) => a - b).flatMap((index) => sentencesOf(turns[index]!, index));
  const vectors = sentences.length > 0 ? (await embedder.embed(sentences.map((s) => s.text))).map(normalize) : [];
  const ranked = sentences.map((sentence, i) => ({ sentence, vector: vectors[i]!, score: dot(vectors[i]!, centroid) }));
  const byScore = [...ranked].sort((a, b) => b.score - a.score);

  const promptSentence = byScore.find((r) => r.sentence.field === "prompt")?.sentence.text;
  const title = cut(promptSentence ?? byScore[0]?.sentence.text ?? firstWords(turns[0]!.prompt) ?? `Session ${sessionId}`, MAX_TITLE);

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
    decisions: decisionsOf(ranked, turns),
    open_questions: [...new Set(ranked.filter((r) => r.sentence.field !== "prompt" && OPEN_CUE.test(r.sentence.text)).map((r) => r.sentence.text))].slice(
      -MAX_OPEN_QUESTIONS,
    ),
    next_steps: [lastNextStep(turns)].filter((s): s is string => Boolean(s)),
  };
}

type Ranked = { sentence: Sentence; vector: number[]; score: number };

function decisionsOf(ranked: Ranked[], turns: readonly SessionTurn[]): StructuredSummary["decisions"] {
  const candidates = new Map<number, Ranked>();
  for (const r of ranked) {
    if (r.sentence.field === "prompt") continue;
    const isDecisionTurn = turns[r.sentence.turn]!.kind === "decision";
    if (!isDecisionTurn && !DECISION_CUE.test(r.sentence.text)) continue;
    // One decision per turn: its most central sentence that states one.
    const best = candidates.get(r.sentence.turn);
    const cued = DECISION_CUE.test(r.sentence.text);
    if (!best || (cued && !DECISION_CUE.test(best.sentence.text)) || (cued === DECISION_CUE.test(best.sentence.text) && r.score > best.score)) {
      candidates.set(r.sentence.turn, r);
    }
  }
  const distinct: Ranked[] = [];
  for (const candidate of [...candidates.values()].sort((a, b) => b.score - a.score)) {
    // The same decision restated in a later turn is one decision.
    if (distinct.length < MAX_DECISIONS && !distinct.some((d) => dot(d.vector, candidate.vector) > NEAR_DUPLICATE)) distinct.push(candidate);
  }
  return distinct
    .sort((a, b) => readingOrder(a.sentence, b.sentence))
    .map((d) => {
      const evidence = ranked
        .filter((r) => r.sentence.turn === d.sentence.turn && r !== d && r.sentence.field !== "prompt" && EVIDENCE_CUE.test(r.sentence.text))
        .sort((a, b) => b.score - a.score)[0];
      return evidence ? { decision: d.sentence.text, evidence: evidence.sentence.text } : { decision: d.sentence.text };
    });
}

/** The last sentence that names a next step, from the newest turn back; else how the session ended. */
function lastNextStep(turns: readonly SessionTurn[]): string | undefined {
  for (let i = turns.length - 1; i >= 0; i--) {
    const found = splitSentences(turns[i]!.response).filter((s) => NEXT_CUE.test(s)).at(-1);
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

/** Turns stored before vectors were kept, or whose vector is missing, are embedded now. */
async function vectorsOf(turns: readonly SessionTurn[], embedder: Embedder): Promise<number[][]> {
  const missing = turns.flatMap((t, i) => (t.embedding ? [] : [i]));
  const embedded = missing.length > 0 ? await embedder.embed(missing.map((i) => `${turns[i]!.prompt}\n\n${turns[i]!.thought}\n\n${turns[i]!.response}`)) : [];
  const byIndex = new Map(missing.map((turnIndex, k) => [turnIndex, embedded[k]!]));
  return turns.map((t, i) => normalize(t.embedding ?? byIndex.get(i)!));
}

/** Never empty: a session of fragments too short to rank still says what was asked and how it ended. */
function fallbackText(turns: readonly SessionTurn[]): string {
  const first = turns[0]!;
  const last = turns.at(-1)!;
  const text = [first.prompt, last.response].map((s) => s.trim()).filter(Boolean).join(" — ");
  return cut(text || `${turns.length} turns without text.`, 600);
}

const readingOrder = (a: Sentence, b: Sentence) => a.turn - b.turn || a.position - b.position;
const firstWords = (text: string) => text.trim().split(/\s+/).slice(0, 12).join(" ") || undefined;
const cut = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1).trimEnd()}…`);
const dot = (a: readonly number[], b: readonly number[]) => a.reduce((s, v, i) => s + v * (b[i] ?? 0), 0);
const sum = (vectors: readonly number[][]) => vectors.reduce((acc, v) => acc.map((x, i) => x + (v[i] ?? 0)), new Array<number>(vectors[0]?.length ?? 0).fill(0));
function normalize(v: readonly number[]): number[] {
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}
