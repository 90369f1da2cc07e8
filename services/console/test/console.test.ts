import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildConsole } from "../src/build.js";
import { http, makeToken, startCairn, turn, uniqueWorkspace, type TestCairn } from "../../memory-core/test/support/harness.js";
import { launchChromium } from "./browser.js";

const workspace = uniqueWorkspace("console");
const alice = makeToken(workspace, "alice");
const bob = makeToken(workspace, "bob");
const admin = makeToken(workspace, "ops", "admin");
let cairn: TestCairn;
let browser: Browser;
const ids: Record<string, string> = {};

const INJECTION = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script><b>bold</b>`;

async function write(token: string, body: object): Promise<string> {
  const res = await http(cairn.url, "POST", "/v1/memories", { token, body });
  if (res.status !== 201) throw new Error(`add_memory answered ${res.status}: ${res.text}`);
  return res.body.id;
}

beforeAll(async () => {
  cairn = await startCairn([alice, bob, admin], { console: await buildConsole() });
  browser = await launchChromium();
  // Twenty-five of alice's turns (more than a page), one decision, one injection-shaped memory, and one of bob's.
  for (let n = 1; n <= 25; n++) ids[`t${n}`] = await write(alice.token, turn("console-s1", n));
  ids.decision = await write(alice.token, {
    session_id: "console-s2",
    kind: "decision",
    prompt: "Where do checkout sessions live?",
    thought: "Postgres rows need a sweeper; Redis has TTLs.",
    response: "Decided: checkout sessions move to Redis with a 30 minute TTL.",
    checks: [{ name: "integration tests", command: "npm test", status: "passed", commit: "abc1234" }],
    code: {
      repository: "acme/shop",
      branch: "main",
      commit: "abc1234",
      paths: [{ path: "src/checkout/session.ts", lines: "10-42", symbol: "sessionStore" }, { path: "src/checkout/" }],
    },
  });
  ids.injection = await write(alice.token, { session_id: "console-s3", prompt: INJECTION, thought: "probe", response: INJECTION });
  ids.bob = await write(bob.token, turn("console-bob", 1, { prompt: "Bob's task on the billing export" }));
  ids.imported1 = await write(
    admin.token,
    turn("console-import", 1, { source: "import", prompt: "Imported: pin the SDK to 1.2", occurred_at: "2024-05-01T10:00:00Z" }),
  );
  ids.imported2 = await write(admin.token, turn("console-import", 2, { source: "import", prompt: "Imported: drop the retry wrapper" }));
});

afterAll(async () => {
  await browser?.close();
  await cairn?.close();
});

async function signedIn(token: string, options: { width?: number; height?: number } = {}): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: options.width ?? 1280, height: options.height ?? 900 } });
  await page.goto(new URL("/console", cairn.url).href);
  await page.getByLabel("Token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("navigation", { name: "Console" }).waitFor();
  return page;
}

// Runs in the page, where the DOM's globals are (this file is type-checked against Node's).
const noHorizontalScroll = (page: Page) =>
  page.evaluate(() => {
    const root = (globalThis as any).document.documentElement;
    return root.scrollWidth <= root.clientWidth;
  });

describe("the console's files", () => {
  it("are served at /console with a strict Content-Security-Policy, and nothing else is", async () => {
    const page = await http(cairn.url, "GET", "/console");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    const csp = page.headers.get("content-security-policy")!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    expect(page.text).toContain('<script type="module" src="/console/app.js">');
    expect(page.text).not.toMatch(/https?:\/\//);
    const script = await http(cairn.url, "GET", "/console/app.js");
    expect([script.status, script.headers.get("content-type")]).toEqual([200, "text/javascript; charset=utf-8"]);
    const missing = await http(cairn.url, "GET", "/console/other.js");
    expect([missing.status, missing.body.code]).toEqual([404, "not_found"]);
  });

  it("name an icon Cairn serves, so that loading the console asks for nothing that answers 404", async () => {
    const page = await browser.newPage();
    const answers: Array<[string, number]> = [];
    page.on("response", (response) => answers.push([new URL(response.url()).pathname, response.status()]));
    await page.goto(new URL("/console", cairn.url).href);
    await page.getByLabel("Token").waitFor();
    await page.waitForLoadState("networkidle");
    expect(answers.filter(([, status]) => status >= 400)).toEqual([]);
    expect(answers.map(([path]) => path)).toEqual(
      expect.arrayContaining(["/console", "/console/app.js", "/console/app.css", "/console/favicon.svg"]),
    );
    expect(answers.filter(([path]) => path === "/console/favicon.svg").map(([, status]) => status)).toContain(200);
    await page.close();
    const icon = await http(cairn.url, "GET", "/console/favicon.svg");
    expect([icon.status, icon.headers.get("content-type")]).toEqual([200, "image/svg+xml; charset=utf-8"]);
    expect(icon.text).toContain("<svg");
    const page2 = await http(cairn.url, "GET", "/console");
    expect(page2.text).toContain('<link rel="icon" href="/console/favicon.svg"');
  });

  it("load nothing from anywhere but Cairn", async () => {
    const page = await browser.newPage();
    const origins = new Set<string>();
    page.on("request", (request) => origins.add(new URL(request.url()).origin));
    const violations: string[] = [];
    page.on("console", (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    await page.goto(new URL("/console", cairn.url).href);
    await page.getByLabel("Token").waitFor();
    expect([...origins]).toEqual([cairn.url.origin]);
    expect(violations).toEqual([]);
    await page.close();
  });
});

describe("signing in", () => {
  it("refuses a token Cairn does not know with the API's hint, and signs in with the keyboard alone", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(new URL("/console", cairn.url).href);
    await page.getByLabel("Token").fill("cairn_not-a-real-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/token/i);
    expect(await page.getByRole("navigation", { name: "Console" }).count()).toBe(0);

    await page.getByLabel("Token").fill("");
    await page.getByLabel("Token").focus();
    await page.keyboard.type(alice.token);
    await page.keyboard.press("Enter");
    await page.getByRole("navigation", { name: "Console" }).waitFor();
    expect(await page.locator(".who").textContent()).toContain(`alice (agent) in ${workspace}`);
    // Kept for the tab only: a new tab starts signed out.
    const other = await context.newPage();
    await other.goto(new URL("/console", cairn.url).href);
    await other.getByLabel("Token").waitFor();
    expect(await other.getByRole("navigation", { name: "Console" }).count()).toBe(0);
    await context.close();
  });
});

describe("the timeline", () => {
  it("shows the agent's newest turns first, a page at a time, and another agent's on asking", async () => {
    const page = await signedIn(alice.token);
    const rows = page.locator(".rows > li");
    await rows.first().waitFor();
    expect(await rows.count()).toBe(20);
    expect(await rows.first().textContent()).toContain("console-s3");
    await page.getByRole("button", { name: "Older turns" }).click();
    await expect.poll(() => rows.count()).toBe(27);
    expect(await rows.last().textContent()).toContain("Task 1 in console-s1");
    expect(await page.getByRole("button", { name: "Older turns" }).count()).toBe(0);

    await page.getByLabel("Agent").fill("bob");
    await page.getByRole("button", { name: "Show" }).click();
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain("Bob's task");
    await page.getByLabel("Agent").fill("nobody");
    await page.getByRole("button", { name: "Show" }).click();
    await expect.poll(() => page.locator(".empty").textContent()).toContain("No turns from nobody");
    await page.close();
  });

  it("narrows to one session when the form is sent: a session typed but not sent leaves the next page unfiltered", async () => {
    const page = await signedIn(alice.token);
    const rows = page.locator(".rows > li");
    await rows.first().waitFor();
    expect(await rows.count()).toBe(20);
    await page.getByLabel("Session").fill("console-s2");
    await page.getByRole("button", { name: "Older turns" }).click();
    await expect.poll(() => rows.count()).toBe(27);
    expect(await rows.last().textContent()).toContain("Task 1 in console-s1");

    await page.getByRole("button", { name: "Show" }).click();
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain("console-s2");
    await page.getByLabel("Session").fill("");
    await page.getByRole("button", { name: "Show" }).click();
    await expect.poll(() => rows.count()).toBe(20);
    expect(await rows.first().textContent()).toContain("console-s3");
    await page.close();
  });

  it("shows the listing last asked for: a slow first page arriving after another agent's does not replace it", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    // Alice's own first page is held until Bob's listing is on screen; then it is let through.
    let releaseAlice!: () => void;
    const aliceHeld = new Promise<void>((resolve) => (releaseAlice = resolve));
    let aliceAnswered = false;
    await page.route("**/v1/memories/recent?**", async (route) => {
      const agent = new URL(route.request().url()).searchParams.get("agent");
      if (agent !== "alice") return route.continue();
      await aliceHeld;
      const response = await route.fetch();
      await route.fulfill({ response });
      aliceAnswered = true;
    });
    await page.goto(new URL("/console", cairn.url).href);
    await page.getByLabel("Token").fill(alice.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("navigation", { name: "Console" }).waitFor();
    await page.goto(new URL("/console#/timeline?agent=bob", cairn.url).href);
    const rows = page.locator(".rows > li");
    await expect.poll(() => rows.first().textContent()).toContain("Bob's task on the billing export");
    releaseAlice();
    await expect.poll(() => aliceAnswered).toBe(true);
    // Let the page act on Alice's answer before reading what it shows.
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 100)));
    expect(await rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain("Bob's task on the billing export");
    expect(await page.getByRole("heading", { name: "Timeline" }).count()).toBe(1);

    // The same page, asked for Alice again, shows hers: the route lets her answers through now.
    await page.getByLabel("Agent").fill("alice");
    await page.getByRole("button", { name: "Show" }).click();
    await expect.poll(() => rows.count()).toBe(20);
    expect(await rows.first().textContent()).toContain("console-s3");
    await page.close();
  });

  it("opens a row's memory from anywhere on the row, and a link inside the row still goes where it says", async () => {
    const page = await signedIn(alice.token);
    await page.goto(new URL("/console#/timeline?agent=bob", cairn.url).href);
    const row = page.locator(".rows > li").first();
    await expect.poll(() => row.textContent()).toContain("Bob's task on the billing export");
    await row.locator(".session").click();
    await expect.poll(() => page.evaluate(() => (globalThis as any).location.hash)).toBe("#/session/console-bob");
    await page.goto(new URL("/console#/timeline?agent=bob", cairn.url).href);
    await page.locator(".rows > li .row-text").first().click();
    await expect.poll(() => page.evaluate(() => (globalThis as any).location.hash)).toBe(`#/memory/${ids.bob}`);
    await page.getByRole("heading", { name: "Prompt" }).waitFor();

    await page.goto(new URL("/console#/search", cairn.url).href);
    await page.getByLabel("Search memories").fill("billing export");
    await page.getByRole("button", { name: "Search" }).click();
    const hit = page.locator(".rows > li", { hasText: "billing export" }).first();
    await hit.waitFor();
    await hit.locator(".agent").click();
    await expect.poll(() => page.evaluate(() => (globalThis as any).location.hash)).toBe(`#/memory/${ids.bob}`);
    await page.close();
  });

  it("renders stored text as text: an injection-shaped memory shows its markup and runs nothing", async () => {
    const page = await signedIn(alice.token);
    await page.locator(".rows > li").first().waitFor();
    const first = page.locator(".rows > li").first();
    expect(await first.textContent()).toContain("<img src=x");
    expect(await page.locator(".rows img, .rows script, .rows b").count()).toBe(0);
    await page.goto(new URL(`/console#/memory/${ids.injection}`, cairn.url).href);
    await page.getByRole("heading", { name: "Prompt" }).waitFor();
    expect(await page.locator("main").textContent()).toContain(INJECTION);
    expect(await page.locator("main img, main script, main b").count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
    await page.close();
  });
});

