import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Bm25Index } from "../src/lexical/bm25-index.js";
import { dateTokens, SEGMENT_CHARS, terms, tokenize } from "../src/lexical/text-analysis.js";
import { http, makeToken, uniqueWorkspace, useCairn } from "./support/harness.js";

describe("text analysis", () => {
  it("indexes identifiers whole and as their parts, in every spelling", () => {
    expect(terms("refreshToken")).toEqual(["refreshtoken", "refresh", "token"]);
    expect(terms("HTTPServerError")).toEqual(["httpservererror", "http", "server", "error"]);
    expect(terms("XMLHttpRequest")).toEqual(expect.arrayContaining(["xmlhttprequest", "xml", "http", "request"]));
    expect(terms("refresh_token")).toEqual(["refresh_token", "refresh", "token"]);
    expect(terms("refresh-token")).toEqual(["refresh-token", "refresh", "token"]);
    expect(terms("AUTH-412")).toEqual(["auth-412", "auth", "412"]);
    expect(terms("src/auth/session.ts")).toEqual(["src/auth/session.ts", "src", "auth", "session", "ts"]);
    expect(terms("config.retryCount")).toEqual(expect.arrayContaining(["config.retrycount", "config", "retrycount", "retri", "count"]));
    expect(terms("std::vector")).toEqual(["std::vector", "std", "vector"]);
    // The parts of a query are those of a stored text: the plain words find the identifier.
    expect(terms("refresh tokens")).toEqual(["refresh", "token"]);
    // Plural acronyms and ordinary capitalised words are words, not identifiers.
    expect(terms("APIs IDs")).toEqual(["api", "id"]);
    expect(terms("Tokens")).toEqual(["token"]);
    // Letters and digits stay together; a digit before a capital starts a part.
    expect(terms("utf8String base64Encode")).toEqual(expect.arrayContaining(["utf8", "string", "base64", "encod"]));
    expect(terms("utf8String")).not.toContain("utf");
  });

  it("cuts scripts written without spaces into words, beside the Latin words among them", () => {
    expect(terms("我们决定把会话存到Redis里因为重启会丢失队列")).toEqual(expect.arrayContaining(["会话", "redi", "队列", "丢失"]));
    expect(terms("把会话存到Redis里")).toEqual(["把", "会话", "存", "到", "redi", "里"]);
    expect(terms("データベースの移行を来週に延期します")).toEqual(expect.arrayContaining(["データベース", "移行", "来週", "延期"]));
    expect(terms("เราตัดสินใจเก็บเซสชันไว้ใน Redis")).toEqual(expect.arrayContaining(["เซสชัน", "เก็บ", "redi"]));
    expect(terms("ເຮົາຕັດສິນໃຈເກັບຂໍ້ມູນ")).toEqual(expect.arrayContaining(["ຂໍ້ມູນ"]));
    expect(terms("យើងរក្សាទុកវគ្គ")).toEqual(expect.arrayContaining(["រក្សាទុក"]));
    expect(terms("ကျွန်ုပ်တို့ဆုံးဖြတ်ခဲ့သည်")).toEqual(expect.arrayContaining(["ဆုံးဖြတ်"]));
    // A word alone is analysed as in a sentence.
    for (const word of ["会话", "队列", "データベース", "移行", "เซสชัน", "ຂໍ້ມູນ", "រក្សាទុក", "ဆုံးဖြတ်"]) expect(terms(word)).toEqual([word]);
  });

  it("stems and drops stop words in English only, and keeps every script's words whole", () => {
    expect(terms("the tokens were rotated")).toEqual(["token", "rotat"]);
    // Not Porter-stemmed: Russian, Greek, Arabic keep their endings.
    expect(terms("Мы решили хранить сессии")).toEqual(["мы", "решили", "хранить", "сессии"]);
    expect(terms("αποθήκευση συνεδριών")).toEqual(["αποθήκευση", "συνεδριών"]);
    // Combining marks belong to their word (Devanagari vowel signs); Arabic vowel marks are optional.
    expect(terms("हिन्दी भाषा")).toEqual(["हिन्दी", "भाषा"]);
    expect(terms("الجَلَسات")).toEqual(terms("الجلسات"));
    // Full-width Latin is Latin.
    expect(terms("ＲｅｄｉｓＣｌｉｅｎｔ")).toEqual(terms("RedisClient"));
  });

  it("ranks the exact identifier above a text holding only its parts, and finds both", () => {
    const index = new Bm25Index<string>(["body"], { body: 1 }, { k: 1.2, b: 0.7, d: 0.5 });
    index.put("whole", { body: "rotate the refreshToken on every use" }, "whole");
    index.put("parts", { body: "refresh the token on every use" }, "parts");
    index.put("other", { body: "a token budget for every prompt" }, "other");
    const hits = index.search("refreshToken", 10, () => true);
    expect(hits.map((h) => h.id).slice(0, 2)).toEqual(["whole", "parts"]);
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
    // Plain words find the identifier too.
    expect(index.search("refresh token", 10, () => true).map((h) => h.id)).toEqual(expect.arrayContaining(["whole", "parts"]));
    expect(index.search("accessKey", 10, () => true)).toEqual([]);
  });

  it("gives the terms of a text as a function of its content only, stable across calls (property)", () => {
    // Text drawn from the scripts analysed differently, identifiers and arbitrary Unicode.
    const pieces = fc.oneof(
      fc.constantFrom("会话", "我们决定", "データベース", "の", "เซสชัน", "ຂໍ້ມູນ", "រក្សាទុក", "ဆုံးဖြတ်", "сессии", "الجلسات"),
      fc.constantFrom("refreshToken", "HTTPServerError", "refresh_token", "AUTH-412", "src/a.ts", "APIs", "9 November, 2022"),
      fc.string({ unit: "grapheme", maxLength: 12 }),
      fc.string({ unit: "binary", maxLength: 6 }),
      fc.constantFrom(" ", "", ".", "-", "、", "\n"),
    );
    const texts = fc.array(pieces, { maxLength: 12 }).map((parts) => parts.join(""));
    fc.assert(
      fc.property(texts, texts, (text, other) => {
        const first = terms(text);
        // Another text analysed between two calls changes nothing; nor does the string's identity.
        terms(other);
        tokenize(other);
        expect(terms(text)).toEqual(first);
        expect(terms([...text].join(""))).toEqual(first);
        expect(tokenize(text)).toEqual(tokenize(text));
        // Stored and asked alike: a text with any term finds itself.
        const index = new Bm25Index<string>(["body"], { body: 1 }, { k: 1.2, b: 0.7, d: 0.5 });
        index.put("t", { body: text }, "t");
        index.put("o", { body: other }, "o");
        if (first.length > 0) expect(index.search(text, 2, () => true).map((h) => h.id)).toContain("t");
      }),
      { numRuns: 300, seed: 20261201 },
    );
  });
});

