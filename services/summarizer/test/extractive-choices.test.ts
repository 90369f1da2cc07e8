import { describe, expect, it } from "vitest";
import { extractiveSummary } from "../src/extractive.js";
import type { SessionTurn } from "../src/session.js";
import { containsAny, fixtureTurns, matches, sessionFixture } from "./fixtures/sessions.js";
import { sharedEmbedder } from "./support.js";

/** Through `extractiveSummary` with the real local embedder, over labelled sessions (fixtures/sessions/). */
const summarize = async (id: string) => extractiveSummary(id, fixtureTurns(sessionFixture(id)), await sharedEmbedder());
const chosen = (s: { decisions: Array<{ decision: string }> }) => s.decisions.map((d) => d.decision);
const dropped = (s: { dropped: Array<{ approach: string }> }) => s.dropped.map((d) => d.approach);

describe("the extractive summary's choices", () => {
  it("titles a session with the cache it settled on, and lists the cache it abandoned as dropped", async () => {
    const summary = await summarize("a4-caching");
    expect(summary.title).toMatch(/redis/i);
    expect(summary.title).not.toMatch(/lru|in[- ]process/i);
    // The first decision (an in-process LRU) was abandoned two turns later: dropped, not a decision.
    expect(dropped(summary).some((d) => matches(d, ["process", "lru"]))).toBe(true);
    expect(chosen(summary).some((d) => matches(d, ["redis", "cache"]))).toBe(true);
    expect(chosen(summary).some((d) => /lru/i.test(d))).toBe(false);
  });

  it("names the fix a flaky-test session settled on, not the retry it reverted, and keeps findings out of the decisions", async () => {
    const summary = await summarize("a2-flaky-ci");
    expect(summary.title).toMatch(/fake timers/i);
    expect(containsAny(summary.title, ["retry"])).toBe(false);
    expect(dropped(summary).some((d) => matches(d, ["retry", "wrapper"]))).toBe(true);
    expect(chosen(summary).some((d) => matches(d, ["retry"]))).toBe(false);
    // The root cause is a finding: it is in the session (and its summary text may say it), but it is no decision.
    expect(chosen(summary).some((d) => matches(d, ["fake", "timer"]))).toBe(true);
    expect(sessionFixture("a2-flaky-ci").turns.some((t) => /race on the wall clock/.test(t.response))).toBe(true);
    expect(chosen(summary).some((d) => matches(d, ["race", "wall", "clock"]))).toBe(false);
  });

  it("reads a held-out session the rules were not developed on the same way", async () => {
    const summary = await summarize("b2-api-pagination");
    expect(summary.title).toMatch(/cursor pagination/i);
    expect(summary.title).not.toMatch(/offset/i);
    expect(dropped(summary).some((d) => matches(d, ["offset", "pagination"]))).toBe(true);
    expect(chosen(summary).some((d) => matches(d, ["offset"]) && !matches(d, ["cursor"]))).toBe(false);
    expect(chosen(summary).some((d) => matches(d, ["has_more", "total"]))).toBe(true);
    expect(chosen(summary).some((d) => matches(d, ["times", "out", "50k"]))).toBe(false);
  });

  it("keeps a hotfix revert of an older release as a decision, but titles the session with the fix it built", async () => {
    const summary = await summarize("a5-perf-revert");
    expect(chosen(summary).some((d) => matches(d, ["revert", "8.12", "hotfix"]))).toBe(true);
    expect(dropped(summary).some((d) => matches(d, ["revert", "8.12"]))).toBe(false);
    expect(summary.title).toMatch(/compile/i);
    expect(summary.title).not.toMatch(/revert/i);
  });

  it("tells a finding from a decision, lists an attempt turn as dropped, and does not take a next step for a decision", async () => {
    const at = Date.parse("2026-12-01T08:00:00.000Z");
    const turns: SessionTurn[] = [
      {
        kind: "turn",
        prompt: "DOCS-3: the docs site build takes 9 minutes on CI.",
        thought:
          "The Markdown renderer is slow: 7 of the 9 minutes are spent highlighting code blocks. The image optimizer takes 40 seconds.",
        response: "Highlighting is the hot spot. Next step: switch the highlighter to a cached one.",
      },
      {
        kind: "attempt",
        prompt: "DOCS-3: highlight code blocks in a worker pool.",
        thought: "Ran the highlighter in 4 worker threads. The build took 8 minutes 30 seconds: the CI runner has 2 cores.",
        response: "Worker pool gives almost nothing on 2 cores. Next step: cache highlighted blocks.",
      },
      {
        kind: "turn",
        prompt: "DOCS-3: cache highlighted blocks.",
        thought:
          "Chose a content-hash cache of highlighted blocks stored in the CI cache directory, because 95% of code blocks do not change between builds. Build time with a warm cache: 2 minutes 10 seconds (npm run docs:build).",
        response: "Highlight cache merged in docs/build/highlight-cache.ts. Next step: evict entries older than 30 days.",
      },
    ].map((t, i) => ({ ...t, id: `d${i}`, agent: "alice", recordedAt: at + i * 1000, happenedAt: at + i * 1000, embedding: undefined }));
    const summary = await extractiveSummary("docs-build", turns, await sharedEmbedder());

    expect(chosen(summary)).toEqual([expect.stringMatching(/^Chose a content-hash cache of highlighted blocks/)]);
    expect(summary.decisions[0]!.evidence).toMatch(/2 minutes 10 seconds/);
    expect(chosen(summary).some((d) => /renderer is slow|hot spot/i.test(d))).toBe(false);
    expect(chosen(summary).some((d) => /next step/i.test(d))).toBe(false);
    expect(summary.next_steps).toEqual(["Next step: evict entries older than 30 days."]);
    // An attempt turn without a word of dropping it (and no "tried" sentence) is listed by its task: what was tried.
    expect(dropped(summary)).toEqual([expect.stringMatching(/worker pool/)]);
    expect(chosen(summary).some((d) => /worker pool/.test(d))).toBe(false);
    expect(summary.title).toMatch(/content-hash cache/i);
    expect(summary.title).not.toMatch(/worker/i);
  });
});
