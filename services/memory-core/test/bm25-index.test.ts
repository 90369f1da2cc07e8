import fc from "fast-check";
import MiniSearch from "minisearch";
import { describe, expect, it } from "vitest";
import { analyzeField, Bm25Index, MAX_FIELD_TERMS } from "../src/lexical/bm25-index.js";
import { MAX_TERM_CHARS, tokenize, toTerm } from "../src/lexical/text-analysis.js";

const boosts = { title: 2, body: 1 };
const params = { k: 1.2, b: 0.7, d: 0.5 };
const fresh = () => new Bm25Index<string>(Object.keys(boosts), boosts, params);
const all = () => true;

const corpus: Array<[string, { title: string; body: string }]> = [
  ["a", { title: "refresh token rotation", body: "rotate the refresh_token on every use; AUTH-412" }],
  ["b", { title: "database migration", body: "the migration of the orders table took 40 minutes" }],
  ["c", { title: "token budget", body: "the prompt budget is 2000 tokens for the index" }],
  ["d", { title: "flaky test", body: "the login test is flaky under load; retried three times" }],
  ["e", { title: "orders", body: "orders table index on created_at" }],
];

function indexOf(records: typeof corpus) {
  const index = fresh();
  for (const [id, fields] of records) index.put(id, fields, id);
  return index;
}

