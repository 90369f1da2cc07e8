import { readFile } from "node:fs/promises";
import { beforeAll, describe, expect, it } from "vitest";
import { startOpenAIStub, wordVector } from "../../../testing/openai-stub.js";
import { feedStream } from "../src/ledger/change-feed.js";
import { DEFAULT_TUNING, type RetrievalTuning } from "../src/retrieval/retrieval-tuning.js";
import { turnDocument } from "../src/records/turn-record.js";
import { createEmbedder } from "../src/embeddings/create.js";
import { silentLogger } from "../src/logger.js";
import { http, makeToken, startCairn, uniqueWorkspace, useCairn } from "./support/harness.js";

const workspace = uniqueWorkspace("hybrid");
const dev = makeToken(workspace, "dev");
const cairn = useCairn([dev]);

const add = async (session_id: string, prompt: string, thought: string, response: string) => {
  const res = await http(cairn.url, "POST", "/v1/memories", { token: dev.token, body: { session_id, prompt, thought, response } });
  expect(res.status).toBe(201);
  return res.body.id as string;
};
const query = async (body: Record<string, unknown>, base = cairn.url) => {
  const res = await http(base, "POST", "/v1/memories/query", { token: dev.token, body });
  expect(res.status).toBe(200);
  return res.body as {
    hits: Array<{ score: number; confidence: string; matched_by: string[]; memory: { id: string } }>;
    confidence: string;
  };
};