describe("search", () => {
  it("finds a memory with its confidence and retrievers, filters by kind, and says so when nothing is there", async () => {
    const page = await signedIn(bob.token);
    await page.getByRole("link", { name: "Search" }).click();
    await page.getByLabel("Search memories").fill("where do checkout sessions live");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    const rows = page.locator(".rows > li");
    await rows.first().waitFor();
    const first = await rows.first().textContent();
    expect(first).toContain("checkout sessions");
    expect(first).toMatch(/(high|medium|low) · (lexical|semantic)/);

    await page.getByLabel("Kind").selectOption("lesson");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await expect.poll(() => page.locator(".empty").count()).toBe(1);
    await page.getByLabel("Kind").selectOption("decision");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await expect.poll(() => rows.count()).toBe(1);

    await page.getByLabel("Kind").selectOption("");
    await page.getByLabel("Search memories").fill("Imported pin the SDK");
    await page.getByLabel("Review").selectOption("pending");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await expect.poll(() => rows.first().textContent()).toContain("pending review");
    await page.getByLabel("Review").selectOption("");
    await page.getByLabel("Search memories").fill("zebra migration flamingo xylophone");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await expect.poll(() => page.locator(".empty").textContent()).toContain("Nothing here");
    await page.close();
  });

  it("finds the memories citing a file or folder, words or none, and names the path each cites", async () => {
    const page = await signedIn(bob.token);
    await page.getByRole("link", { name: "Search" }).click();
    await page.getByLabel("Cites file or folder").fill("src/checkout/session.ts");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    const rows = page.locator(".rows > li");
    await expect.poll(() => rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain("high · path");
    expect(await rows.first().locator(".row-cites").textContent()).toBe("cites src/checkout/session.ts, src/checkout/");
    await page.getByLabel("Cites file or folder").fill("src/billing/");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await expect.poll(() => page.locator(".empty").textContent()).toContain("Nothing here");
    await page.close();
  });
});

describe("a memory and its corrections", () => {
  it("shows every field and its checks, and marks it outdated with a reason, as the API does, audit entry included", async () => {
    const page = await signedIn(admin.token);
    await page.goto(new URL(`/console#/memory/${ids.decision}`, cairn.url).href);
    await page.getByRole("heading", { name: "Prompt" }).waitFor();
    const main = page.locator("main");
    expect(await main.textContent()).toContain("Decided: checkout sessions move to Redis");
    expect(await main.textContent()).toContain("at commit abc1234");
    // The code it cites, as written: repository, branch, commit, each path with its lines and symbol.
    const code = page.locator("dt:text-is('Code') + dd");
    expect(await code.textContent()).toBe(
      "acme/shop · branch main · at commit abc1234src/checkout/session.ts lines 10-42 sessionStoresrc/checkout/",
    );
    await page.getByRole("heading", { name: "Audit entries" }).waitFor();
    expect(await page.locator(".audit").textContent()).toContain("add by alice");

    await page.getByRole("button", { name: "Mark outdated" }).click();
    expect(await page.getByRole("button", { name: "Confirm" }).isDisabled()).toBe(true);
    await page.getByLabel("Reason").fill("sessions moved to the edge cache");
    await page.getByLabel("Commit that changed things (optional)").fill("def5678");
    await page.getByRole("button", { name: "Confirm" }).click();
    await expect.poll(() => main.textContent()).toContain("marked it outdated (sessions moved to the edge cache)");
    await expect.poll(() => page.locator(".audit").textContent()).toContain("mark_outdated by ops");

    const stored = await http(cairn.url, "GET", `/v1/memories/${ids.decision}`, { token: alice.token });
    expect(stored.body.outdated).toBe(true);
    expect(stored.body.corrections).toMatchObject([
      { kind: "outdated", reason: "sessions moved to the edge cache", by: "ops", commit: "def5678" },
    ]);
    await expect.poll(() => main.textContent()).toContain("(sessions moved to the edge cache) at commit def5678");
    await page.close();
  });

  it("supersedes one memory by another, shown both ways, and an agent sees no audit entries", async () => {
    const page = await signedIn(alice.token);
    await page.goto(new URL(`/console#/memory/${ids.t1}`, cairn.url).href);
    await page.getByRole("heading", { name: "Prompt" }).waitFor();
    // A memory that cites no code has no Code row (the decision's has one: the test above).
    expect(await page.locator("dt:text-is('Code')").count()).toBe(0);
    await page.getByRole("button", { name: "Supersede" }).click();
    await page.getByLabel("Replaced by").fill(ids.t2!);
    await page.getByLabel("Reason").fill("step 2 redoes step 1");
    await page.getByRole("button", { name: "Confirm" }).click();
    await expect.poll(() => page.locator("main").textContent()).toContain(`Superseded by ${ids.t2}`);
    expect(await page.getByRole("heading", { name: "Audit entries" }).count()).toBe(0);
    await page.getByRole("link", { name: ids.t2!, exact: true }).first().click();
    await expect.poll(() => page.locator("main").textContent()).toContain(`Supersedes ${ids.t1}`);
    await page.close();
  });

  it("forgets a memory after Confirm, and shows the API's error when a reason is refused", async () => {
    const page = await signedIn(alice.token);
    await page.goto(new URL(`/console#/memory/${ids.t3}`, cairn.url).href);
    await page.getByRole("button", { name: "Forget" }).click();
    await page.getByLabel("Reason").fill("x".repeat(5000));
    await page.getByRole("button", { name: "Confirm" }).click();
    await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/reason/);
    expect((await http(cairn.url, "GET", `/v1/memories/${ids.t3}`, { token: alice.token })).status).toBe(200);

    await page.getByLabel("Reason").fill("wrote a customer's email address");
    await page.getByRole("button", { name: "Confirm" }).click();
    await expect.poll(() => page.getByRole("status").textContent()).toContain("was forgotten by alice");
    expect((await http(cairn.url, "GET", `/v1/memories/${ids.t3}`, { token: alice.token })).status).toBe(410);
    await page.close();
  });
});