describe("Bm25Index", () => {
  it("ranks the record holding the rarer, more specific terms first and counts the query terms each holds", () => {
    const hits = indexOf(corpus).search("refresh token AUTH-412", 5, all);
    // "AUTH-412" is a term whole and as its parts: five terms in all.
    expect(hits[0]).toMatchObject({ id: "a", matchedTerms: 5 });
    expect(hits.map((h) => h.id)).toContain("c");
    expect(hits.find((h) => h.id === "c")!.matchedTerms).toBe(1);
    expect(hits.map((h) => h.id)).not.toContain("b");
    for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);
  });

  it("scores after removals and replacements exactly as an index built from the records that remain", () => {
    const churned = indexOf(corpus);
    churned.remove("b");
    churned.put("c", { title: "orders budget", body: "orders table budget" }, "c");
    churned.put("z", { title: "temporary", body: "orders orders orders" }, "z");
    churned.remove("z");
    const rebuilt = indexOf([
      ...corpus.filter(([id]) => id !== "b" && id !== "c"),
      ["c", { title: "orders budget", body: "orders table budget" }],
    ]);

    for (const query of ["orders table", "token budget", "refresh token", "temporary"]) {
      const expected = rebuilt.search(query, 10, all);
      expect(churned.search(query, 10, all)).toEqual(expected);
    }
    expect(churned.search("orders table", 10, all).map((h) => h.id)).toEqual(expect.arrayContaining(["c", "e"]));
    expect(churned.search("orders table", 10, all).map((h) => h.id)).not.toContain("b");
    expect(churned.search("temporary", 10, all)).toEqual([]);
    expect(churned.size).toBe(4);
  });

  it("after enough churn to compact what it keeps per record, scores and lends feedback terms as a rebuilt index does", () => {
    // Thousands of replacements and removals: each record's postings are kept in runs that are compacted once
    // removed records' runs are most of them; this reaches that compaction many times over.
    const words = ["orders", "table", "budget", "token", "refresh", "migration", "flaky", "login", "cache", "deploy"];
    const text = (i: number, round: number) => ({
      title: `${words[i % 10]} ${words[(i + round) % 10]} note${i % 13}`,
      body: `${words[(i * 3) % 10]} ${words[(i * 7 + round) % 10]} ${words[(i + 5) % 10]} item${i}`,
    });
    const churned = fresh();
    const live = new Map<string, { title: string; body: string }>();
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 600; i++) {
        const id = `r${i}`;
        if ((i + round) % 5 === 0) {
          churned.remove(id);
          live.delete(id);
        } else {
          churned.put(id, text(i, round), id);
          live.set(id, text(i, round));
        }
      }
    }
    const rebuilt = fresh();
    for (const [id, fields] of live) rebuilt.put(id, fields, id);
    expect(churned.size).toBe(live.size);
    for (const query of ["orders table", "flaky login note3", "cache deploy item42", "budget token refresh"]) {
      const expected = rebuilt.search(query, 20, all);
      expect(expected.length).toBeGreaterThan(0);
      // Records tied on score may come in another order (they were put in another order): compare scores.
      const scores = (hits: typeof expected) => hits.map((h) => h.score);
      const got = churned.search(query, 20, all);
      expect(scores(got)).toEqual(scores(expected));
      const byId = new Map(expected.map((h) => [h.id, h]));
      for (const hit of got) if (byId.has(hit.id)) expect(hit).toEqual(byId.get(hit.id));
      const asked = new Map([[query.split(" ")[0]!, 1]]);
      const lent = rebuilt.feedbackTerms(expected, asked, 5, 0.3);
      expect(lent.size).toBeGreaterThan(0);
      expect(churned.feedbackTerms(expected, asked, 5, 0.3)).toEqual(lent);
    }
  });

  it("returns the best `limit` records the filter accepts, consulting it only for contenders", () => {
    const index = indexOf(corpus);
    const asked: string[] = [];
    const hits = index.search("orders table index", 1, (id) => {
      asked.push(id);
      return id !== "e";
    });
    const unfiltered = index.search("orders table index", 5, all);
    expect(unfiltered[0]!.id).toBe("e");
    expect(hits.map((h) => h.id)).toEqual([unfiltered.find((h) => h.id !== "e")!.id]);
    expect(asked).toContain("e");
    // The weakest match is a hit without the filter, but never a contender for the single place.
    const weakest = unfiltered.at(-1)!.id;
    expect(weakest).not.toBe(hits[0]!.id);
    expect(asked).not.toContain(weakest);
  });

  it("searchAmong ranks and scores the records given exactly as a filtered search does, and nothing else", () => {
    // Common words (lookup tables) and rare ones (scanned), some records removed: both ways of scoring meet.
    let seed = 11;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const words = ["found", "cache", "timeout", "race", "index", "lock", "retry", "leak"];
    const records: Array<[string, { title: string; body: string }]> = Array.from({ length: 400 }, (_, i) => {
      const picked = Array.from(
        { length: 2 + Math.floor(random() * 5) },
        () => words[Math.floor(random() * (i % 3 === 0 ? 2 : words.length))]!,
      );
      return [`r${i}`, { title: picked.slice(0, 2).join(" "), body: [...picked, `rare${i % 37}`].join(" ") }];
    });
    const index = indexOf(records);
    for (let i = 0; i < 400; i += 13) index.remove(`r${i}`);
    const subsets = [
      records.filter((_, i) => i % 7 === 0).map(([id]) => id),
      records.filter((_, i) => i % 2 === 1).map(([id]) => id),
      ["r1", "r13", "no-such-record"],
    ];
    for (const among of subsets) {
      const allowed = new Set(among);
      for (const query of ["found cache", "timeout rare5 lock", "race index retry leak found", "rare12"]) {
        const expected = index.search(query, 15, (id) => allowed.has(id));
        const actual = index.searchAmong(query, 15, among);
        expect(actual.map((h) => h.id)).toEqual(expected.map((h) => h.id));
        actual.forEach((h, i) => {
          expect(h.score).toBeCloseTo(expected[i]!.score, 9);
          expect(h.matchedTerms).toBe(expected[i]!.matchedTerms);
        });
      }
      // Records outside the list never come back, though they match.
      const outside = index.search("found cache", 400, all).filter((h) => !allowed.has(h.id));
      expect(outside.length).toBeGreaterThan(0);
      expect(index.searchAmong("found cache", 400, among).some((h) => !allowed.has(h.id))).toBe(false);
    }
    expect(index.searchAmong("found cache", 15, ["r13"])).toEqual([]); // removed
    expect(index.searchAmong("found cache", 15, ["r1"]).length).toBeLessThanOrEqual(1);
  });

  it("scores a frequency too large for a lookup table's byte exactly, looked up or scanned", () => {
    // "cache" is held by every record (looked up, never scanned); one record holds it 300 times, one 254, one 255.
    const records: Array<[string, { title: string; body: string }]> = Array.from({ length: 60 }, (_, i) => [
      `r${i}`,
      {
        title: i % 7 === 0 ? "timeout" : "note",
        body: `cache ${i === 3 ? "cache ".repeat(299) : i === 4 ? "cache ".repeat(253) : i === 5 ? "cache ".repeat(254) : ""}timeout${i % 2}`,
      },
    ]);
    const index = indexOf(records);
    for (const query of ["cache timeout", "cache", "cache timeout1"]) {
      const expected = reference(records, query).slice(0, 10);
      const actual = index.search(query, 10, all);
      expect(actual.map((h) => h.id)).toEqual(expected.map((h) => h.id));
      actual.forEach((h, i) => expect(h.score).toBeCloseTo(expected[i]!.score, 9));
      const among = index.searchAmong(query, 10, ["r3", "r4", "r5", "r6"]);
      const allowed = new Set(["r3", "r4", "r5", "r6"]);
      expect(among.map((h) => h.score)).toEqual(index.search(query, 10, (id) => allowed.has(id)).map((h) => h.score));
    }
    // The record holding it most comes first for the word alone, and the three counts stay apart.
    const alone = index.search("cache", 3, all);
    expect(alone.map((h) => h.id)).toEqual(["r3", "r5", "r4"]);
    expect(new Set(alone.map((h) => h.score)).size).toBe(3);
  });

  it("finds nothing for stop words alone, and the same query with a content word finds its record", () => {
    const index = indexOf(corpus);
    expect(index.search("the of and", 5, all)).toEqual([]);
    expect(index.search("the of and flaky", 5, all).map((h) => h.id)).toEqual(["d"]);
  });

  it("skips scanning the commonest terms without changing a single score or place (against a plain BM25+ reference)", () => {
    // Words held by every record, by half, by a tenth and by a few: the mix where common terms are skipped.
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const rare = Array.from({ length: 40 }, (_, i) => `rare${String.fromCharCode(97 + (i % 26))}${i}`);
    const records: Array<[string, { title: string; body: string }]> = Array.from({ length: 600 }, (_, i) => {
      const words = ["found"];
      if (i % 2 === 0) words.push("cache");
      if (i % 10 === 0) words.push("timeout");
      words.push(rare[Math.floor(random() * rare.length)]!, rare[Math.floor(random() * rare.length)]!);
      if (random() < 0.3) words.push("found", "cache");
      return [`r${i}`, { title: words.slice(0, 2).join(" "), body: words.join(" ") }];
    });
    const index = indexOf(records);
    for (let i = 0; i < 600; i += 9) index.remove(`r${i}`);
    const live = records.filter((_, i) => i % 9 !== 0);

    for (const query of ["found cache timeout raree4", "found cache", "found rarea0 rareb1", "timeout found"]) {
      const expected = reference(live, query).slice(0, 20);
      const actual = index.search(query, 20, all);
      expect(actual.map((h) => h.id)).toEqual(expected.map((h) => h.id));
      actual.forEach((h, i) => expect(h.score).toBeCloseTo(expected[i]!.score, 9));
      expect(actual.length).toBe(20);
    }
    // The same with idf-weighted coordination (and an unseen term): each record's sum times
    // 1 + (terms asked - 1) x the share of the query's idf it holds.
    const byIdf = new Bm25Index<string>(Object.keys(boosts), boosts, { ...params, idfCoordination: true });
    for (const [id, record] of live) byIdf.put(id, record, id);
    for (const query of ["found cache timeout raree4", "found cache", "found rarea0 rareb1", "timeout found", "found cache nowhere"]) {
      const expected = reference(live, query, true).slice(0, 20);
      const actual = byIdf.search(query, 20, all);
      expect(actual.map((h) => h.id)).toEqual(expected.map((h) => h.id));
      actual.forEach((h, i) => expect(h.score).toBeCloseTo(expected[i]!.score, 9));
      actual.forEach((h, i) => expect(h.informative).toBeCloseTo(expected[i]!.informative, 9));
    }
  });
});