describe("hybrid retrieval", () => {
  it("finds an exact identifier lexically where embeddings alone do not put it first", async () => {
    // Three near-identical incidents: only the ticket number tells them apart.
    const ids: string[] = [];
    for (const ticket of ["PAY-8841", "PAY-8842", "PAY-8843"]) {
      ids.push(
        await add(
          "hybrid-ids",
          `Investigate the checkout timeout reported in ${ticket}.`,
          "The payment provider answered slowly during the evening peak; retries doubled the load.",
          "Added a circuit breaker around the provider call; next, tune its thresholds.",
        ),
      );
    }
    const hybrid = await query({ query: "PAY-8842", limit: 3 });
    expect(hybrid.hits[0]!.memory.id).toBe(ids[1]);
    expect(hybrid.hits[0]!.matched_by).toContain("lexical");
    const lexical = await query({ query: "PAY-8842", limit: 3, mode: "lexical" });
    expect(lexical.hits.map((h) => h.memory.id)[0]).toBe(ids[1]);
    expect(lexical.hits.every((h) => h.matched_by.join() === "lexical")).toBe(true);
    const semantic = await query({ query: "PAY-8842", limit: 3, mode: "semantic" });
    expect(semantic.hits.every((h) => h.matched_by.join() === "semantic")).toBe(true);
    expect(semantic.hits.map((h) => h.memory.id).sort()).toEqual([...ids].sort());
    // The dense side cannot tell the three apart as the identifier does: one level for all three there, the
    // identifier's record above the others in the hybrid answer.
    expect(new Set(semantic.hits.map((h) => h.confidence)).size).toBe(1);
    const levels = ["none", "low", "medium", "high"];
    for (const other of hybrid.hits.slice(1)) {
      expect(levels.indexOf(hybrid.hits[0]!.confidence)).toBeGreaterThan(levels.indexOf(other.confidence));
    }
  });

  it("finds a paraphrase that shares no words semantically", async () => {
    const target = await add(
      "hybrid-paraphrase",
      "The database migration broke production on Friday.",
      "Rolled the schema back; the new column lacked a default value.",
      "Service restored; next, test migrations against a copy of production data.",
    );
    await add("hybrid-paraphrase", "Order new office chairs.", "The old ones squeak.", "Ordered twelve chairs.");
    const res = await query({ query: "outage after altering tables late in the week", limit: 2, session_id: "hybrid-paraphrase" });
    expect(res.hits[0]!.memory.id).toBe(target);
    expect(res.hits[0]!.matched_by).toEqual(["semantic"]);
    const lexicalOnly = await query({
      query: "outage after altering tables late in the week",
      limit: 2,
      mode: "lexical",
      session_id: "hybrid-paraphrase",
    });
    expect(lexicalOnly.hits.map((h) => h.memory.id)).not.toContain(target);
  });

  it("answers none for what was never stored, beside high for what was", async () => {
    await add(
      "hybrid-confidence",
      "Pick a vector database for the memory service.",
      "Chroma runs embedded from npm and in a container; that settles it.",
      "Chose Chroma for the memory service.",
    );
    const stored = await query({ query: "which vector database did we choose for the memory service" });
    expect(stored.confidence).toBe("high");
    expect(stored.hits[0]!.confidence).toBe("high");
    const never = await query({ query: "sourdough starter hydration ratio for rye bread" });
    expect(never.confidence).toBe("none");
    expect(never.hits.every((h) => h.confidence === "none")).toBe(true);
    const strict = await query({ query: "sourdough starter hydration ratio for rye bread", min_confidence: "low" });
    expect(strict.hits).toEqual([]);
    const strictStored = await query({ query: "which vector database did we choose for the memory service", min_confidence: "low" });
    expect(strictStored.hits.length).toBeGreaterThan(0);
  });

  it("a write through one replica is found lexically through another at once", async () => {
    const other = await startCairn([dev]);
    try {
      // The second replica builds its index now, before the write.
      expect((await query({ query: "ZEBRA-5150", mode: "lexical" }, other.url)).hits).toEqual([]);
      const id = await add("hybrid-replicas", "Rotate the signing key ZEBRA-5150.", "Old key expires Monday.", "Rotated.");
      const seen = await query({ query: "ZEBRA-5150", mode: "lexical" }, other.url);
      expect(seen.hits.map((h) => h.memory.id)).toEqual([id]);
    } finally {
      await other.close();
    }
  });

  it("finds, with its text, a turn that is in Chroma but not yet in the lexical index", async () => {
    // A writer that took its change-feed slot and died before its turn reached Chroma: lexical catch-up waits on
    // that slot (FEED_PENDING_MS), so turns written after it are in Chroma and not yet in the lexical index, which
    // is where the dense side takes its records from. The dense side must fetch those from Chroma.
    const stalled = makeToken(uniqueWorkspace("stalled"), "writer");
    const replica = await startCairn([stalled]);
    try {
      await replica.runtime.storage.sequences.append(
        stalled.workspace,
        feedStream("turns"),
        { record_id: "t_never_written", op: "put", session_id: "stalled-dead" },
        "w-dead",
      );
      const body = {
        session_id: "stalled",
        prompt: "Pin the OpenSSL version for the FIPS build.",
        thought: "The FIPS module is only certified for 3.0.8; newer patch releases break the self-test.",
        response: "Pinned OpenSSL 3.0.8 in the build image.",
      };
      const written = await http(replica.url, "POST", "/v1/memories", { token: stalled.token, body });
      expect(written.status).toBe(201);
      const ask = (mode: string) =>
        http(replica.url, "POST", "/v1/memories/query", {
          token: stalled.token,
          body: { query: "OpenSSL FIPS build pin", mode, detail: "full" },
        });
      const lexical = await ask("lexical");
      expect(lexical.status).toBe(200);
      expect(lexical.body.hits).toEqual([]);
      for (const mode of ["semantic", "hybrid"]) {
        const found = await ask(mode);
        expect(found.status).toBe(200);
        expect(found.body.hits[0].memory.id).toBe(written.body.id);
        expect(found.body.hits[0].matched_by).toEqual(["semantic"]);
        expect(found.body.hits[0].memory.thought).toBe(body.thought);
      }
    } finally {
      await replica.close();
    }
  });

  it("ranks by their vectors, exactly, the few records a filter lets through: one session of fifty", async () => {
    // 1/50 of the records pass, so the dense side compares the query with their vectors itself instead of
    // having Chroma filter. The stub's vectors are known here, so the expected order is computed independently.
    const dimension = 64;
    const stub = await startOpenAIStub({ dimension });
    const embedder = await createEmbedder({ kind: "openai", baseUrl: stub.baseUrl, model: "stub-64", apiKey: undefined }, silentLogger);
    const few = makeToken(uniqueWorkspace("few"), "dev");
    const replica = await startCairn([few], { embedder });
    try {
      const words = ["cache", "lock", "retry", "index", "timeout", "queue", "schema", "token", "flag", "pool", "leak", "race"];
      const bodies = Array.from({ length: 100 }, (_, i) => ({
        session_id: `few-${i % 50}`,
        prompt: `Work on ${words[i % 12]} and ${words[(i * 5) % 12]}.`,
        thought: `Looked at the ${words[(i * 7) % 12]} first.`,
        response: `Done with ${words[(i * 11) % 12]}.`,
      }));
      const ids = new Map<string, string>();
      let last = { id: "", recorded_at: "" };
      for (const body of bodies) {
        const res = await http(replica.url, "POST", "/v1/memories", { token: few.token, body });
        expect(res.status).toBe(201);
        ids.set(res.body.id, turnDocument(body));
        last = res.body;
      }
      const query = "retry the lock on the cache";
      const asked = wordVector(query, dimension);
      const distance = (document: string) => 1 - wordVector(document, dimension).reduce((sum, v, i) => sum + v * asked[i]!, 0);
      const inSession = bodies.map((body, i) => ({ body, id: [...ids.keys()][i]! })).filter(({ body }) => body.session_id === "few-7");
      const expected = inSession.sort((a, b) => distance(turnDocument(a.body)) - distance(turnDocument(b.body))).map((r) => r.id);
      expect(expected).toHaveLength(2);
      const res = await http(replica.url, "POST", "/v1/memories/query", {
        token: few.token,
        body: { query, mode: "semantic", session_id: "few-7", limit: 5 },
      });
      expect(res.status).toBe(200);
      expect(res.body.hits.map((h: { memory: { id: string } }) => h.memory.id)).toEqual(expected);
      // Without the filter, other sessions' records come first or among them: the filter did the narrowing.
      const unfiltered = await http(replica.url, "POST", "/v1/memories/query", {
        token: few.token,
        body: { query, mode: "semantic", limit: 10 },
      });
      expect(unfiltered.body.hits.some((h: { memory: { session_id: string } }) => h.memory.session_id !== "few-7")).toBe(true);
      // A time filter 1 in 100 pass, on no key field: too few for an over-fetch, so Chroma filters on it alone.
      const latest = await http(replica.url, "POST", "/v1/memories/query", {
        token: few.token,
        body: { query, mode: "semantic", since: last.recorded_at, limit: 10 },
      });
      expect(latest.body.hits.map((h: { memory: { id: string } }) => h.memory.id)).toEqual([last.id]);
      expect(unfiltered.body.hits.length).toBeGreaterThan(1);
    } finally {
      await replica.close();
      await stub.close();
    }
  });

  it("returns a hit's evidence only when asked: a lexical hit its share of the query, a semantic one its similarity", async () => {
    const target = await add(
      "hybrid-evidence",
      "Why does the ledger reconciliation job skip refunds issued in euros?",
      "The currency filter compared against a hard-coded USD list; refunds in EUR never matched.",
      "Read the currencies from the merchant settings; next, backfill the skipped refunds.",
    );
    await add("hybrid-evidence", "Order new office chairs.", "The old ones squeak.", "Ordered twelve chairs.");
    const words = { query: "ledger reconciliation skips euro refunds", session_id: "hybrid-evidence", limit: 2 };
    const asked = (mode: string) => query({ ...words, mode, evidence: true }) as Promise<{ hits: EvidenceHit[] }>;
    type EvidenceHit = { matched_by: string[]; memory: { id: string }; evidence?: { similarity?: number; share?: number } };
    const lexical = (await asked("lexical")).hits[0]!;
    expect(lexical.memory.id).toBe(target);
    expect(Object.keys(lexical.evidence!)).toEqual(["share"]);
    expect(lexical.evidence!.share).toBeGreaterThan(0.5);
    expect(lexical.evidence!.share).toBeLessThanOrEqual(1);
    const semantic = (await asked("semantic")).hits;
    expect(semantic[0]!.memory.id).toBe(target);
    expect(Object.keys(semantic[0]!.evidence!)).toEqual(["similarity"]);
    // The asked-about memory is nearer by meaning than the office chairs.
    expect(semantic[0]!.evidence!.similarity).toBeGreaterThan(semantic[1]!.evidence!.similarity!);
    const hybrid = (await asked("hybrid")).hits[0]!;
    expect(hybrid.evidence).toEqual({ similarity: semantic[0]!.evidence!.similarity, share: lexical.evidence!.share });
    for (const mode of ["hybrid", "lexical", "semantic"]) {
      const plain = await query({ ...words, mode });
      expect(plain.hits[0]!.memory.id).toBe(target);
      expect(plain.hits.every((h) => !("evidence" in h))).toBe(true);
    }
  });

  it("applies the same filters to both retrievers", async () => {
    const a = await add("hybrid-filter-a", "Tune the GC of the indexer FILTER-1.", "Heap was too small.", "Doubled the heap.");
    const b = await add("hybrid-filter-b", "Tune the GC of the indexer FILTER-1.", "Pauses were too long.", "Switched collector.");
    const both = await query({ query: "FILTER-1 indexer GC" });
    expect(both.hits.map((h) => h.memory.id)).toEqual(expect.arrayContaining([a, b]));
    for (const mode of ["hybrid", "lexical", "semantic"]) {
      const onlyB = await query({ query: "FILTER-1 indexer GC", session_id: "hybrid-filter-b", mode });
      expect(onlyB.hits.map((h) => h.memory.id)).toEqual([b]);
    }
  });
});