describe("a session", () => {
  it("lists its turns oldest first, and says when it has no summary yet", async () => {
    const page = await signedIn(alice.token);
    await page.goto(new URL("/console#/session/console-s2", cairn.url).href);
    await page.locator(".rows > li").first().waitFor();
    expect(await page.locator(".rows > li").count()).toBe(1);
    expect(await page.locator("main").textContent()).toContain("No summary yet.");
    await page.goto(new URL("/console#/session/console-s1", cairn.url).href);
    await expect.poll(() => page.locator(".rows > li").count()).toBe(24);
    expect(await page.locator(".rows > li").first().textContent()).toContain("Task 1 in console-s1");
    await page.close();
  });
});

describe("the team page", () => {
  it("shows each agent's newest turn and next step, most recently active first, linking to their timelines", async () => {
    const page = await signedIn(bob.token);
    await page.getByRole("link", { name: "Team" }).click();
    // The page signed in on has rows of its own until the team's replace them: wait for the team's.
    const rows = page.locator(".rows > li");
    await expect.poll(() => rows.locator("a.agent").count()).toBeGreaterThanOrEqual(2);
    const names = await rows.locator("a.agent").allTextContents();
    expect(names).toContain("alice");
    expect(names).toContain("bob");
    await page.getByRole("link", { name: "bob", exact: true }).click();
    await expect.poll(() => page.locator(".rows > li").first().textContent()).toContain("Bob's task");
    await page.close();
  });
});