describe("what one record gives the index", () => {
  /** Words no text holds twice: base-36 numbers from a fixed sequence, each with a letter before it. */
  const junk = (count: number, from = 0) => Array.from({ length: count }, (_, i) => `q${((from + i) * 7919).toString(36)}`);

  it("is at most MAX_FIELD_TERMS terms a field, the most frequent kept, however many unique words it holds", () => {
    const words = junk(5000);
    const body = `${words.join(" ")} zeppelin hangar zeppelin hangar zeppelin`;
    const index = fresh();
    index.put("junk", { title: "a pasted blob", body }, "junk");
    index.put("other", { title: "hangar doors", body: "the doors of the hangar jammed" }, "other");
    const { terms } = index.stats();
    // The title's terms, the other record's, and at most MAX_FIELD_TERMS of the junk field's 5,002.
    expect(terms).toBeLessThanOrEqual(MAX_FIELD_TERMS + 8);
    expect(terms).toBeGreaterThan(MAX_FIELD_TERMS - 8);
    // Kept: its repeated words, and its first words among those it holds once; found by them.
    expect(index.search("zeppelin", 5, all).map((h) => h.id)).toEqual(["junk"]);
    expect(index.search("hangar", 5, all).map((h) => h.id)).toEqual(expect.arrayContaining(["junk", "other"]));
    expect(index.search(words[0]!, 5, all).map((h) => h.id)).toEqual(["junk"]);
    // Left out: the words past the bound held once.
    expect(index.search(words.at(-1)!, 5, all)).toEqual([]);
    // A field within the bound keeps every term, in the order they came.
    const within = analyzeField(junk(MAX_FIELD_TERMS, 9000).join(" "));
    expect(within.terms.filter((_, i) => i % 2 === 0)).toEqual(junk(MAX_FIELD_TERMS, 9000));
  });

  it("is terms of at most MAX_TERM_CHARS characters, and a longer token still finds its record", () => {
    const latin = "abcdefghijklmnopqrstuvwxyz".repeat(640);
    const chinese = "丂丄丅丆丏丐丑丒专且丕世丗丘丙业丛东丝丞丟".repeat(800);
    const blob = "QmFzZTY0IGJsb2IgaW4gYSB0dXJu".repeat(500);
    const analyzed = analyzeField(`${latin} ${chinese} ${blob} refreshToken`);
    const terms = analyzed.terms.filter((_, i) => i % 2 === 0) as string[];
    expect(terms).toContain("refreshtoken");
    expect(Math.max(...terms.map((t) => t.length))).toBeLessThanOrEqual(MAX_TERM_CHARS);
    expect(terms).toContain(latin.slice(0, MAX_TERM_CHARS));
    const index = fresh();
    index.put("long", { title: "", body: `${latin} ${blob}` }, "long");
    index.put("other", { title: "", body: "the alphabet abcdefghijklmnopqrstuvwxyz once" }, "other");
    expect(index.search(latin, 5, all).map((h) => h.id)).toEqual(["long"]);
    expect(index.search(blob, 5, all).map((h) => h.id)).toEqual(["long"]);
    expect(index.search("abcdefghijklmnopqrstuvwxyz", 5, all).map((h) => h.id)).toEqual(["other"]);
  });
});

