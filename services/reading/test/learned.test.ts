import { describe, expect, it } from "vitest";
import { readUnits, readUnitsBy, unitFeatures, unitsOf, type LinearModel, type ReadContext } from "../src/index.js";

/**
 * The linear scorer's plumbing: features named as the rules read a unit, weights applied by name, a threshold per
 * reader. Its fit and its figures beside the rules are a bench (`npm run bench -- reading-fit --loao`), not this file.
 */
const edited: ReadContext = { wrote: true, headline: "any" };
const units = [
  ...unitsOf("Tried an in-process LRU cache. It did not help, so I reverted it. We settled on Redis for the sessions.", false),
  ...unitsOf("The session store keeps one key per user.", true),
];

/** A model that weighs only the named features, each with weight 4 over a bias of -2. */
function modelOf(decided: string[], dropped: string[], threshold = 0.5): LinearModel {
  const features = [...new Set([...decided, ...dropped])];
  const kind = (on: string[]) => ({
    bias: -2,
    weights: features.map((f) => (on.includes(f) ? 4 : 0)),
    threshold: { notes: threshold, reports: threshold },
  });
  return { features, decided: kind(decided), dropped: kind(dropped) };
}

describe("reading by a linear model", () => {
  it("reads what the rules read when it weighs only the rules' own readings", () => {
    const rules = readUnits(units, edited);
    expect(rules.filter((r) => r.kind === "decided").length).toBeGreaterThan(0);
    expect(rules.filter((r) => r.kind === "dropped").length).toBeGreaterThan(0);
    expect(readUnitsBy(modelOf(["rule:decided"], ["rule:dropped"]))(units, edited)).toEqual(rules);
  });

  it("names a unit's features by what the rules say of it and where it stands", () => {
    const rules = readUnits(units, edited);
    const settled = unitFeatures(units, 2, edited, rules);
    expect(settled).toEqual(expect.arrayContaining(["rule:decided", "COMMIT", "COMMIT&reasoning", "w:settled", "wrote"]));
    expect(settled).not.toContain("answer");
    const answer = unitFeatures(units, 3, edited, rules);
    expect(answer).toContain("answer");
    expect(answer).not.toContain("COMMIT");
  });

  it("reads a unit the rules pass over when its features weigh enough, by the reader's threshold", () => {
    const plain = [...unitsOf("The session store keeps one key per user.", false)];
    expect(readUnits(plain, { wrote: false, headline: false })).toEqual([]);
    const model = modelOf(["w:keeps"], []);
    expect(readUnitsBy(model)(plain, { wrote: false, headline: false }).map((r) => r.kind)).toEqual(["decided"]);
    // The same model, with the threshold for reports out of reach, reads nothing in a report.
    const strict = { ...model, decided: { ...model.decided, threshold: { notes: 0.5, reports: 0.99 } } };
    expect(readUnitsBy(strict)(plain, { wrote: false, headline: false, reasoningReports: true })).toEqual([]);
    expect(readUnitsBy(strict)(plain, { wrote: false, headline: false })).toHaveLength(1);
  });
});