describe("hybrid retrieval: words and fusion", () => {
  it("finds a turn by the base word of an irregular form it holds: went, bought, children", async () => {
    const camping = await add(
      "hybrid-irregular",
      "Weekend plans?",
      "Melanie went camping by the lake.",
      "She bought a tent for the children.",
    );
    const porch = await add("hybrid-irregular", "And the rest of the week?", "Melanie reads on the porch.", "Quiet evenings.");
    for (const question of ["Where does Melanie go camping?", "What will she buy for her child?"]) {
      const res = await query({ query: question, mode: "lexical", session_id: "hybrid-irregular" });
      expect(res.hits[0]!.memory.id).toBe(camping);
    }
    // Only the base words join them: the same question in words that neither turn holds in any form finds nothing.
    const based = await query({ query: "Who will go and buy for a child?", mode: "lexical", session_id: "hybrid-irregular" });
    expect(based.hits[0]!.memory.id).toBe(camping);
    const elsewhere = await query({ query: "Who will wander and purchase for a kid?", mode: "lexical", session_id: "hybrid-irregular" });
    expect(elsewhere.hits).toEqual([]);
    expect(based.hits.map((h) => h.memory.id)).toContain(porch); // beside it in its session: turn context
  });

  it("with a lexical head, keeps BM25's best three on top and lets a strong dense vote lift a near match below them", async () => {
    // A fusion the bench measured (locomo-tune --grid recall7), not the default: the dense list's nearest above
    // the medium floor vote at weight 0.1 with k 5, below BM25's first three. Bag-of-words vectors from the stub:
    // only the short turn that holds one query word, "glaze", is near the query (cosine ~0.7, above the stub
    // model's medium floor 0.62); lexically it ranks below every turn that holds the rarer "zephyr".
    const dimension = 256;
    const stub = await startOpenAIStub({ dimension });
    const embedder = await createEmbedder({ kind: "openai", baseUrl: stub.baseUrl, model: "stub-256", apiKey: undefined }, silentLogger);
    const token = makeToken(uniqueWorkspace("fuse"), "dev");
    const tuning = (lexicalHead: number): RetrievalTuning => ({
      ...DEFAULT_TUNING,
      semanticGate: "medium",
      fusion: { ...DEFAULT_TUNING.fusion, semanticK: 5, lexicalHead, semanticPerHit: 1 },
    });
    const headed = await startCairn([token], { embedder, tuning: tuning(3) });
    const headless = await startCairn([token], { embedder, tuning: tuning(0) });
    try {
      let n = 0;
      const write = async (prompt: string, thought: string, response: string) => {
        const res = await http(headed.url, "POST", "/v1/memories", {
          token: token.token,
          body: { session_id: `fuse-${n++}`, prompt, thought, response },
        });
        expect(res.status).toBe(201);
        return res.body.id as string;
      };
      const filler = ["kettle", "window", "garden", "ledger", "harbor", "copper", "meadow", "lantern", "pepper", "saddle"];
      for (let i = 0; i < 3; i++)
        await write(`Zephyr zephyr zephyr ${filler[i]}`, filler.slice(3, 9).join(" "), `Notes ${i} on the zephyr.`);
      for (let i = 0; i < 4; i++)
        await write(`Zephyr and the ${filler[i]}`, `The zephyr by the ${filler[i + 4]}.`, `A zephyr ${filler[9 - i]}.`);
      for (let i = 0; i < 15; i++)
        await write(`A glaze for the ${filler[i % 10]}`, `The glaze, ${filler.slice(0, 5).join(" ")}, batch ${i}`, "Fired the glaze.");
      const near = await write("Glaze", "Glaze", "Glaze");
      const ask = async (base: URL, mode: string) => {
        const res = await http(base, "POST", "/v1/memories/query", {
          token: token.token,
          body: { query: "zephyr glaze", mode, limit: 20 },
        });
        expect(res.status).toBe(200);
        return (res.body.hits as Array<{ memory: { id: string } }>).map((h) => h.memory.id);
      };
      const lexical = await ask(headed.url, "lexical");
      expect(lexical.indexOf(near)).toBeGreaterThanOrEqual(7);
      const hybrid = await ask(headed.url, "hybrid");
      expect(hybrid.slice(0, 3)).toEqual(lexical.slice(0, 3));
      expect(hybrid[3]).toBe(near);
      // Without the head, the same vote puts the near match first.
      const withoutHead = await ask(headless.url, "hybrid");
      expect(withoutHead[0]).toBe(near);
      expect(withoutHead.slice(1, 4)).toEqual(lexical.slice(0, 3));
    } finally {
      await headed.close();
      await headless.close();
      await stub.close();
    }
  });
});

