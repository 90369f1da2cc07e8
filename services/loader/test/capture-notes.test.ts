import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CAPTURE_MODEL, featureNames, readUnits, unitFeatures, unitsOf } from "@cairn/reading";
import { describe, expect, it } from "vitest";
import type { Exchange } from "../src/transcript/exchanges.js";
import { notesOf } from "../src/transcript/notes.js";

/**
 * The rules the capture hook heads a memory with (what was decided, what was tried and dropped), each beside the
 * sentence that differs in the one thing the rule reads. Their precision and recall over whole sessions are a
 * bench (`npm run bench -- capture-quality`), not this file.
 */
function exchange(parts: { thought?: string[]; answer?: string; edited?: string[] }): Exchange {
  return {
    sessionId: "s",
    key: "k",
    at: undefined,
    prompt: "p",
    thought: parts.thought ?? [],
    pending: parts.answer ? [parts.answer] : [],
    model: undefined,
    refs: [],
    edited: parts.edited ?? [],
    acted: true,
    recordedByAgent: false,
    start: { offset: 0, line: 1, context: { ordinal: 0 } },
  };
}

describe("capture notes", () => {
  it("keeps a sentence that points back with the one naming what it gives up", () => {
    const named = notesOf(
      exchange({ thought: ["Standing up Meilisearch means a second datastore to sync and back up. Not pursuing that for now."] }),
    );
    expect(named.dropped).toEqual(["Standing up Meilisearch means a second datastore to sync and back up. Not pursuing that for now."]);
    // A sentence that names what it gives up stands alone.
    const alone = notesOf(exchange({ thought: ["The queue lives in memory. Flushing on SIGTERM is not reliable under SIGKILL."] }));
    expect(alone.dropped).toEqual(["Flushing on SIGTERM is not reliable under SIGKILL."]);
  });

  it("reads wanting and giving up in other words than a fixed list", () => {
    const notes = notesOf(
      exchange({
        thought: [
          "Environment variables turned out to be the wrong store for per-user rollout.",
          "Twice the CPU is not the answer for the thumbnails.",
          "The LaunchDarkly plan is too costly for six developers.",
        ],
      }),
    );
    expect(notes.dropped).toHaveLength(3);
    // The same subjects said as plain facts give nothing up.
    const facts = notesOf(
      exchange({ thought: ["Environment variables hold the flags for every service.", "The thumbnails take twice the CPU here."] }),
    );
    expect(facts.dropped).toEqual([]);
  });

  it("takes a failing check for a check, not a dropped approach", () => {
    expect(notesOf(exchange({ thought: ["The tests still fail on the date parsing after the change."] })).dropped).toEqual([]);
    expect(notesOf(exchange({ thought: ["The in-memory cache did not help with the p95 latency at all."] })).dropped).toHaveLength(1);
  });

  it("takes weighing options and announcing the next step for nothing decided", () => {
    const weighing = notesOf(exchange({ thought: ["Two options here: we could use Redis or keep Postgres for the sessions."] }));
    expect(weighing.decided).toEqual([]);
    const committed = notesOf(exchange({ thought: ["We'll use Redis for the session store rather than Postgres."] }));
    expect(committed.decided).toEqual(["We'll use Redis for the session store rather than Postgres."]);
  });

  it("takes two figures set side by side for a measurement, not a choice", () => {
    expect(notesOf(exchange({ answer: "With the trigram index the search takes 12 ms instead of 2.4 s." })).decided).toEqual([]);
    expect(notesOf(exchange({ answer: "Search goes through the trigram index instead of a sequential scan." })).decided).toHaveLength(1);
  });

  it("gives up X and commits to Y in one sentence", () => {
    const notes = notesOf(
      exchange({ thought: ["Caching node_modules is not worth it here. I dropped the idea and kept npm's own download cache."] }),
    );
    expect(notes.dropped[0]).toContain("node_modules");
    expect(notes.decided[0]).toContain("kept npm's own download cache");
    // "Decided against X" gives X up and decides nothing.
    const against = notesOf(exchange({ thought: ["I decided against test retries because they hide the race."] }));
    expect([against.decided, against.dropped.length]).toEqual([[], 1]);
  });

  it("takes the answer's opening as the decision of an exchange that changed files and said none", () => {
    const answer = "Webhooks are written to an outbox table and a worker delivers them: the simulation loses none of 500.";
    expect(notesOf(exchange({ answer, edited: ["src/webhooks/outbox.ts"] })).decided).toEqual([answer]);
    // An exchange that only read code decided nothing by answering.
    expect(notesOf(exchange({ answer })).decided).toEqual([]);
    // Nor does an opening that reports a finding or a figure.
    const finding = notesOf(exchange({ answer: "The export was building every row in an array first.", edited: ["src/export.ts"] }));
    expect(finding.decided).toEqual([]);
    const figure = notesOf(exchange({ answer: "Upload p99 is 1.2 s in the load test.", edited: ["src/upload.ts"] }));
    expect(figure.decided).toEqual([]);
  });

  it("reads a list the answer gives as one note per item: changes made are decisions, options weighed are not", () => {
    const done = [
      "Fixed. On SIGTERM the server now:",
      "",
      "1. sets the health status to `NOT_SERVING`, so readiness takes the pod out;",
      "2. closes the DB pool only after the server has drained.",
      "",
      "- Tried a preStop sleep first: the image has no `sleep` binary; reverted.",
    ].join("\n");
    const notes = notesOf(exchange({ answer: done, edited: ["main.go"] }));
    expect(notes.decided.some((d) => d.includes("NOT_SERVING")) && notes.decided.some((d) => d.includes("DB pool"))).toBe(true);
    expect(notes.dropped).toEqual(["Tried a preStop sleep first: the image has no `sleep` binary; reverted."]);
    // The same items as options to weigh commit to nothing.
    const options = [
      "Options:",
      "1. sets the health status to `NOT_SERVING`, so readiness takes the pod out;",
      "2. closes the DB pool only after the server has drained.",
    ].join("\n");
    expect(notesOf(exchange({ answer: options, edited: ["main.go"] })).decided).toEqual([]);
    // Nor does a list of figures.
    expect(notesOf(exchange({ answer: "Plans:\n- staging: 0 add / 0 change / 0 destroy", edited: ["main.tf"] })).decided).toEqual([]);
  });

  it("keeps a short verdict with what it is about", () => {
    const notes = notesOf(exchange({ answer: "Tried mmap for the file reads with memmap2 as well. Reverted." }));
    expect(notes.dropped).toEqual(["Tried mmap for the file reads with memmap2 as well. Reverted."]);
    expect(notesOf(exchange({ answer: "Tried mmap for the file reads with memmap2 as well. Kept." })).dropped).toEqual([]);
  });

  it("takes a change listed with its reason for a decision, a routine one without for none by the rules, and items under a checks heading for checks", () => {
    const opening = "Date-only values now stay as strings end to end.";
    const item = (why: string) => `${opening}\n- \`formatDay()\` builds a local Date from the parts${why}.`;
    const routineChange = exchange({ answer: item(" for the label"), edited: ["src/lib/dates.ts"] });
    expect(notesOf(routineChange, readUnits).decided).toEqual([opening]);
    // The fitted model, having read authors who list the changes they made as their decisions, adds the item.
    expect(notesOf(routineChange).decided).toEqual([opening, "`formatDay()` builds a local Date from the parts for the label."]);
    const reasoned = notesOf(exchange({ answer: item(", so no time zone enters the path"), edited: ["src/lib/dates.ts"] }));
    expect(reasoned.decided).toEqual([opening, "`formatDay()` builds a local Date from the parts, so no time zone enters the path."]);
    const checks = notesOf(
      exchange({
        answer: `${opening}\n\n**Checks**\n- \`PutObject\` in the installed botocore takes \`IfNoneMatch\`, so the dedup works.`,
        edited: ["pyproject.toml"],
      }),
    );
    expect(checks.decided).toEqual([opening]);
  });

  it("gives up an option rejected in so many words even when the reason is hypothetical, and commits to nothing hedged", () => {
    const rejected = "volatile-lru is out: under volatile-lru the sessions would be the only keys Redis could evict.";
    expect(notesOf(exchange({ thought: [rejected] })).dropped).toEqual([rejected]);
    // A hedge alone gives nothing up, and a hedged choice is no decision.
    expect(notesOf(exchange({ thought: ["volatile-lru could evict the sessions first under memory pressure."] })).dropped).toEqual([]);
    expect(notesOf(exchange({ thought: ["We could go with allkeys-lfu for the fragments cache."] })).decided).toEqual([]);
  });

  it("reads a sentence that opens with an identifier in lower case as a sentence of its own", () => {
    const thought =
      "Either detect the encoding or handle the known cases. charlock_holmes needs libicu-dev in the image, which is heavy for this.";
    expect(notesOf(exchange({ thought: [thought] })).dropped).toEqual([
      "charlock_holmes needs libicu-dev in the image, which is heavy for this.",
    ]);
  });

  it("takes an option weighed and turned down, or declined, for dropped and for no decision", () => {
    const weighed = notesOf(exchange({ thought: ["I could take customer_email out of list_display, but support reads it off the list."] }));
    expect([weighed.decided, weighed.dropped.length]).toEqual([[], 1]);
    const declined = notesOf(exchange({ answer: "I wouldn't switch to distroless now: the healthcheck runs curl." }));
    expect([declined.decided, declined.dropped.length]).toEqual([[], 1]);
    // The same option taken.
    const taken = notesOf(exchange({ answer: "I switched the runtime stage to distroless: the healthcheck now uses the node binary." }));
    expect([taken.decided.length, taken.dropped]).toEqual([1, []]);
  });

  it("reads a listed change's figures after a dash as what it achieved, not as a measurement", () => {
    const item = "`list_select_related` for customer and region — fixes the N+1, the page runs 4 queries instead of 203.";
    expect(notesOf(exchange({ answer: `Done.\n- ${item}`, edited: ["orders/admin.py"] })).decided).toEqual([item]);
    expect(
      notesOf(exchange({ answer: "Done.\n- 4 queries instead of 203 on the orders page.", edited: ["orders/admin.py"] })).decided,
    ).toEqual([]);
  });

  it("notes a choice and a rejection stated without the rules' cues, which the fitted model adds to what the rules read", () => {
    const rejected =
      "I'd rather not rely on raising the file-descriptor limit: it would hide the symptom but we'd still open a new socket per upload, and it needs a node-level change.";
    const chosen =
      "I'll fix the uploader instead: one shared S3 client with a bounded connection pool, a deadline per part, and every response body closed.";
    const said = exchange({
      thought: [`${rejected} ${chosen}`],
      answer: "Fixed; uploads run clean at 200 per second.",
      edited: ["src/upload/client.ts"],
    });
    expect(notesOf(said)).toEqual({ decided: [chosen], dropped: [rejected] });
    // The rules alone read neither sentence.
    expect(notesOf(said, readUnits)).toEqual({ decided: [], dropped: [] });
    // The same subject told as facts, in an exchange that only read code, is neither.
    const facts = exchange({
      thought: ["The uploader opens a new S3 client for every part. Each response body stays open until the collector runs."],
      answer: "The sockets pile up because every part gets its own client.",
    });
    expect(notesOf(facts)).toEqual({ decided: [], dropped: [] });
  });
});