describe("the review page", () => {
  it("lists imported memories waiting for review; Approve and Reject take a reason and do what review_memory does", async () => {
    const page = await signedIn(admin.token);
    await page.getByRole("link", { name: "Review" }).click();
    const rows = page.locator(".rows > li");
    await expect.poll(() => rows.count()).toBe(2);
    // An imported memory shows when it happened (the commit's time); one that does not say, when it was stored.
    const shown = (await rows.locator("time").evaluateAll((els) => els.map((e) => e.getAttribute("datetime")!))).map((at) =>
      new Date(at).toISOString(),
    );
    expect(shown).toContain("2024-05-01T10:00:00.000Z");
    expect(shown.filter((at) => at !== "2024-05-01T10:00:00.000Z")).toHaveLength(1);
    expect(shown.find((at) => at !== "2024-05-01T10:00:00.000Z")!.slice(0, 4)).toBe(new Date().toISOString().slice(0, 4));
    const first = page.getByRole("form", { name: `Review ${ids.imported1}` });
    expect(await first.getByRole("button", { name: "Approve" }).isDisabled()).toBe(true);
    await first.getByLabel("Reason").fill("the SDK is pinned in package.json");
    await first.getByRole("button", { name: "Approve" }).click();
    await expect.poll(() => rows.count()).toBe(1);
    const second = page.getByRole("form", { name: `Review ${ids.imported2}` });
    await second.getByLabel("Reason").fill("the wrapper is still there");
    await second.getByRole("button", { name: "Reject" }).click();
    await expect.poll(() => page.locator(".empty").textContent()).toContain("Nothing waits for review");

    const approved = await http(cairn.url, "GET", `/v1/memories/${ids.imported1}`, { token: alice.token });
    expect(approved.body.review).toMatchObject({ state: "approved", by: "ops", reason: "the SDK is pinned in package.json" });
    const rejected = await http(cairn.url, "GET", `/v1/memories/${ids.imported2}`, { token: alice.token });
    expect(rejected.body.review).toMatchObject({ state: "rejected", by: "ops" });
    await page.goto(new URL(`/console#/memory/${ids.imported2}`, cairn.url).href);
    await expect.poll(() => page.locator("main").textContent()).toContain("rejected by ops");
    await page.close();

    const agentPage = await signedIn(alice.token);
    expect(await agentPage.getByRole("link", { name: "Review" }).count()).toBe(0);
    await agentPage.close();
  });
});

