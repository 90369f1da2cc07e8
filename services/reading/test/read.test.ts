import { describe, expect, it } from "vitest";
import { readUnits, unitsOf, type ReadContext } from "../src/index.js";

/**
 * The shared rules, each beside the sentence that differs in the one thing the rule reads. The capture hook
 * (loader) and the extractive summaries (summarizer) read through them; their precision and recall over whole
 * sessions are benches (`capture-quality`, `summaries-quality`), not this file.
 */
const edited: ReadContext = { wrote: true, headline: "any" };
const read = (text: { thought?: string; answer?: string }, context: ReadContext = edited) => {
  const readings = readUnits([...unitsOf(text.thought ?? "", false), ...unitsOf(text.answer ?? "", true)], context);
  return {
    decided: readings.filter((r) => r.kind === "decided").map((r) => r.text),
    dropped: readings.filter((r) => r.kind === "dropped").map((r) => r.text),
  };
};

describe("what a sentence does", () => {
  it("gives something up without deciding anything, unless it names what replaces it", () => {
    const given = read({ thought: "Adopting the LRU cache did not help, so it is reverted." });
    expect(given.dropped).toHaveLength(1);
    expect(given.decided).toEqual([]);
    const replaced = read({ thought: "The in-process cache did not help, so we replaced it with Redis." });
    expect(replaced.dropped).toHaveLength(1);
    expect(replaced.decided).toHaveLength(1);
  });

  it("weighs an option said as a hypothetical in its opening clause, and reads a listed change with its reason", () => {
    const weighed = read({
      answer: "- Salting `account_id`: would break `lag` over `ts`, because a session needs all events in one partition.",
    });
    expect(weighed.decided).toEqual([]);
    const listed = read({ answer: "- Broadcasting the accounts table: the join no longer shuffles, because it fits under the threshold." });
    expect(listed.decided).toHaveLength(1);
  });

  it("takes a command and what it showed for a check, and a file and what it does for a change", () => {
    const check = read({
      answer: "- `npm run e2e -- offline.e2e.ts`: failed at first because the seed data was stale; I updated the fixture and it passes.",
    });
    expect(check.decided).toEqual([]);
    const change = read({ answer: "- `src/sync.ts`: merges field by field because whole records lost edits." });
    expect(change.decided).toHaveLength(1);
  });

  it("reads a next step and an aside as plans, not as what was decided", () => {
    expect(read({ answer: "Not fixed yet; next step is choosing the cookie setting." }).decided).toEqual([]);
    expect(read({ answer: "Fixed by choosing the Lax cookie setting for the session." }).decided).toHaveLength(1);
    expect(read({ answer: "One thing to watch: rollup now waits for a reconcile batch instead of dying." }).decided).toEqual([]);
    expect(read({ answer: "Rollup now waits for a reconcile batch instead of dying." }).decided).toHaveLength(1);
  });

  it("reads a plan of its own next move as a plan, and a plan for the code as a decision", () => {
    expect(read({ thought: "I'll write a quick simulation of 40k clients instead of guessing." }).decided).toEqual([]);
    expect(read({ thought: "Comparing two renders of the new chart instead." }).decided).toEqual([]);
    expect(read({ thought: "I'll switch the listener to receive the whole poll as a list." }).decided).toHaveLength(1);
  });

  it("takes a figure that stays or a new figure beside the old for a measurement", () => {
    expect(read({ thought: "The heap stays at 6 GB under load." }).decided).toEqual([]);
    expect(read({ thought: "The heap limit stays at the default for local runs." }).decided).toHaveLength(1);
    expect(read({ answer: "On yesterday's partition the job now runs in 21m 48s (was 1h 36m)." }).decided).toEqual([]);
    expect(read({ answer: "The job now runs on the salted key for the skewed accounts." }).decided).toHaveLength(1);
  });

  it("reads what an older change did as a finding, and the same change made now as a decision", () => {
    expect(
      read({ thought: "Last Friday's gateway change replaced the wildcard origin list with an explicit allow-list." }).decided,
    ).toEqual([]);
    expect(read({ thought: "We replaced the wildcard origin list with an explicit allow-list." }).decided).toHaveLength(1);
  });

  it("does not head an exchange with its cause", () => {
    expect(read({ answer: "Cause: the session cookie is set to SameSite=Strict by the hardening change." }).decided).toEqual([]);
    expect(read({ answer: "The session cookie is set to SameSite=Lax for the callback." }).decided).toHaveLength(1);
  });

  it("reads a comparison closed on its winner as a decision", () => {
    expect(read({ thought: "Decorrelated jitter gave about the same, so full jitter it is." }).decided).toHaveLength(1);
    expect(read({ thought: "Decorrelated jitter gave about the same as full jitter." }).decided).toEqual([]);
  });

  it("weighs what cannot stay and the smallest change, and reads what stays and what the code now does as decisions", () => {
    expect(read({ thought: "Also the tracker counts blocked requests, so that counter can't stay as is." }).decided).toEqual([]);
    expect(read({ thought: "The counter stays as it is for the badge." }).decided).toHaveLength(1);
    expect(
      read({ thought: "The smallest change is to launch the upload in the app scope instead of the view model scope." }).decided,
    ).toEqual([]);
    expect(read({ thought: "The upload now launches in the app scope instead of the view model scope." }).decided).toHaveLength(1);
  });

  it("reads a choice that names nothing as none, and the same choice with its object as a decision", () => {
    expect(read({ thought: "Reasoning for step 1: weighed the options and chose the simplest." }).decided).toEqual([]);
    expect(read({ thought: "Reasoning for step 1: weighed the options and chose the simplest parser, pest." }).decided).toHaveLength(1);
  });
});