describe("the capture model", () => {
  it("weighs only features the reading still gives: none is left behind by a renamed or removed rule", () => {
    const known = new Set(featureNames());
    const unknown = (names: readonly string[]) => names.filter((f) => !known.has(f));
    expect(CAPTURE_MODEL.features.length).toBeGreaterThan(100);
    expect(unknown(CAPTURE_MODEL.features)).toEqual([]);
    expect(unknown(["rule:decided", "COMMIT&answer", "w:instead", "NO_SUCH_RULE"])).toEqual(["NO_SUCH_RULE"]);
    // The list of names holds what the reading gives: every feature the labelled sessions' texts light is in it.
    const dir = fileURLToPath(new URL("../../../bench/fixtures/capture/tuning/", import.meta.url));
    const emitted = new Set<string>();
    for (const file of readdirSync(dir).filter((f) => f.endsWith(".json"))) {
      const session = JSON.parse(readFileSync(join(dir, file), "utf8")) as {
        exchanges: Array<{ steps: Array<{ think?: string; say?: string }>; answer: string }>;
      };
      for (const e of session.exchanges) {
        const units = [
          ...e.steps.flatMap((s) => [s.think, s.say]).flatMap((t) => (t ? unitsOf(t, false) : [])),
          ...unitsOf(e.answer, true),
        ];
        for (const context of [
          { wrote: true, headline: "any" as const },
          { wrote: false, headline: false as const, reasoningReports: true, declared: "decision" as const },
        ]) {
          const rules = readUnits(units, context);
          units.forEach((_, i) => unitFeatures(units, i, context, rules).forEach((f) => emitted.add(f)));
        }
      }
    }
    expect(emitted.size).toBeGreaterThan(200);
    expect(unknown([...emitted])).toEqual([]);
  });
});