describe("Bm25Index against a record-by-record reference", () => {
  it("gives any query, limit and filter the reference's best records with their scores, however few terms it scans", () => {
    // Corpora where some words are held by most records (lookup tables; scanned only while a bound cannot
    // prove the page) and others by a few (always scanned), some records removed; queries with feedback
    // terms, limits from one to past the records, filters that turn down some or most records; both
    // coordinations. Ties are broken by record order in both.
    const vocabulary = ["found", "cache", "timeout", "race", "index", "lock", "retry", "leak", "queue", "shard", "alpha", "omega"];
    const shares = [0.95, 0.7, 0.5, 0.35, 0.25, 0.15, 0.1, 0.06, 0.03, 0.02, 0.01, 0.005];
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 - 2 }), (seed) => {
        let state = seed + 1;
        const random = () => (state = (state * 48271) % 2147483647) / 2147483647;
        const size = 20 + Math.floor(random() * 400);
        const records: Array<[string, { title: string; body: string }]> = Array.from({ length: size }, (_, i) => {
          const words = vocabulary.filter((_, w) => random() < shares[w]!);
          const repeated = words.filter(() => random() < 0.2);
          return [
            `r${i}`,
            {
              title: words.filter(() => random() < 0.3).join(" "),
              body: [...words, ...repeated, `filler${Math.floor(random() * 5)}`].join(" "),
            },
          ];
        });
        const idfCoordination = random() < 0.5;
        const index = new Bm25Index<string>(Object.keys(boosts), boosts, { ...params, idfCoordination });
        for (const [id, fields] of records) index.put(id, fields, id);
        const live = records.filter(() => random() >= 0.1);
        const kept = new Set(live.map(([id]) => id));
        for (const [id] of records) if (!kept.has(id)) index.remove(id);
        const pick = () => vocabulary[Math.floor(random() * vocabulary.length)]!;
        const asked = new Map(
          Array.from({ length: 1 + Math.floor(random() * 5) }, () => [random() < 0.05 ? "nowhere" : pick(), 1] as const),
        );
        const added = new Map(
          Array.from({ length: Math.floor(random() * 4) }, () => [pick(), 0.1 + random() * 0.4] as const).filter(([t]) => !asked.has(t)),
        );
        const limit = 1 + Math.floor(random() * (random() < 0.2 ? 500 : 40));
        const refusing = random() < 0.5 ? 0 : random() < 0.5 ? 0.2 : 0.9;
        const refused = new Set(live.filter(() => random() < refusing).map(([id]) => id));
        const accept = (id: string) => !refused.has(id);

        const expected = reference(live, { asked, added }, idfCoordination).filter((h) => accept(h.id));
        const actual = index.search({ asked, added }, limit, accept);
        expect(actual.length).toBe(Math.min(limit, expected.length));
        // Place by place the same score; the same records wherever the scores are not within rounding of a tie.
        actual.forEach((hit, i) => expect(hit.score).toBeCloseTo(expected[i]!.score, 9));
        const scoreOf = new Map(expected.map((h) => [h.id, h.score]));
        for (const hit of actual) {
          expect(accept(hit.id)).toBe(true);
          expect(hit.score).toBeCloseTo(scoreOf.get(hit.id)!, 9);
        }
        const cut = expected[actual.length];
        const clear = expected.slice(0, actual.length).filter((h) => cut === undefined || h.score - cut.score > 1e-9);
        expect(actual.map((h) => h.id)).toEqual(expect.arrayContaining(clear.map((h) => h.id)));
      }),
      { seed: 20261201, numRuns: 300 },
    );
  });
});

