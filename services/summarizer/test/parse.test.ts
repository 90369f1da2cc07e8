import { describe, expect, it } from "vitest";
import { MalformedAnswerError, parseSummaryAnswer } from "../src/model/parse.js";

const valid = {
  title: "Redis stream for token refresh",
  summary: "Moved token refresh to a Redis stream.",
  decisions: [
    { decision: "Use a Redis stream", evidence: "p95 38 ms" },
    { decision: "No dead-letter queue yet", evidence: "" },
  ],
  dropped: [
    { approach: "An in-memory queue", reason: "a restart loses it" },
    { approach: "Polling", reason: "" },
  ],
  open_questions: ["Retention?"],
  next_steps: ["Add a dead-letter queue"],
};

describe("reading a model's answer", () => {
  it("takes a bare object, a fenced one, and one inside prose alike", () => {
    const expected = {
      ...valid,
      decisions: [{ decision: "Use a Redis stream", evidence: "p95 38 ms" }, { decision: "No dead-letter queue yet" }],
      dropped: [{ approach: "An in-memory queue", reason: "a restart loses it" }, { approach: "Polling" }],
    };
    expect(parseSummaryAnswer(JSON.stringify(valid))).toEqual(expected);
    expect(parseSummaryAnswer("```json\n" + JSON.stringify(valid, null, 2) + "\n```")).toEqual(expected);
    expect(parseSummaryAnswer(`Sure {not this} — here it is: ${JSON.stringify(valid)} Hope it helps {}`)).toEqual(expected);
  });

  it("repairs what is repairable: a missing title, lists given as one string, decisions given as strings", () => {
    const parsed = parseSummaryAnswer(
      JSON.stringify({
        summary: "Fixed the flaky test. Then left.",
        decisions: ["Use a fake clock"],
        dropped: "Raising the timeout",
        next_steps: "Fix signup too",
      }),
    );
    expect(parsed).toEqual({
      title: "Fixed the flaky test.",
      summary: "Fixed the flaky test. Then left.",
      decisions: [{ decision: "Use a fake clock" }],
      dropped: [{ approach: "Raising the timeout" }],
      open_questions: [],
      next_steps: ["Fix signup too"],
    });
  });

  it("refuses an answer with no object or no summary, beside one that has them", () => {
    expect(() => parseSummaryAnswer("I cannot do that.")).toThrow(MalformedAnswerError);
    expect(() => parseSummaryAnswer(JSON.stringify({ ...valid, summary: "  " }))).toThrow(MalformedAnswerError);
    expect(() => parseSummaryAnswer('{"summary": "cut off')).toThrow(MalformedAnswerError);
    expect(parseSummaryAnswer(JSON.stringify(valid)).summary).toBe(valid.summary);
  });
});
