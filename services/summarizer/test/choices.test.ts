import { describe, expect, it } from "vitest";
import { choicesOf, contentWords, titleOf } from "../src/choices.js";
import type { SessionTurn } from "../src/session.js";
import { splitSentences } from "../src/sentences.js";

/** The rules alone (no embedder): which clauses of a session are decisions and which are dropped approaches. */
const at = Date.parse("2026-12-01T08:00:00.000Z");
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
const decisions = (turns: SessionTurn[]) => choicesOf(turns).filter((c) => c.kind === "decision");
const dropped = (turns: SessionTurn[]) => choicesOf(turns).filter((c) => c.kind === "dropped");

describe("reverts", () => {
  const turns = session([
    {
      prompt: "PAY-12: checkout latency doubled after yesterday's release 4.2 of the pricing service.",
      thought: "Release 4.2 added a synchronous call to the tax service on every price lookup.",
      response: "The tax call is the likely cause. Next step: mitigate.",
    },
    {
      prompt: "PAY-12: mitigate.",
      thought: "Raised the pricing connection pool from 10 to 40. Latency did not move.",
      response: "Pool raised; no change in latency.",
    },
    {
      prompt: "PAY-12: stop the latency.",
      thought:
        "Reverted the connection pool change, since the pool was never the bottleneck. Rolled back release 4.2 of the pricing service, because the tax call needs a cache before it can ship.",
      response: "Release 4.1 is back in production; checkout p95 back to 310 ms.",
    },
  ]);

  it("drops a revert of the session's own earlier change, and keeps a revert of what predates the session as the remedy", () => {
    expect(dropped(turns).some((c) => /connection pool/.test(c.text))).toBe(true);
    expect(decisions(turns).some((c) => /connection pool/.test(c.text))).toBe(false);
    expect(decisions(turns).find((c) => /release 4\.2/.test(c.text))).toMatchObject({ undoes: true });
    expect(dropped(turns).some((c) => /release 4\.2/.test(c.text))).toBe(false);
  });

  it("drops a revert of a change its own turn made, however it is worded", () => {
    const own = session([
      {
        prompt: "GO-58: bound the upstream calls.",
        thought: "Set a 2 s timeout on the shared http client. The batch endpoint then failed whenever 50 calls took more than 2 s.",
        response: "Took the client-wide timeout out again: it breaks the batch endpoint.",
      },
    ]);
    expect(dropped(own).map((c) => c.text)).toEqual([expect.stringMatching(/^Dropped: Took the client-wide timeout out again/)]);
    expect(decisions(own).some((c) => /timeout/.test(c.text))).toBe(false);
  });
});

describe("choices without a cue word", () => {
  const turns = session([
    {
      prompt: "AUTH-9: what happens when Redis is down?",
      thought:
        "The lock client now falls back to refreshing without the lock after a 200 ms connect timeout. A pod that hangs now takes a minute to restart. A daily check compares the DNS records against config/dns/expected.yaml, so a drift is caught the same day. Heap usage grows with RSS, so it is a JS heap leak.",
      response: "Fallback added. Next step: deploy.",
    },
  ]);

  it("reads a new arrangement stated in the present as a decision, and an outcome stated the same way as none", () => {
    expect(decisions(turns).some((c) => /falls back to refreshing/.test(c.text))).toBe(true);
    expect(decisions(turns).some((c) => /now takes a minute/.test(c.text))).toBe(false);
  });

  it("reads a statement with its purpose as a decision, and a conclusion as none", () => {
    expect(decisions(turns).some((c) => /daily check compares/.test(c.text))).toBe(true);
    expect(decisions(turns).some((c) => /heap leak/.test(c.text))).toBe(false);
  });
});

describe("alternatives weighed and not taken", () => {
  const turns = session([
    {
      prompt: "WEB-640: shrink the charts.",
      thought:
        "We could also move the charts to uPlot, but it has no pie charts. It would be faster to skip the review, but we will not. Keeping one domain and warming it up was considered, but it leaves resets exposed. Decided to load the payment step in the hosted page instead of embedding their iframe. The database check moves to /readyz, so a busy pod is taken out of the endpoints instead of being killed.",
      response: "Charts trimmed. Next step: measure.",
    },
  ]);

  it("lists 'we could X, but' and 'X was considered, but' as dropped, and not a pronoun's 'would ..., but'", () => {
    expect(dropped(turns).some((c) => /uPlot/.test(c.text))).toBe(true);
    expect(dropped(turns).some((c) => /one domain/.test(c.text))).toBe(true);
    expect(dropped(turns).some((c) => /skip the review/.test(c.text))).toBe(false);
    expect(decisions(turns).some((c) => /uPlot/.test(c.text))).toBe(false);
  });

  it("takes a decision's 'instead of' an approach as dropped, and not 'instead of' an outcome", () => {
    expect(dropped(turns).some((c) => /embedding their iframe/.test(c.text))).toBe(true);
    expect(dropped(turns).some((c) => /being killed/.test(c.text))).toBe(false);
    expect(decisions(turns).some((c) => /moves to \/readyz/.test(c.text))).toBe(true);
  });
});