describe("the review page at the scale of an import", () => {
  it("shows how many wait, filters, each row's content as it will be trusted, and approves all matching after a confirmation that states the count", async () => {
    const imported = async (session: string, n: number) =>
      write(
        admin.token,
        turn(session, n, {
          source: "import",
          prompt: `Imported ${session} commit ${n}`,
          thought: `Evidence ${n}: the diff moves the cache`,
          response: `Outcome ${n}: cache moved`,
        }),
      );
    const bulkA = [await imported("console-bulk-a", 1), await imported("console-bulk-a", 2), await imported("console-bulk-a", 3)];
    const bulkB = await imported("console-bulk-b", 1);
    // What waits besides (what earlier tests of this file left pending), as the API counts it.
    const waiting = (await http(cairn.url, "GET", "/v1/review", { token: admin.token })).body.pending as number;
    for (const width of [390, 1280]) {
      const page = await signedIn(admin.token, { width, height: 844 });
      await page.getByRole("link", { name: "Review" }).click();
      const count = page.getByRole("status", { name: "Waiting for review" });
      const rows = page.locator(".rows > li");
      if (width === 390) {
        await expect.poll(() => count.textContent()).toBe(`${waiting} waiting for review`);
        await expect.poll(() => rows.count()).toBe(waiting);
        // What will be trusted, not only the task: the thought and the response are on the row.
        const content = page.getByLabel(`Content of ${bulkA[1]}`);
        expect(await content.textContent()).toBe(
          "PromptImported console-bulk-a commit 2ThoughtEvidence 2: the diff moves the cacheResponseOutcome 2: cache moved",
        );
        expect(await noHorizontalScroll(page)).toBe(true);

        await page.getByRole("form", { name: "Review filters" }).getByLabel("Session").fill("console-bulk-a");
        await page.getByRole("button", { name: "Filter" }).click();
        await expect.poll(() => count.textContent()).toBe(`3 of ${waiting} waiting match these filters`);
        await expect.poll(() => rows.count()).toBe(3);
        expect(await rows.allTextContents()).not.toEqual(expect.arrayContaining([expect.stringContaining("console-bulk-b")]));

        const all = page.getByRole("form", { name: "Review all matching" });
        expect(await all.getByRole("button", { name: "Approve all 3" }).isDisabled()).toBe(true);
        await all.getByLabel("Reason for all matching").fill("the cache move is in main");
        await all.getByRole("button", { name: "Approve all 3" }).click();
        const confirm = all.getByRole("group", { name: "Confirm" });
        expect(await confirm.textContent()).toContain(
          "Approve 3 memories matching these filters, each with the reason “the cache move is in main”?",
        );
        // Nothing is reviewed before Confirm.
        expect((await http(cairn.url, "GET", `/v1/memories/${bulkA[0]}`, { token: admin.token })).body.review).toEqual({
          state: "pending",
        });
        // One more arrives before Confirm: the count confirmed no longer holds, so nothing is reviewed and the page says so.
        bulkA.push(await imported("console-bulk-a", 4));
        await confirm.getByRole("button", { name: "Confirm" }).click();
        await expect.poll(() => all.getByRole("alert").textContent()).toContain("4 match these filters now, not 3: nothing was reviewed");
        for (const id of bulkA) {
          expect((await http(cairn.url, "GET", `/v1/memories/${id}`, { token: admin.token })).body.review).toEqual({ state: "pending" });
        }
        await expect.poll(() => count.textContent()).toBe(`4 of ${waiting + 1} waiting match these filters`);
        await all.getByRole("button", { name: "Approve all 4" }).click();
        expect(await all.getByRole("group", { name: "Confirm" }).textContent()).toContain("Approve 4 memories matching these filters");
        await all.getByRole("group", { name: "Confirm" }).getByRole("button", { name: "Confirm" }).click();
        await expect.poll(() => page.locator(".outcome").textContent()).toBe("Approved 4.");
        await expect.poll(() => page.locator(".empty").textContent()).toContain("Nothing waiting matches these filters");
        for (const id of bulkA) {
          const stored = await http(cairn.url, "GET", `/v1/memories/${id}`, { token: admin.token });
          expect(stored.body.review).toMatchObject({ state: "approved", by: "ops", reason: "the cache move is in main" });
          const audit = await http(cairn.url, "GET", `/v1/audit?memory_id=${id}`, { token: admin.token });
          expect(audit.body.entries.map((e: { action: string; reason?: string }) => [e.action, e.reason ?? null])).toEqual([
            ["add", null],
            ["approve", "the cache move is in main"],
          ]);
        }
        expect((await http(cairn.url, "GET", `/v1/memories/${bulkB}`, { token: admin.token })).body.review).toEqual({ state: "pending" });
      } else {
        // What stayed pending is what the filter left out: one waits, and its content is shown.
        await expect.poll(() => count.textContent()).toBe(`${waiting - 3} waiting for review`);
        await expect.poll(() => rows.count()).toBe(waiting - 3);
        expect(await page.getByLabel(`Content of ${bulkB}`).textContent()).toContain("Outcome 1: cache moved");
        const all = page.getByRole("form", { name: "Review all matching" });
        await all.getByLabel("Reason for all matching").fill("not ours");
        await all.getByRole("button", { name: `Reject all ${waiting - 3}` }).click();
        await all.getByRole("group", { name: "Confirm" }).getByRole("button", { name: "Cancel" }).click();
        expect(await all.getByRole("group", { name: "Confirm" }).count()).toBe(0);
        expect((await http(cairn.url, "GET", `/v1/memories/${bulkB}`, { token: admin.token })).body.review).toEqual({ state: "pending" });
        expect(await noHorizontalScroll(page)).toBe(true);
      }
      await page.close();
    }
  });
});

