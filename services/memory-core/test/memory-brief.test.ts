import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { tokenize, toTerm, terms } from "../src/lexical/text-analysis.js";
import { listingText, snippetText } from "../src/records/memory-brief.js";
import { buildTurnRecord } from "../src/records/turn-record.js";
import type { StoredRecord } from "../src/store/chroma-store.js";

/**
 * A brief hit's text (records/memory-brief.ts, `snippetText`): the stretch of a turn's text that holds most of the
 * query's words, found for every hit of every query_raw_memories on the request thread.
 */

const record = (prompt: string, thought: string, response: string): StoredRecord => {
  const built = buildTurnRecord({
    input: { session_id: "brief", prompt, thought, response },
    agent: "dev",
    idempotencyKey: `brief-${prompt}-${thought}-${response}`,
    recordedAt: Date.now(),
    seq: 1,
    writeId: "w-1",
    source: "agent",
  });
  return { id: "t1", document: built.document, metadata: built.metadata };
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
});
