import { describe, expect, it } from "vitest";
import { extractiveSummary } from "../src/extractive.js";
import type { SessionTurn } from "../src/session.js";
import { sharedEmbedder } from "./support.js";

const at = Date.parse("2026-11-29T10:00:00.000Z");
const session = (turns: Array<Partial<SessionTurn> & Pick<SessionTurn, "prompt" | "thought" | "response">>): SessionTurn[] =>
  turns.map((t, i) => ({
    id: `t${i}`,
    agent: "alice",
    kind: "turn",
    recordedAt: at + i * 1000,
    happenedAt: at + i * 1000,
    embedding: undefined,
    ...t,
  }));

describe("the extractive summary", () => {
  it("ranks the session's own sentences, keeps its decisions with their evidence and the last next step", async () => {
    const turns = session([
      {
        prompt: "Make the nightly invoice export finish before 6 am.",
        thought: "The export runs for three hours and writes one CSV row at a time.",
        response: "Profiled it: 80% of the time is in the CSV writer flushing every row. Next step: buffer the writer.",
      },
      {
        prompt: "Buffer the CSV writer of the invoice export.",
        thought: "A 64 KB buffer keeps memory flat.",
        response: "Buffered writes: the export now takes 40 minutes. Next step: parallelize per customer.",
      },
      {
        kind: "decision",
        prompt: "Decide how to parallelize the invoice export.",
        thought:
          "We decided to split the export per customer shard instead of per day. The benchmark showed 4 shards finish in 12 minutes against 25 for daily splits.",
        response: "Shard-parallel export merged behind a flag.",
      },
      { prompt: "Check the coffee machine order for the office.", thought: "Unrelated errand for the team.", response: "Ordered beans." },
      {
        prompt: "Roll out the sharded invoice export.",
        thought: "Is the shard count right for the largest customer?",
        response: "Enabled in staging. Next step: enable the sharded export in production on Monday.",
      },
      { prompt: "Write the rollout note.", thought: "Keep it short.", response: "Note posted in the release channel." },
    ]);
    const summary = await extractiveSummary("export-perf", turns, await sharedEmbedder());

    const sentences = turns.flatMap((t) => [t.prompt, t.thought, t.response]).join(" ");
    expect(summary.summary.length).toBeGreaterThan(40);
    for (const sentence of summary.summary.split(/(?<=[.!?])\s+/)) expect(sentences).toContain(sentence);
    expect(summary.summary).not.toContain("coffee");
    expect(summary.title.length).toBeLessThanOrEqual(80);
    expect(summary.title).toMatch(/export/i);
    expect(summary.decisions).toContainEqual({
      decision: "We decided to split the export per customer shard instead of per day.",
      evidence: "The benchmark showed 4 shards finish in 12 minutes against 25 for daily splits.",
    });
    expect(summary.next_steps).toEqual(["Next step: enable the sharded export in production on Monday."]);
    expect(summary.open_questions).toEqual(["Is the shard count right for the largest customer?"]);
  });

  it("is never empty, even for a session of fragments too short to rank", async () => {
    const summary = await extractiveSummary("tiny", session([{ prompt: "ok", thought: "", response: "done" }]), await sharedEmbedder());
    expect(summary.title).toBe("ok");
    expect(summary.summary).toBe("ok — done");
    expect(summary.decisions).toEqual([]);
  });
});