/** Identifiers with separators as first found: tried at every letter, so a long run of letters cost its square. */
const REFERENCE_COMPOUND = /[\p{L}\p{N}][\p{L}\p{Mn}\p{Mc}\p{N}]*(?:(?:::|[-_./:])[\p{L}\p{N}][\p{L}\p{Mn}\p{Mc}\p{N}]*)+/gu;

/** The analyser's regular-expression work on `texts`, checked against a backtrack budget by V8 (support/regex-backtracks.ts). */
async function backtracks(input: { factor: number; texts: string[]; control: string }) {
  const script = fileURLToPath(new URL("./support/regex-backtracks.ts", import.meta.url));
  const child = spawn(process.execPath, ["--allow-natives-syntax", "--import", "tsx", script], { stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  child.stdin.end(JSON.stringify(input));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  expect(code, err).toBe(0);
  return JSON.parse(out) as { gaveUp: Array<{ source: string; length: number }>; checked: number; found: string[][] };
}

describe("the analyser's work", () => {
  it("finds the identifiers the first implementation found, whatever the text (property)", () => {
    const pieces = fc.oneof(
      fc.constantFrom("a", "B", "7", "é", "会话", "ก", "क", "\u093F", "\u0903", "\u0E31", "-", "_", ".", "/", ":", "::", " ", "'", "’"),
      fc.constantFrom("refresh_token", "AUTH-412", "src/a.ts", "std::vector", "a-", "-b", "x:", "\u093F-\u093F"),
      fc.string({ unit: "grapheme", maxLength: 6 }),
    );
    // In the analyser's one form (text-analysis.ts, `normalized`): compatibility forms folded, optional marks dropped.
    const optionalMarks = /\u0640|[\u064B-\u065F]|\u0670|[\u0591-\u05BD]|\u05BF|[\u05C1-\u05C2]|[\u05C4-\u05C5]|\u05C7|[\uFE00-\uFE0F]/g;
    const texts = fc.array(pieces, { maxLength: 24 }).map((parts) => parts.join("").normalize("NFKC").replace(optionalMarks, ""));
    fc.assert(
      fc.property(texts, (text) => {
        const compounds = text.match(REFERENCE_COMPOUND) ?? [];
        // tokenize gives the compounds first, then the words.
        expect(tokenize(text).slice(0, compounds.length)).toEqual(compounds);
      }),
      { numRuns: 2000, seed: 20261203 },
    );
  });

  it("segments a long run of unspaced script a bounded stretch at a time, into the words the whole run gives", () => {
    const segment = Intl.Segmenter.prototype.segment;
    const whole = new Intl.Segmenter("und", { granularity: "word" });
    const given: number[] = [];
    const vocabularies = [
      ["的", "一", "是", "不", "了", "人", "我", "在", "有", "他", "这", "为", "之", "大", "来", "以", "会话", "缓存", "决定"],
      ["การ", "ตัดสินใจ", "เกี่ยวกับ", "แคช", "ของ", "เรา", "เก็บ", "เซสชัน", "ไว้", "ใน", "ระบบ", "ข้อมูล"],
      ["データベース", "の", "移行", "を", "来週", "に", "延期", "します", "会話", "キャッシュ"],
    ];
    Intl.Segmenter.prototype.segment = function (this: Intl.Segmenter, input: string) {
      given.push(input.length);
      return segment.call(this, input);
    };
    try {
      vocabularies.forEach((words, v) => {
        let seed = v + 1;
        const next = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
        let run = "";
        while (run.length < 16_000) run += words[Math.floor(next() * words.length)]!;
        given.length = 0;
        const found = tokenize(run);
        // Bounded: no call is given more than a stretch, and the run is segmented at most twice over.
        expect(Math.max(...given)).toBeLessThanOrEqual(SEGMENT_CHARS);
        expect(given.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(2 * run.length);
        // The same words as the whole run segmented at once.
        const expected = [...segment.call(whole, run)].filter((s) => s.isWordLike).map((s) => s.segment);
        expect(found).toEqual(expected);
        expect(found.length).toBeGreaterThan(run.length / 8);
      });
    } finally {
      Intl.Segmenter.prototype.segment = segment;
    }
  });

  it("backtracks at most a fixed number of times per character, on long runs without spaces in any script (analysis and write advice)", async () => {
    const run = 4096;
    // Each pattern needs something to find after the run for the check to see it give up: an identifier, a date,
    // a path and a figure (what write advice looks for).
    const tail = " AUTH-412 a-b 2022-11-09 refreshToken src/a.ts took 40 ms";
    const texts = [
      "把会话存到里面的决定".repeat(run / 10) + tail,
      "เราตัดสินใจเก็บเซสชัน".repeat(run / 20) + tail,
      "abcdefghij".repeat(run / 10) + tail,
      "refreshToken".repeat(run / 12) + tail,
      "7".repeat(run) + tail,
      "\u093F".repeat(run) + tail,
      "We kept the session in Redis on 9 November, 2022: restarts lost the queue. ".repeat(run / 76) + tail,
    ];
    // Tried at every letter of a word as the analyser's identifiers once were: the check must catch it.
    const control = "\\p{L}+(?:-\\p{L}+)+";
    const { gaveUp, checked, found } = await backtracks({ factor: 16, texts, control });
    expect(gaveUp.map((g) => g.source)).toEqual([control]);
    expect(checked).toBeGreaterThan(texts.length);
    // The texts were analysed in full: the identifier, the date and the parts after each long run.
    for (const terms of found) expect(terms).toEqual(expect.arrayContaining(["auth-412", "2022-11-09", "refreshtoken", "token"]));
    expect(found[0]).toEqual(expect.arrayContaining(["会话", "决定"]));
  });
});

/** dateTokens as first written: the oracle of the one in use, which skips texts that cannot hold a date. */
function referenceDateTokens(text: string): string[] {
  const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
  const MONTH =
    "(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)";
  const out: string[] = [];
  const pad = (n: string | number) => String(n).padStart(2, "0");
  const month = (name: string) => pad(MONTHS.indexOf(name.slice(0, 3).toLowerCase()) + 1);
  const day = (y: string, m: string, d: string) => {
    if (Number(d) < 1 || Number(d) > 31) return;
    out.push(`${y}-${m}-${pad(d)}`, `${y}-${m}`);
  };
  for (const [, y, m] of text.matchAll(/\b(\d{4})-(\d{2})-(\d{2})\b/g)) out.push(`${y}-${m}`);
  for (const [, d, m, y] of text.matchAll(new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH}\\.?,?\\s+(\\d{4})\\b`, "gi")))
    day(y!, month(m!), d!);
  for (const [, m, d, y] of text.matchAll(new RegExp(`\\b${MONTH}\\.?\\s+(\\d{1,2})(?:st|nd|rd|th)?,?\\s+(\\d{4})\\b`, "gi")))
    day(y!, month(m!), d!);
  for (const [, m, y] of text.matchAll(new RegExp(`\\b${MONTH}\\.?,?\\s+(\\d{4})\\b`, "gi"))) out.push(`${y}-${month(m!)}`);
  return [...new Set(out)];
}

describe("dates", () => {
  it("are read in every spelling, and not where there is none", () => {
    expect(dateTokens("met on 9 November, 2022 and again on November 9th 2022 (2022-11-09), then in Dec 2022")).toEqual([
      "2022-11",
      "2022-11-09",
      "2022-12",
    ]);
    expect(dateTokens("step 12 of 2000-ish retries, no date here")).toEqual([]);
  });

  it("come out as the first implementation gave them, whatever the text (property)", () => {
    const pieces = fc.oneof(
      fc.constantFrom("9 November, 2022", "November 9th 2022", "2022-11-09", "Nov. 2022", "31st of March 1999", "32 May 2020", "May"),
      fc.stringMatching(/^\d{1,5}$/),
      fc.constantFrom(" ", ", ", "-", "th ", "of "),
      fc.string({ maxLength: 8 }),
    );
    const texts = fc.array(pieces, { maxLength: 10 }).map((parts) => parts.join(""));
    fc.assert(
      fc.property(texts, (text) => {
        expect([...dateTokens(text)].sort()).toEqual([...referenceDateTokens(text)].sort());
      }),
      { numRuns: 500, seed: 20261202 },
    );
  });
});

/** A stored text in one script and code, a word of it, and a word of that script that it does not hold. */
const FIXTURES = [
  { label: "Chinese", text: "我们决定把会话存到Redis里因为重启会丢失队列", found: ["会话", "队列", "Redis"], absent: "会议" },
  { label: "Japanese", text: "データベースの移行を来週に延期します", found: ["データベース", "移行"], absent: "削除" },
  { label: "Thai", text: "เราตัดสินใจเก็บเซสชันไว้ใน Redis เพราะการรีสตาร์ททำให้คิวหายไป", found: ["เซสชัน", "คิว"], absent: "ฐานข้อมูล" },
  {
    label: "Arabic",
    text: "قررنا تخزين الجلسات في ريديس لأن إعادة التشغيل تفقد الطابور",
    found: ["الجلسات", "الطابور"],
    absent: "المستخدمين",
  },
  {
    label: "Russian",
    text: "Мы решили хранить сессии в Redis, потому что перезапуск теряет очередь",
    found: ["сессии", "очередь"],
    absent: "пользователи",
  },
  {
    label: "code",
    text: "The HTTPServerError handler in src/authService.ts now rotates the refreshToken",
    found: ["refreshToken", "token", "server error", "authService"],
    absent: "accessKey",
  },
] as const;

describe("words in every script and code, over REST with a real stack", () => {
  const dev = makeToken(uniqueWorkspace("words"), "dev");
  const cairn = useCairn([dev]);
  const add = async (session_id: string, response: string) => {
    const res = await http(cairn.url, "POST", "/v1/memories", {
      token: dev.token,
      body: { session_id, prompt: "Note the decision.", thought: "Recorded for the team.", response },
    });
    expect(res.status).toBe(201);
    return res.body.id as string;
  };
  const found = async (query: string, mode = "lexical") => {
    const res = await http(cairn.url, "POST", "/v1/memories/query", {
      token: dev.token,
      body: { query, mode, limit: 10, min_confidence: "none" },
    });
    expect(res.status).toBe(200);
    return (res.body.hits as Array<{ memory: { id: string } }>).map((h) => h.memory.id);
  };

  it.each(FIXTURES)("$label: a word of the text finds it, a word not in it does not", async ({ label, text, found: words, absent }) => {
    const id = await add(`words-${label}`, text);
    for (const word of words) expect(await found(word), word).toContain(id);
    expect(await found(absent)).not.toContain(id);
  });

  it("finds a Chinese word in the default mode too, matched lexically", async () => {
    const id = await add("words-hybrid", "队列在重启后丢失了，所以我们把会话存到Redis里");
    const res = await http(cairn.url, "POST", "/v1/memories/query", { token: dev.token, body: { query: "会话", limit: 5 } });
    const hit = (res.body.hits as Array<{ matched_by: string[]; memory: { id: string } }>).find((h) => h.memory.id === id);
    expect(hit?.matched_by).toContain("lexical");
  });

  it("stores a turn of 16,000 unspaced Chinese characters per field and answers a brief query with the word in its snippet", async () => {
    const pool =
      "的一是不了人我在有他这为之大来以个中上们到说国和地也子时道出而要于就下得可你年生自会那后能对着事其里所去行过家十用发天如然";
    const chinese = (chars: number, seed: number) =>
      Array.from({ length: chars }, (_, i) => pool[(i * 7 + seed * 13 + ((i * i) % 11)) % pool.length]).join("");
    const run = 16_000;
    // 缓存决定 ("cache decision") 600 characters into the thought's one run.
    const stored = await http(cairn.url, "POST", "/v1/memories", {
      token: dev.token,
      body: {
        session_id: "words-long-run",
        prompt: chinese(run, 1),
        thought: `${chinese(600, 2)}缓存决定${chinese(run - 604, 3)}`,
        response: chinese(run, 4),
      },
    });
    expect(stored.status).toBe(201);
    const [answer, health] = await Promise.all([
      http(cairn.url, "POST", "/v1/memories/query", {
        token: dev.token,
        body: { query: "缓存决定", mode: "lexical", limit: 10, min_confidence: "none" },
      }),
      http(cairn.url, "GET", "/healthz"),
    ]);
    expect(health.body).toEqual({ status: "ok" });
    expect(answer.status).toBe(200);
    const hit = (answer.body.hits as Array<{ memory: { id: string; text: string } }>).find((h) => h.memory.id === stored.body.id);
    // The word is shown where it stands, 600 characters into a run without spaces, in a few hundred bytes.
    expect(hit?.memory.text).toContain("缓存决定");
    expect(Buffer.byteLength(hit!.memory.text)).toBeLessThanOrEqual(3 * 202);
    // A word of the same script the turn does not hold finds nothing of it.
    const other = await http(cairn.url, "POST", "/v1/memories/query", {
      token: dev.token,
      body: { query: "数据库", mode: "lexical", limit: 10, min_confidence: "none" },
    });
    expect((other.body.hits as Array<{ memory: { id: string } }>).map((h) => h.memory.id)).not.toContain(stored.body.id);
  });

  it("puts the exact identifier above a text with only its parts", async () => {
    const whole = await add("words-whole", "Rotate the refreshToken on every use of the session.");
    const parts = await add("words-parts", "Refresh the token on every use of the session.");
    const hits = await found("refreshToken");
    expect(hits.indexOf(whole)).toBeGreaterThanOrEqual(0);
    expect(hits.indexOf(parts)).toBeGreaterThan(hits.indexOf(whole));
  });
});