describe("stored turns read with the capture hook's rules", () => {
  it("keeps a revert that names nothing with the sentence before it, which names what was dropped", () => {
    const turns = session([
      {
        kind: "attempt",
        prompt: "LIVE-88: reconnect with exponential backoff.",
        thought: "Tried plain exponential backoff, capped at 30 s. The waves stayed synchronized.",
        response: "Plain exponential backoff keeps the clients in lockstep; reverted it in socket.ts. Next step: jitter.",
      },
    ]);
    expect(dropped(turns).some((c) => /Plain exponential backoff keeps the clients in lockstep/.test(c.text))).toBe(true);
    // The revert alone would name nothing: no entry is only "Reverted it in socket.ts."
    expect(dropped(turns).some((c) => /^Reverted it in socket\.ts\.?$/.test(c.text))).toBe(false);
  });

  it("reads a revert reported in few words: of an older commit it is the remedy, said twice it is one", () => {
    const turns = session([
      {
        prompt: "PUSH-64: why did no alert fire?",
        thought: "Commit a3c77e0 retries every APNs error 5 times and counts the exhausted ones in a metric without an alert.",
        response: "a3c77e0's retry-everything reverted in notifier/src/retry.ts; the tests cover 429 and 503 retried.",
      },
    ]);
    expect(decisions(turns)).toEqual([
      expect.objectContaining({ text: expect.stringMatching(/^A3c77e0's retry-everything reverted/), undoes: true }),
    ]);
    expect(dropped(turns).some((c) => /a3c77e0/i.test(c.text))).toBe(false);
    const twice = session([
      {
        prompt: "PUSH-64: why did no alert fire?",
        thought: "Reverted the retry-everything part of a3c77e0: only 429 and 503 are retried now.",
        response: "a3c77e0's retry-everything reverted in notifier/src/retry.ts; the tests cover 429 and 503 retried.",
      },
    ]);
    expect(decisions(twice).filter((c) => /a3c77e0/i.test(c.text))).toHaveLength(1);
  });

  it("takes a response that tells a change as done for the turn's decision when nothing else is one, and a description for none", () => {
    const added = session([
      {
        prompt: "DATA-302: catch duplicates after each load.",
        thought: "dbt_utils has unique_combination_of_columns, which runs as a plain SELECT over the table.",
        response: "Added a dbt test unique_combination_of_columns on (shop_id, order_id), run after each load.",
      },
    ]);
    expect(decisions(added).map((c) => c.text)).toEqual([expect.stringMatching(/^Added a dbt test unique_combination_of_columns/)]);
    const described = session([
      {
        prompt: "DATA-302: catch duplicates after each load.",
        thought: "dbt_utils has unique_combination_of_columns, which runs as a plain SELECT over the table.",
        response: "The dbt docs describe unique_combination_of_columns for exactly this case.",
      },
    ]);
    expect(decisions(described)).toEqual([]);
  });

  it("titles a comparison closed on its winner by the winner", () => {
    const turns = session([
      {
        prompt: "LIVE-88: spread the reconnects across clients.",
        thought: "Decorrelated jitter gave about the same peak and its delays are harder to reason about in a test, so full jitter it is.",
        response: "socket.ts reconnects with full jitter. Next step: a server-side hint.",
      },
    ]);
    const chosen = decisions(turns).find((c) => /full jitter it is/.test(c.text));
    expect(chosen).toBeDefined();
    expect(titleOf(chosen!, 80)).toBe("Full jitter");
  });

  it("reads 'I'll <verb>' in a thought as the agent's next move, and 'we'll <verb>' as a decision", () => {
    const plan = session([
      { prompt: "LIVE-88: reconnects.", thought: "I'll write a quick simulation of the reconnect waves first.", response: "Simulating." },
    ]);
    expect(decisions(plan)).toEqual([]);
    const chosen = session([{ prompt: "LIVE-88: reconnects.", thought: "We'll use full jitter for every reconnect.", response: "Done." }]);
    expect(decisions(chosen)).toHaveLength(1);
  });
});

describe("the words the rules read", () => {
  it("ends a sentence before a lower-case identifier, but not after an abbreviation", () => {
    expect(splitSentences("Tried bundlewatch first, but it needs a token. size-limit runs in CI with a budget.")).toEqual([
      "Tried bundlewatch first, but it needs a token.",
      "size-limit runs in CI with a budget.",
    ]);
    expect(splitSentences("Pick a small library, e.g. date-fns or dayjs, for the dates.")).toHaveLength(1);
  });

  it("counts no modal as a content word", () => {
    const words = contentWords("adding the origin would need the same review");
    expect(words).toContain("origin");
    expect(words).not.toContain("would");
  });
});