describe("confidence that refuses", () => {
  // A realistic small store: a coding team's turns, with the generic words every project shares (team, build,
  // test, decided, next, week).
  const store = uniqueWorkspace("refuse");
  const agent = makeToken(store, "dev");
  const refuse = useCairn([agent]);
  const turns = [
    [
      "Why do the integration tests time out on CI?",
      "The Postgres container starts after the tests; the health check was missing.",
      "Added a health check and a wait; the suite passes in 6 minutes.",
    ],
    [
      "Pick a queue for the billing events.",
      "RabbitMQ needs an operator; SQS is already in the account.",
      "Decided on SQS for billing events; the team agreed.",
    ],
    [
      "The nightly build failed again.",
      "The Docker layer cache was evicted, so the build ran out of time.",
      "Pinned the base image and raised the build timeout to 40 minutes.",
    ],
    [
      "Plan the next week.",
      "Two open tickets block the release: AUTH-412 and PAY-77.",
      "Next week: fix AUTH-412 first, then PAY-77, then tag the release.",
    ],
    [
      "Review the pull request for the search page.",
      "Pagination drops the last item when the page is full.",
      "Asked for a test of a full last page before merging.",
    ],
    [
      "Rotate the API keys.",
      "Old keys expire on Monday; three services still read them from env files.",
      "Moved the keys to the secrets manager and rotated them.",
    ],
    [
      "Why is the dashboard slow?",
      "Each widget asks the metrics API on its own; forty requests per page load.",
      "Batched the widget queries into one request; load time fell from 4 s to 600 ms.",
    ],
    [
      "Decide how we version the public API.",
      "Header versioning hides the version from logs; URL versioning is visible.",
      "Decided on URL versioning (/v1, /v2) for the public API.",
    ],
  ];
  const write = async (session_id: string, [prompt, thought, response]: string[]) => {
    const res = await http(refuse.url, "POST", "/v1/memories", { token: agent.token, body: { session_id, prompt, thought, response } });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const ask = async (body: Record<string, unknown>) => {
    const res = await http(refuse.url, "POST", "/v1/memories/query", { token: agent.token, body });
    expect(res.status).toBe(200);
    return res.body as { hits: Array<{ confidence: string; matched_by: string[]; memory: { id: string } }>; confidence: string };
  };

  it("answers none to an unrelated question over a small store, and at least medium to a related one", async () => {
    for (const [i, turn] of turns.entries()) await write(`refuse-${i % 3}`, turn!);
    // Shares generic words with the store (two of its five terms are in one turn: next, release), but
    // nothing it is about.
    const unrelated = "What did the team decide for the next release party?";
    const far = await ask({ query: unrelated });
    expect(far.confidence).toBe("none");
    expect(far.hits.every((h) => h.confidence === "none")).toBe(true);
    expect((await ask({ query: unrelated, min_confidence: "low" })).hits).toEqual([]);
    const related = "Which queue did the team decide on for billing events?";
    const near = await ask({ query: related, min_confidence: "low" });
    expect(near.hits.length).toBeGreaterThan(0);
    expect(["medium", "high"]).toContain(near.confidence);
    expect(["medium", "high"]).toContain(near.hits[0]!.confidence);
  });

  it("reads similarity alone as medium when the embedder is sure and no record holds the query's words, else low", async () => {
    // The local embedder puts these two close (cosine above its `high` floor) with no word in common.
    const dog = await write("refuse-paraphrase", ["Is the dog ok?", "My dog is sick.", "My dog is sick."]);
    const sure = await ask({ query: "the puppy is unwell", session_id: "refuse-paraphrase" });
    expect(sure.hits.map((h) => h.memory.id)).toEqual([dog]);
    expect(sure.hits[0]!.matched_by).toEqual(["semantic"]);
    expect(sure.hits[0]!.confidence).toBe("medium");
    expect(sure.confidence).toBe("medium");
    // Semantic mode does not ask the lexical side, so nothing says the words point nowhere else: low.
    const alone = await ask({ query: "the puppy is unwell", mode: "semantic", session_id: "refuse-paraphrase" });
    expect(alone.hits.map((h) => h.memory.id)).toEqual([dog]);
    expect(alone.hits[0]!.confidence).toBe("low");
    // A record that holds the query's words contradicts the similarity: the same match reads low at most.
    const mascot = await write("refuse-paraphrase", [
      "Pick a mascot for the team page.",
      "A puppy drawing tested well; the unwell-looking cat did not.",
      "Chose the puppy drawing.",
    ]);
    const contradicted = await ask({ query: "the puppy is unwell", session_id: "refuse-paraphrase" });
    expect(contradicted.hits[0]!.memory.id).toBe(mascot);
    // (Beside the mascot turn in its session, the dog turn is also lifted lexically by turn context, holding none of
    // the query's words.)
    const dogHit = contradicted.hits.find((h) => h.memory.id === dog);
    expect(dogHit?.matched_by).toContain("semantic");
    expect(["none", "low"]).toContain(dogHit!.confidence);
  });
});

describe("confidence that follows rank (paraphrase fixture)", () => {
  // The bench's paraphrase set (bench/fixtures/paraphrase): a coding team's memories, questions in other words,
  // questions about nothing stored.
  const store = uniqueWorkspace("follow");
  const agent = makeToken(store, "dev");
  const follow = useCairn([agent]);
  const LEVELS = ["none", "low", "medium", "high"];
  interface Fixture {
    memories: Array<{ id: string; prompt: string; thought: string; response: string }>;
    questions: Array<{ question: string; memory: string | null }>;
  }
  let fixture: Fixture;
  const ask = async (body: Record<string, unknown>) => {
    const res = await http(follow.url, "POST", "/v1/memories/query", { token: agent.token, body });
    expect(res.status).toBe(200);
    return res.body as { hits: Array<{ confidence: string; matched_by: string[]; memory: { id: string } }>; confidence: string };
  };
  beforeAll(async () => {
    fixture = JSON.parse(await readFile(new URL("../../../bench/fixtures/paraphrase/paraphrase.json", import.meta.url), "utf8")) as Fixture;
    for (const m of fixture.memories) {
      const res = await http(follow.url, "POST", "/v1/memories", {
        token: agent.token,
        body: { session_id: `follow-${m.id}`, prompt: m.prompt, thought: m.thought, response: m.response },
      });
      expect(res.status).toBe(201);
    }
  });

  it("ranks no hit above one of higher confidence, in every mode, and min_confidence keeps a prefix", async () => {
    const queries = [
      ...fixture.questions.map((q) => q.question),
      ...fixture.memories.flatMap((m) => [m.prompt, m.thought, m.response, `${m.prompt} ${m.thought}`]),
    ];
    let mixed = 0;
    let sure = 0;
    for (const query of queries) {
      for (const mode of ["hybrid", "lexical", "semantic"]) {
        const res = await ask({ query, mode, limit: 10 });
        const levels = res.hits.map((h) => LEVELS.indexOf(h.confidence));
        levels.forEach((level, i) => expect(level, `${mode} "${query}" hit ${i + 1}`).toBeLessThanOrEqual(levels[i - 1] ?? 3));
        expect(res.confidence).toBe(res.hits[0]?.confidence ?? "none");
        if (new Set(levels).size > 1) mixed++;
        if ((levels[0] ?? 0) >= LEVELS.indexOf("medium")) sure++;
        if (mode === "hybrid") {
          const low = await ask({ query, mode, limit: 10, min_confidence: "low" });
          const kept = res.hits.filter((h) => h.confidence !== "none").map((h) => h.memory.id);
          expect(low.hits.map((h) => h.memory.id)).toEqual(kept);
        }
      }
    }
    // Not vacuous: many answers hold hits of several levels, and some start at medium or high.
    expect(mixed).toBeGreaterThan(queries.length / 2);
    expect(sure).toBeGreaterThan(queries.length / 4);
  });
});

describe("hybrid summaries", () => {
  it("finds a summary by an exact word through the lexical retriever", async () => {
    const common = {
      agents: ["dev"],
      decisions: [],
      open_questions: [],
      next_steps: [],
      turn_count: 3,
      first_turn_at: "2026-11-01T10:00:00.000Z",
      last_turn_at: "2026-11-01T11:00:00.000Z",
      method: "extractive" as const,
      generated_at: new Date().toISOString(),
    };
    await cairn.runtime.services.writes.putSummary(workspace, {
      ...common,
      session_id: "sum-1",
      title: "Upgrade of the QX-77 build agents",
      summary: "Build agents moved to a new image.",
    });
    await cairn.runtime.services.writes.putSummary(workspace, {
      ...common,
      session_id: "sum-2",
      title: "Upgrade of the build agents",
      summary: "Build agents moved to a new image.",
    });
    const res = await http(cairn.url, "POST", "/v1/summaries/query", { token: dev.token, body: { query: "QX-77", mode: "lexical" } });
    expect(res.body.hits.map((h: { summary: { session_id: string } }) => h.summary.session_id)).toEqual(["sum-1"]);
    // Re-summarizing a session replaces its text in the lexical index too.
    await cairn.runtime.services.writes.putSummary(workspace, {
      ...common,
      session_id: "sum-2",
      title: "Upgrade of the QX-77 runners",
      summary: "Runners moved.",
    });
    const again = await http(cairn.url, "POST", "/v1/summaries/query", { token: dev.token, body: { query: "QX-77", mode: "lexical" } });
    expect(again.body.hits.map((h: { summary: { session_id: string } }) => h.summary.session_id).sort()).toEqual(["sum-1", "sum-2"]);
  });
});