describe("the status page", () => {
  it("shows admins whether Chroma is reachable and the workspace's counts on Verify now; agents get no link to it", async () => {
    const page = await signedIn(admin.token);
    await page.getByRole("link", { name: "Status" }).click();
    await expect.poll(() => page.locator("main").textContent()).toContain("Chroma reachable");
    const workspaceStatus = page.getByLabel("Workspace status");
    await expect.poll(() => workspaceStatus.textContent()).toContain("Last verifiednever");
    await page.getByRole("button", { name: "Verify now" }).click();
    await expect.poll(() => workspaceStatus.textContent()).toContain("by ops: healthy");
    const report = page.getByLabel("Integrity report");
    await report.waitFor();
    expect(await report.textContent()).toContain(`Workspace ${workspace}`);
    expect(await report.textContent()).toContain("healthy");
    const turns = await report.locator("tr", { hasText: "turns" }).first().locator("td").nth(1).textContent();
    expect(Number(turns)).toBeGreaterThanOrEqual(27);
    await page.close();

    const agentPage = await signedIn(alice.token);
    expect(await agentPage.getByRole("link", { name: "Search" }).count()).toBe(1);
    expect(await agentPage.getByRole("link", { name: "Status" }).count()).toBe(0);
    await agentPage.close();
  });
});

