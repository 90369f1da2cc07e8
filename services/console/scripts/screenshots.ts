import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import yaml from "js-yaml";
import { loadConfig, silentLogger, startStack } from "@cairn/memory-core";
import { buildConsole } from "../src/build.js";
import { newToken } from "../../memory-core/src/auth/tokens.js";
import { launchChromium } from "../test/browser.js";

/**
 * `npm run screenshots -w @cairn/console`: a stack on a fresh data dir with a small team's memories, and each
 * console page photographed into docs/console/ (for the docs and the README). Not a test: it asserts nothing.
 */
const out = fileURLToPath(new URL("../../../docs/console/", import.meta.url));
const dir = await mkdtemp(join(tmpdir(), "cairn-shots-"));
const admin = newToken();
const agents = { "backend-dev": newToken(), "frontend-dev": newToken() };
await writeFile(
  join(dir, "tokens.yaml"),
  yaml.dump({
    tokens: [
      { token: admin, workspace: "acme", agent: "operator", role: "admin" },
      ...Object.entries(agents).map(([agent, token]) => ({ token, workspace: "acme", agent, role: "agent" })),
    ],
  }),
);
const stack = await startStack({
  config: loadConfig({ CAIRN_DATA_DIR: dir, CAIRN_PORT: "0", CAIRN_TOKENS_FILE: join(dir, "tokens.yaml") }),
  log: silentLogger,
  console: await buildConsole(),
});
const write = async (token: string, body: object) => {
  const res = await fetch(new URL("/v1/memories", stack.url), {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return ((await res.json()) as { id: string }).id;
};
try {
  const be = agents["backend-dev"];
  await write(be, {
    session_id: "2026-11-28-checkout",
    kind: "attempt",
    prompt: "Checkout sessions expire too late under load",
    thought: "Tried a Postgres sweeper job every minute; it locks the sessions table at peak.",
    response: "Dropped the sweeper: lock waits of seconds in the load test.",
  });
  const decision = await write(be, {
    session_id: "2026-11-28-checkout",
    kind: "decision",
    prompt: "Where do checkout sessions live?",
    thought: "Redis has TTLs built in and the cart service already talks to it; Postgres would need the sweeper we dropped.",
    response: "Decided: checkout sessions move to Redis with a 30 minute TTL. Next: migrate the 2% still in Postgres.",
    tags: ["checkout", "redis"],
    refs: ["src/checkout/session-store.ts", "PAY-412"],
    checks: [{ name: "checkout integration tests", command: "npm test -- checkout", status: "passed", commit: "9f3c2ab" }],
  });
  await write(be, {
    session_id: "2026-11-29-migration",
    prompt: "Migrate the remaining checkout sessions",
    thought: "A one-off script reading Postgres in pages of 500, writing to Redis with the remaining TTL.",
    response: "Migrated 1,204 sessions; 3 had expired already. Next step: drop the Postgres table after a week.",
  });
  await write(agents["frontend-dev"], {
    session_id: "2026-11-29-cart-ui",
    kind: "lesson",
    prompt: "Cart badge shows a stale count after checkout",
    thought: "The badge reads the session cookie, which outlives the Redis session.",
    response: "Lesson: read the count from the cart API, never from the cookie.",
  });
  await write(admin, {
    session_id: "git-import-payments",
    source: "import",
    prompt: 'Revert "Cache checkout totals in the browser" (PAY-398)',
    thought: "This reverts commit 41d2e9f: totals went stale after coupon changes.",
    response: "2 files changed: src/checkout/totals.ts, test/checkout/totals.test.ts",
    refs: ["41d2e9f", "PAY-398"],
  });
  await fetch(new URL(`/v1/memories/${decision}/outdated`, stack.url), {
    method: "POST",
    headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
    body: JSON.stringify({ reason: "TTL raised to 45 minutes after the holiday load test" }),
  });

  const message = async (token: string, body: object) => {
    await fetch(new URL("/v1/messages", stack.url), {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  };
  await message(agents["frontend-dev"], {
    to: "team",
    subject: "Cart badge reads the cart API now",
    body: "Anything that shows a cart count: read it from the cart API, never from the session cookie.",
  });
  await message(be, {
    to: "operator",
    subject: "Postgres sessions table can go on Monday",
    body: "The migration is done (1,204 sessions moved, 3 expired). Drop the table after a week without reads.",
    memory_ids: [decision],
    session_ids: ["2026-11-29-migration"],
  });
  await message(admin, {
    to: "backend-dev",
    subject: "Freeze on main until the release is cut",
    body: "Nothing merges to main until Friday.",
  });

  await mkdir(out, { recursive: true });
  const browser = await launchChromium();
  const shoot = async (name: string, hash: string, width = 1280, height = 800) => {
    const page = await browser.newPage({ viewport: { width, height } });
    await page.goto(new URL("/console", stack.url).href);
    await page.getByLabel("Token").fill(admin);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("navigation", { name: "Console" }).waitFor();
    await page.goto(new URL(`/console${hash}`, stack.url).href);
    await page.waitForLoadState("networkidle");
    if (name === "search") {
      await page.getByLabel("Search memories").fill("where do checkout sessions live");
      await page.getByRole("button", { name: "Search", exact: true }).click();
      await page.locator(".rows > li").first().waitFor();
    }
    if (name === "inbox") {
      await page.getByRole("button", { name: "Postgres sessions table can go on Monday" }).click();
    }
    await page.screenshot({ path: join(out, `${name}.png`), fullPage: true });
    await page.close();
  };
  const signIn = await browser.newPage({ viewport: { width: 1280, height: 600 } });
  await signIn.goto(new URL("/console", stack.url).href);
  await signIn.screenshot({ path: join(out, "sign-in.png") });
  await shoot("timeline", "#/timeline?agent=backend-dev");
  await shoot("search", "#/search");
  await shoot("memory", `#/memory/${decision}`);
  await shoot("session", "#/session/2026-11-28-checkout");
  await shoot("team", "#/team");
  await shoot("review", "#/review");
  await shoot("inbox", "#/inbox");
  await shoot("memory-phone", `#/memory/${decision}`, 390, 844);
  await browser.close();
  process.stdout.write(`screenshots in ${out}\n`);
} finally {
  await stack.stop();
  await rm(dir, { recursive: true, force: true });
}
