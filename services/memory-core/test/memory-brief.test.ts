import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { tokenize, toTerm, terms } from "../src/lexical/text-analysis.js";
import { snippetText } from "../src/lexical/snippets.js";
import { listingText } from "../src/records/memory-brief.js";
import { buildTurnRecord } from "../src/records/turn-record.js";
import { turnOf, type StoredTurn } from "../src/records/stored-turn.js";

/**
 * A brief hit's text (records/memory-brief.ts, `snippetText`): the stretch of a turn's text that holds most of the
 * query's words, found for every hit of every query_raw_memories on the request thread.
 */

const record = (prompt: string, thought: string, response: string): StoredTurn => {
  const built = buildTurnRecord({
    input: { session_id: "brief", prompt, thought, response },
    agent: "dev",
    idempotencyKey: `brief-${prompt}-${thought}-${response}`,
    recordedAt: Date.now(),
    seq: 1,
    writeId: "w-1",
    source: "agent",
  });
  return turnOf({ id: "t1", document: built.document, metadata: built.metadata });
};

/** snippetText as first written, analysing every word where it stands: the oracle of the one in use. */
function referenceSnippet(text: string, query: string, chars = 200): string | undefined {
  const wanted = new Set(terms(query));
  const hits: Array<{ at: number; term: string }> = [];
  for (const match of text.matchAll(/\S+/g)) {
    for (const token of tokenize(match[0])) {
      const term = toTerm(token);
      if (term !== null && wanted.has(term)) hits.push({ at: match.index, term });
    }
  }
  if (hits.length === 0) return undefined;
  let best = { start: hits[0]!.at, score: -1 };
  for (let i = 0, j = 0; i < hits.length; i++) {
    while (j < hits.length && hits[j]!.at < hits[i]!.at + chars) j++;
    const score = new Set(hits.slice(i, j).map((h) => h.term)).size;
    if (score > best.score) best = { start: hits[i]!.at, score };
  }
  const start = Math.max(0, text.lastIndexOf(" ", Math.max(0, best.start - 40)) + 1);
  const cut = text.slice(start, start + chars);
  const end = start + cut.length < text.length ? cut.lastIndexOf(" ") : cut.length;
  return `${start > 0 ? "…" : ""}${cut.slice(0, end > 0 ? end : cut.length).trimEnd()}${start + cut.length < text.length ? "…" : ""}`;
}

const filler = "We weighed the options and kept the simpler version of the loop. ".repeat(8);

describe("a brief hit's text", () => {
  it("is the stretch that holds the query's words, or the turn's listing when it holds none", () => {
    const turn = record(
      "Fix the flaky login test",
      `${filler} The zeppelin hangar doors jammed after the cache stampede. ${filler}`,
      "Done.",
    );
    const snippet = snippetText(turn, "zeppelin hangar");
    expect(snippet).toContain("zeppelin hangar doors jammed");
    expect(snippet.length).toBeLessThanOrEqual(202);
    // No word of the query in it: the listing, which begins with the task.
    const none = snippetText(turn, "marmalade orbit");
    expect(none).not.toContain("zeppelin");
    expect(none).toBe(listingText(turn));
  });

  it("is what analysing every word where it stands gives (property)", () => {
    const words = fc.constantFrom(
      "zeppelin",
      "hangars",
      "cache",
      "stampede",
      "refreshToken",
      "2022-11-09",
      "November",
      "2022",
      "the",
      "went",
      "go",
      "会话",
    );
    const text = fc.array(fc.oneof(words, fc.string({ maxLength: 6 })), { minLength: 20, maxLength: 120 }).map((w) => w.join(" "));
    const query = fc.array(words, { minLength: 1, maxLength: 4 }).map((w) => w.join(" "));
    fc.assert(
      fc.property(text, query, (thought, asked) => {
        const turn = record("task", thought, "done");
        const full = ["task", thought, "done"].join(" · ").replace(/\s+/g, " ").trim();
        const expected = full.length <= 200 ? full : (referenceSnippet(full, asked) ?? listingText(turn));
        expect(snippetText(turn, asked)).toBe(expected);
      }),
      { numRuns: 300, seed: 20261202 },
    );
  });

  describe("of a long turn", () => {
    /** Characters given to the word segmenter (Intl.Segmenter), which cuts unspaced scripts into words: the analysis of such text. */
    const segment = Intl.Segmenter.prototype.segment;
    let segmented = 0;
    const countSegmented = () => {
      segmented = 0;
      Intl.Segmenter.prototype.segment = function (this: Intl.Segmenter, input: string) {
        segmented += input.length;
        return segment.call(this, input);
      };
    };
    afterEach(() => {
      Intl.Segmenter.prototype.segment = segment;
    });
    /** Unspaced Chinese that holds neither 缓存 nor 决定: characters drawn from a fixed pool by a fixed sequence. */
    const pool =
      "的一是不了人我在有他这为之大来以个中上们到说国和地也子时道出而要于就下得可你年生自会那后能对着事其里所去行过家十用发天如然";
    const chinese = (chars: number, seed: number) =>
      Array.from({ length: chars }, (_, i) => pool[(i * 7 + seed * 13 + ((i * i) % 11)) % pool.length]).join("");

    it("analyses a bounded head of each field, and places the snippet at the word found in a run without spaces", () => {
      const run = 16_000;
      // 缓存决定 ("cache decision") 600 characters into the thought's one run of 16,000 characters.
      const thought = `${chinese(600, 2)}缓存决定${chinese(run - 604, 3)}`;
      const turn = record(chinese(run, 1), thought, chinese(run, 4));
      expect(turn.text!.thought.length + turn.text!.prompt.length + turn.text!.response.length).toBe(3 * run);
      countSegmented();
      const snippet = snippetText(turn, "缓存决定");
      // Positive: the word is found and shown, although it is nowhere near the run's start.
      expect(snippet).toContain("缓存决定");
      expect(segmented).toBeGreaterThan(0);
      // Bounded: at most the head of each field (1,024 characters) and the query, not the 48,000 characters held.
      expect(segmented).toBeLessThanOrEqual(3 * 1024 + "缓存决定".length);
      expect([...snippet].length).toBeLessThanOrEqual(202);
      expect(Buffer.byteLength(snippet)).toBeLessThanOrEqual(3 * 202);
    });

    it("finds words in the head of a field and not past it, where the listing stands in", () => {
      const head = `${filler.slice(0, 400)} The zeppelin hangar doors jammed. ${filler}`;
      const deep = `${filler.repeat(3)} The marmalade orbit decayed. ${filler}`;
      expect(deep.indexOf("marmalade")).toBeGreaterThan(1024);
      const turn = record("Fix the flaky login test", head, deep);
      expect(snippetText(turn, "zeppelin hangar")).toContain("zeppelin hangar doors jammed");
      // Past the head of the response: not looked for, so the listing, as for a hit by meaning alone.
      expect(snippetText(turn, "marmalade orbit")).toBe(listingText(turn));
    });
  });
});