describe("the inbox", () => {
  const DIRECT = "Finish the cache migration";
  const TEAM = "Freeze on main until Friday";
  const inboxOf = async (token: string) =>
    (await http(cairn.url, "GET", "/v1/messages?detail=full&limit=50", { token })).body as {
      unread: number;
      messages: Array<{ id: string; subject: string; read: boolean; from: string; to: string }>;
    };

  it("sends an admin's message to an agent or the team from the form, and shows the API's error when one is refused", async () => {
    const page = await signedIn(admin.token);
    await page.getByRole("link", { name: "Inbox" }).click();
    const form = page.getByRole("form", { name: "Send a message" });
    const to = form.getByLabel("To");
    // The recipients are the team's agents (from query_team_status) and `team`.
    await expect.poll(() => to.locator("option").allTextContents()).toEqual(expect.arrayContaining(["team", "alice", "bob"]));
    await to.selectOption("alice");
    await form.getByLabel("Subject").fill("x".repeat(201));
    await form.getByLabel("Body").fill("Run step 3 of services/checkout/migrations/2026-11-cache-move.ts, then drop the old table.");
    await form.getByLabel("Memory ids (optional)").fill(ids.decision!);
    await form.getByRole("button", { name: "Send" }).click();
    await expect.poll(() => form.getByRole("alert").textContent()).toMatch(/subject/);
    expect((await inboxOf(alice.token)).messages).toEqual([]);

    await form.getByLabel("Subject").fill(DIRECT);
    await form.getByRole("button", { name: "Send" }).click();
    await expect.poll(() => form.getByRole("status").textContent()).toMatch(/^Sent to alice \(m_[0-9a-f]{32}\)\.$/);
    expect(await form.getByRole("alert").count()).toBe(0);
    await to.selectOption("team");
    await form.getByLabel("Subject").fill(TEAM);
    await form.getByLabel("Body").fill("Nothing merges to main until the release is cut.");
    await form.getByRole("button", { name: "Send" }).click();
    await expect.poll(() => form.getByRole("status").textContent()).toMatch(/^Sent to team /);
    const alicesInbox = await inboxOf(alice.token);
    expect(alicesInbox.unread).toBe(2);
    expect(alicesInbox.messages.map((m) => [m.from, m.to, m.subject, m.read])).toEqual([
      ["ops", "team", TEAM, false],
      ["ops", "alice", DIRECT, false],
    ]);

    // What the admin sent, in the Sent box; and alice's inbox as she has it, which only she marks read.
    await page.getByRole("button", { name: "Sent" }).click();
    const rows = page.getByRole("list", { name: "Sent messages" }).locator("> li");
    await expect.poll(() => rows.allTextContents()).toEqual([expect.stringContaining(`to team`), expect.stringContaining("to alice")]);
    await page.getByRole("button", { name: "Received" }).click();
    await page.getByLabel("Whose messages").selectOption("alice");
    await expect.poll(() => page.getByRole("status", { name: "Unread messages" }).textContent()).toBe("alice has 2 unread");
    const alices = page.getByRole("list", { name: "Messages" }).locator("> li");
    await expect.poll(() => alices.count()).toBe(2);
    await page.getByRole("button", { name: DIRECT }).click();
    await expect.poll(() => alices.nth(1).textContent()).toContain("Run step 3");
    expect(await page.getByRole("button", { name: "Mark read" }).count()).toBe(0);
    expect(await page.getByRole("button", { name: "Mark all shown read" }).count()).toBe(0);
    await page.close();
  });

  it("shows an agent its messages unread first with the count; opening one shows its body, Mark read marks it and the count drops", async () => {
    const page = await signedIn(alice.token, { width: 390, height: 844 });
    const nav = page.getByRole("navigation", { name: "Console" });
    await expect.poll(() => nav.getByRole("link", { name: "Inbox" }).textContent()).toBe("Inbox (2)");
    await nav.getByRole("link", { name: "Inbox" }).click();
    const count = page.getByRole("status", { name: "Unread messages" });
    await expect.poll(() => count.textContent()).toBe("2 unread");
    const rows = page.getByRole("list", { name: "Messages" }).locator("> li");
    await expect.poll(() => rows.count()).toBe(2);
    expect(await rows.locator(".flag").allTextContents()).toEqual(["unread", "unread"]);
    expect(await rows.nth(1).textContent()).toContain(DIRECT);
    expect(await rows.nth(1).textContent()).not.toContain("Run step 3");

    await page.getByRole("button", { name: DIRECT }).click();
    await expect
      .poll(() => rows.nth(1).textContent())
      .toContain("Run step 3 of services/checkout/migrations/2026-11-cache-move.ts, then drop the old table.");
    expect(await rows.nth(1).getByRole("link", { name: ids.decision! }).getAttribute("href")).toBe(`#/memory/${ids.decision}`);
    expect(await noHorizontalScroll(page)).toBe(true);
    await rows.nth(1).getByRole("button", { name: "Mark read" }).click();
    await expect.poll(() => count.textContent()).toBe("1 unread");
    expect(await rows.locator(".flag").allTextContents()).toEqual(["unread", "read"]);
    expect(await nav.getByRole("link", { name: "Inbox" }).textContent()).toBe("Inbox (1)");
    expect(await rows.nth(1).getByRole("button", { name: "Mark read" }).count()).toBe(0);
    const after = await inboxOf(alice.token);
    expect(after.unread).toBe(1);
    expect(after.messages.map((m) => [m.subject, m.read])).toEqual([
      [TEAM, false],
      [DIRECT, true],
    ]);
    await page.close();
  });

  it("shows a third agent the team's message but not another's, a page at a time, and marks all shown read", async () => {
    // Ten direct messages to bob after the team's: the team's is on his second page.
    for (let n = 1; n <= 10; n++) {
      const sent = await http(cairn.url, "POST", "/v1/messages", {
        token: admin.token,
        body: { to: "bob", subject: `Review request ${n}`, body: `Please review change ${n}.` },
      });
      expect(sent.status).toBe(201);
    }
    const page = await signedIn(bob.token);
    const nav = page.getByRole("navigation", { name: "Console" });
    await expect.poll(() => nav.getByRole("link", { name: "Inbox" }).textContent()).toBe("Inbox (11)");
    await nav.getByRole("link", { name: "Inbox" }).click();
    const count = page.getByRole("status", { name: "Unread messages" });
    await expect.poll(() => count.textContent()).toBe("11 unread");
    const rows = page.getByRole("list", { name: "Messages" }).locator("> li");
    await expect.poll(() => rows.count()).toBe(10);
    expect((await rows.allTextContents()).join("\n")).not.toContain(TEAM);
    await page.getByRole("button", { name: "More" }).click();
    await expect.poll(() => rows.count()).toBe(11);
    const shown = (await rows.allTextContents()).join("\n");
    expect(shown).toContain(TEAM);
    expect(shown).toContain("Review request 1");
    expect(shown).not.toContain(DIRECT);
    expect(await noHorizontalScroll(page)).toBe(true);

    await page.getByRole("button", { name: "Mark all shown read" }).click();
    await expect.poll(() => count.textContent()).toBe("0 unread");
    expect(await rows.locator(".flag").allTextContents()).toEqual(Array(11).fill("read"));
    expect(await nav.getByRole("link", { name: "Inbox" }).textContent()).toBe("Inbox");
    expect((await inboxOf(bob.token)).unread).toBe(0);
    // Read for bob only: the team's message is still unread for alice.
    const alices = await inboxOf(alice.token);
    expect(alices.unread).toBe(1);
    expect(alices.messages.find((m) => m.subject === TEAM)!.read).toBe(false);
    await page.close();
  });
});

describe("screens", () => {
  it("fit a 390 px phone and a 1280 px screen without horizontal scrolling, on every page", async () => {
    for (const width of [390, 1280]) {
      const page = await signedIn(admin.token, { width, height: 844 });
      for (const hash of [
        "#/timeline?agent=alice",
        "#/search",
        `#/memory/${ids.decision}`,
        "#/session/console-s1",
        "#/team",
        "#/review",
        "#/status",
        "#/inbox",
      ]) {
        await page.goto(new URL(`/console${hash}`, cairn.url).href);
        await page.locator("main h1").waitFor();
        await page.waitForLoadState("networkidle");
        expect(await noHorizontalScroll(page), `${hash} at ${width}px`).toBe(true);
      }
      await page.close();
    }
  });
});