describe("Bm25Index against MiniSearch", () => {
  it("ranks and scores as MiniSearch does with the same analysis, fields, boosts and BM25+ parameters", () => {
    // A corpus where term frequencies, field lengths and document frequencies all vary.
    let seed = 11;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const words = [
      "token",
      "refresh",
      "orders",
      "migration",
      "flaky",
      "cache",
      "timeout",
      "queue",
      "redis",
      "index",
      "budget",
      "AUTH-412",
      "refreshToken",
      "把会话存到Redis里",
    ];
    const pick = (n: number) => Array.from({ length: n }, () => words[Math.floor(random() * words.length)]!).join(" ");
    const records = Array.from({ length: 300 }, (_, i) => ({ id: `m${i}`, title: pick(1 + (i % 3)), body: pick(3 + (i % 11)) }));
    const ours = fresh();
    for (const r of records) ours.put(r.id, { title: r.title, body: r.body }, r.id);
    const mini = new MiniSearch<(typeof records)[number]>({
      fields: ["title", "body"],
      tokenize,
      processTerm: (term) => toTerm(term) ?? null,
      searchOptions: { boost: boosts, bm25: params, combineWith: "OR", prefix: false, fuzzy: false },
    });
    mini.addAll(records);

    for (const query of [
      "refresh token",
      "orders migration timeout",
      "flaky cache queue redis",
      "AUTH-412 budget",
      "index",
      "refreshToken",
      "会话",
    ]) {
      const expected = mini.search(query).slice(0, 25);
      const actual = ours.search(query, 25, all);
      expect(actual.length).toBe(expected.length);
      expect(actual.map((h) => h.id)).toEqual(expected.map((h) => h.id));
      actual.forEach((h, i) => expect(h.score).toBeCloseTo(expected[i]!.score, 9));
    }
    // A word no record holds finds nothing in either.
    expect(mini.search("zebra")).toEqual([]);
    expect(ours.search("zebra", 25, all)).toEqual([]);
  });
});

/** BM25+ with MiniSearch's multiplier, computed the plain way: every record, every query term, every field. */
/**
 * BM25+ with MiniSearch's coordination, computed record by record from the texts: the oracle. A query is text, or
 * weighted terms (`asked`, and `added` by feedback, which count neither as held terms nor for coordination; a
 * record holding added terms alone counts as holding one).
 */
function reference(
  records: typeof corpus,
  query: string | { asked: ReadonlyMap<string, number>; added: ReadonlyMap<string, number> },
  idfCoordination = false,
) {
  const fields = Object.keys(boosts) as Array<keyof typeof boosts>;
  const termsOf = (text: string) =>
    tokenize(text)
      .map(toTerm)
      .filter((t): t is string => t !== null);
  const asked = typeof query === "string" ? new Map([...new Set(termsOf(query))].map((t) => [t, 1])) : query.asked;
  const added = typeof query === "string" ? new Map<string, number>() : query.added;
  const weighted = [...asked, ...[...added].filter(([t]) => !asked.has(t))];
  const lengthOf = (text: string) => new Set(tokenize(text)).size;
  const averages = new Map(fields.map((f) => [f, records.reduce((sum, [, r]) => sum + lengthOf(r[f]), 0) / records.length]));
  const average = (f: keyof typeof boosts) => averages.get(f)!;
  const held = new Map(fields.map((f) => [f, records.map(([, r]) => termsOf(r[f]))]));
  const documentFrequency = (f: keyof typeof boosts, term: string) => held.get(f)!.filter((terms) => terms.includes(term)).length;
  // A term's information: its idf over records, its df the largest of its fields' (1 when no record holds it).
  const info = (term: string) => {
    const df = Math.max(1, ...fields.map((f) => documentFrequency(f, term)));
    return Math.log(1 + (records.length - df + 0.5) / (df + 0.5));
  };
  const total = [...asked.keys()].reduce((sum, t) => sum + info(t), 0);
  const scored = records.map(([id, record], n) => {
    let sum = 0;
    let matched = 0;
    let held = 0;
    for (const [term, weight] of weighted) {
      let holds = false;
      for (const f of fields) {
        const freq = termsOf(record[f]).filter((t) => t === term).length;
        if (freq === 0) continue;
        holds = true;
        const df = documentFrequency(f, term);
        const idf = Math.log(1 + (records.length - df + 0.5) / (df + 0.5));
        const { k, b, d } = params;
        sum += weight * boosts[f] * idf * (d + (freq * (k + 1)) / (freq + k * (1 - b + (b * lengthOf(record[f])) / average(f))));
      }
      if (holds && asked.has(term)) {
        matched += 1;
        held += info(term);
      }
    }
    const informative = Math.min(1, held / total);
    return { id, n, informative, score: sum * (idfCoordination ? 1 + (asked.size - 1) * informative : Math.max(1, matched)) };
  });
  return scored.filter((s) => s.score > 0).sort((a, b) => b.score - a.score || a.n - b.n);
}
