import { execFile, execFileSync } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer, type Server } from "node:net";
import { fileURLToPath } from "node:url";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HOOK_OUTPUT_BYTES, MEDIUM_EVIDENCE } from "../src/prompt-hook.js";
import { codingTurn } from "../../memory-core/test/fixtures/coding-turns.js";
import { http, makeToken, startCairn, uniqueWorkspace, type TestCairn } from "../../memory-core/test/support/harness.js";

const BIN = fileURLToPath(new URL("../bin/cairn-load.mjs", import.meta.url));
const workspace = uniqueWorkspace("prompt-hook");
const agent = makeToken(workspace, "backend-dev");
// A team's store of its own (memories from bench/fixtures/prompts/prompts.json), for prompts in other words.
const team = makeToken(uniqueWorkspace("prompt-hook-team"), "backend-dev");
const teamIds = new Map<string, string>();
let cairn: TestCairn;
const ids: string[] = [];

/** Some of a team's memories: decisions, attempts and fixes over several stacks. */
const TEAM_MEMORIES = [
  {
    id: "webhook-retries",
    kind: "decision",
    prompt: "PAY-311: partner webhooks get lost when their endpoint is down",
    thought:
      "Partners' endpoints fail for minutes at a time during their deploys, and a single attempt dropped the event for good. Exponential backoff from 1 s doubling to 64 s covers a typical deploy window; more attempts only delay the alert.",
    response:
      "The webhook sender (services/payments/src/webhooks/sender.ts) retries with exponential backoff, six attempts, then parks the delivery in the webhook_dead_letters table; `npm run webhooks:replay` re-sends parked deliveries.",
    tags: ["payments", "webhooks"],
    refs: ["PAY-311", "services/payments/src/webhooks/sender.ts"],
  },
  {
    id: "webhook-signature",
    kind: "turn",
    prompt: "PAY-340: partners report that webhook signatures fail verification",
    thought:
      "We computed the HMAC over JSON.stringify of the parsed payload, which reorders nothing but drops the trailing newline and escapes unicode differently from the bytes we send. Partners verify the raw body.",
    response:
      "Fixed: the signature is now the HMAC-SHA256 of the exact raw body bytes sent, in the Cairn-Signature header with a timestamp. Added a test that verifies with the partner SDK's sample code.",
    tags: ["payments", "webhooks"],
    refs: ["PAY-340"],
  },
  {
    id: "refresh-race",
    kind: "turn",
    prompt: "AUTH-77: users randomly signed out of the web app",
    thought:
      "Two tabs refreshed the access token at the same moment; the second used a refresh token the first had already rotated, and reuse detection revoked the whole token family.",
    response: "Fixed in web/src/auth/refresh.ts: a BroadcastChannel lock so only one tab refreshes and the others wait for its result.",
    tags: ["auth", "web"],
    refs: ["AUTH-77", "web/src/auth/refresh.ts"],
  },
  {
    id: "tanstack-query",
    kind: "decision",
    prompt: "State management in the web app",
    thought: "Most of the Redux store was cached server responses with hand-written loading flags and stale data bugs.",
    response: "Server state moved to TanStack Query; Redux remains only for the invoice editor's undo stack.",
    tags: ["web", "react"],
  },
  {
    id: "vite",
    kind: "turn",
    prompt: "Move the web app from webpack to Vite",
    thought: "Dev server cold start was 48 s on webpack 5. The one snag was process.env references, which Vite does not define.",
    response:
      "Migrated to Vite: dev cold start 3 s, production build from 3 min 10 s to 55 s; process.env.X became import.meta.env.VITE_X.",
    tags: ["web", "build"],
  },
  {
    id: "parquet-memory",
    kind: "turn",
    prompt: "DATA-97: events load job OOM-killed",
    thought: "pipelines/events/load.py read the whole events parquet into pandas with object dtypes; the pod peaked at 14 GB.",
    response: "Read only the needed columns with pyarrow and made low-cardinality strings categorical; peak RSS 3.2 GB, output unchanged.",
    tags: ["data", "pandas"],
    refs: ["DATA-97", "pipelines/events/load.py"],
  },
  {
    id: "polars-attempt",
    kind: "attempt",
    prompt: "Rewrite sessionization in Polars",
    thought:
      "The Polars version was four times faster, but our UDFs rely on pandas groupby-apply semantics and porting them was estimated at three weeks.",
    response: "Kept the sessionization job on pandas; revisit Polars in Q3.",
    tags: ["data", "pandas"],
  },
  {
    id: "dbt-incremental",
    kind: "decision",
    prompt: "fct_orders takes 50 minutes",
    thought: "Every run rebuilt the model from scratch.",
    response:
      "fct_orders is an incremental dbt model merging on order_id with a three-day lookback for late updates; a run takes 4 minutes.",
    tags: ["data", "dbt"],
  },
  {
    id: "kafka-batching",
    kind: "turn",
    prompt: "Ingestion throughput",
    thought:
      "The Go ingest service produced one Kafka message per request. Batching adds latency, accepted by the product owner up to 50 ms.",
    response: "Producer batching (linger 20 ms, 64 KB batches) raised throughput from 18k to 95k events/s; p99 latency +22 ms.",
    tags: ["go", "ingest", "kafka"],
  },
  {
    id: "goroutine-leak",
    kind: "turn",
    prompt: "Ingest pods' memory grows until restart",
    thought:
      "The HTTP handler started the Kafka write with context.Background(), so when a client disconnected the goroutine waited forever: 40k goroutines after a day.",
    response: "The handler passes r.Context() to the write and returns on cancellation; goroutines stay around 300.",
    tags: ["go", "ingest"],
  },
  {
    id: "hpa",
    kind: "decision",
    prompt: "Autoscaling the API deployment",
    thought: "Scaling on memory was tried and dropped: the GC keeps memory high long after load falls, so pods never scaled down.",
    response: "The API's HorizontalPodAutoscaler targets 65% CPU, 3 to 12 pods.",
    tags: ["k8s", "infra"],
  },
  {
    id: "terraform-state",
    kind: "decision",
    prompt: "Terraform state layout",
    thought: "Workspaces made it too easy to apply staging changes to production from the wrong workspace.",
    response: "Terraform state is in S3 with DynamoDB locking, one state file per environment directory; workspaces are not used.",
    tags: ["terraform", "infra"],
  },
  {
    id: "email-queue",
    kind: "decision",
    prompt: "Transactional email delivery",
    thought: "Sending from the request path failed the request whenever SES throttled.",
    response: "Emails go through a BullMQ queue to SES with five retries; the SES bounce webhook marks the address undeliverable.",
    tags: ["email"],
  },
  {
    id: "csv-stream",
    kind: "turn",
    prompt: "LEDGER-88: invoice export times out for big merchants",
    thought: "The export built the whole file in memory and hit the 30 s gateway timeout.",
    response:
      "The CSV export streams rows from a Postgres cursor through a Node stream; memory stays flat and the first bytes go out at once.",
    tags: ["ledger", "api"],
    refs: ["LEDGER-88"],
  },
  {
    id: "invoice-table",
    kind: "turn",
    prompt: "Invoice list freezes for large merchants",
    thought: "The list rendered every row; merchants with 5,000 invoices waited 2.1 s per render and typing in the filter lagged.",
    response: "web/src/invoices/InvoiceTable.tsx now virtualizes rows with react-window; a render takes 60 ms at 5,000 rows.",
    tags: ["web", "performance"],
    refs: ["web/src/invoices/InvoiceTable.tsx"],
  },
  {
    id: "openapi-client",
    kind: "decision",
    prompt: "The web app's API client",
    thought: "The hand-written client drifted from the server's responses.",
    response: "The client's types are generated from the OpenAPI document with openapi-typescript on every build.",
    tags: ["api", "web"],
  },
  {
    id: "ios-keychain",
    kind: "turn",
    prompt: "iOS app logs users out after an update",
    thought: "Keychain items were kSecAttrAccessibleWhenUnlocked, so background refresh after an update could not read the token.",
    response: "Keychain accessibility is now AfterFirstUnlock; existing items are migrated on first launch.",
    tags: ["ios", "auth"],
  },
];

/** The hook as a harness runs it: a child process, the hook's JSON on stdin. */
function hook(stdin: string, env: Record<string, string>, cwd?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, "--hook", "prompt"],
      { env: { PATH: process.env.PATH ?? "", ...env }, ...(cwd ? { cwd } : {}) },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin!.end(stdin);
  });
}
const submit = (prompt: string) => JSON.stringify({ session_id: "s", hook_event_name: "UserPromptSubmit", prompt });

beforeAll(async () => {
  cairn = await startCairn([agent, team]);
  for (const { id, ...memory } of TEAM_MEMORIES) {
    const res = await http(cairn.url, "POST", "/v1/memories", { token: team.token, body: { session_id: `team-${id}`, ...memory } });
    teamIds.set(id, res.body.id);
  }
  for (let n = 0; n < 10; n++) {
    const res = await http(cairn.url, "POST", "/v1/memories", { token: agent.token, body: codingTurn(n) });
    ids.push(res.body.id);
  }
});
afterAll(() => cairn?.close());

describe("cairn-load --hook prompt", () => {
  it("points at the memories that bear on a prompt when Cairn is sure, within its budget, and says nothing for an unrelated one", async () => {
    const env = { CAIRN_URL: cairn.url.origin, CAIRN_TOKEN: agent.token };
    const related = await hook(submit("AUTH-412: the token refresh Redis stream consumer group needs a dead-letter queue"), env);
    expect(related.code).toBe(0);
    expect(Buffer.byteLength(related.stdout)).toBeLessThanOrEqual(HOOK_OUTPUT_BYTES);
    const output = JSON.parse(related.stdout);
    expect(output.hookSpecificOutput.hookEventName).toBe("UserPromptSubmit");
    const lines = output.hookSpecificOutput.additionalContext.split("\n").slice(1);
    expect(lines.length).toBeGreaterThanOrEqual(1);
    expect(lines.length).toBeLessThanOrEqual(3);
    // The AUTH-412 turns are the first subject: turns 0 and 5 of the fixture.
    expect([ids[0], ids[5]]).toContain(/t_[0-9a-f]{32}/.exec(lines[0])![0]);

    const unrelated = await hook(submit("Write a limerick about a giraffe who learns to play the cello"), env);
    expect([unrelated.code, unrelated.stdout]).toEqual([0, ""]);
    expect(unrelated.stderr).toContain("no memory bears on this prompt");
  });

  it("points at a memory that a prompt in other words bears on when the memory's words hold the prompt's, and stays silent on work in the same stacks that none bears on", async () => {
    const env = { CAIRN_URL: cairn.url.origin, CAIRN_TOKEN: team.token };
    const pointers = async (prompt: string) => {
      const run = await hook(submit(prompt), env);
      expect(run.code).toBe(0);
      expect(Buffer.byteLength(run.stdout)).toBeLessThanOrEqual(HOOK_OUTPUT_BYTES);
      return { ids: [...run.stdout.matchAll(/t_[0-9a-f]{32}/g)].map(([id]) => id), stdout: run.stdout, stderr: run.stderr };
    };
    // A task that names its subject loosely: Cairn is not sure of the match (no `high` hit), but the memory holds
    // most of what the prompt says.
    const task = await pointers("add retries to the webhook sender");
    expect(task.ids[0]).toBe(teamIds.get("webhook-retries"));
    expect(JSON.parse(task.stdout).hookSpecificOutput.hookEventName).toBe("UserPromptSubmit");
    // A long prompt: its first sentence says what it is about, the rest adds words no memory holds.
    const long = await pointers(
      "The nightly job that loads the events parquet got killed again last night. Looks like the pod hit its memory limit during the load step. Can you look into it and make it use less memory? Don't change the output schema, the dashboards depend on it.",
    );
    expect(long.ids).toContain(teamIds.get("parquet-memory"));

    // Work in the same stacks, sharing words with the store ("dead-letter queue", "vite dev server"), that no memory
    // bears on.
    for (const prompt of [
      "write a Terraform module for an SQS queue with a dead-letter queue for the notifications service",
      "Error: ENOSPC: System limit for number of file watchers reached, watch '/home/me/app/web/src'\nvite dev server won't start on my laptop",
    ]) {
      const unrelated = await pointers(prompt);
      expect([unrelated.stdout, unrelated.ids]).toEqual(["", []]);
      expect(unrelated.stderr).toContain("no memory bears on this prompt");
    }
  });

  it("points at a memory Cairn finds at medium when it holds part of the prompt's words, and stays silent on a medium first hit that holds little", async () => {
    const env = { CAIRN_URL: cairn.url.origin, CAIRN_TOKEN: team.token };
    const evidence = async (prompt: string) => {
      const res = await http(cairn.url, "POST", "/v1/memories/query", {
        token: team.token,
        body: { query: prompt, limit: 1, evidence: true },
      });
      return res.body.hits[0] as { confidence: string; memory: { id: string }; evidence: { similarity: number; share: number } };
    };
    // Both first hits are `medium` over the same store, neither reaches the lexical `low` floor on its own words:
    // what tells them apart is how much of the prompt's information the memory holds.
    const related = "the invoices page is really slow for merchants with thousands of invoices";
    const relatedHit = await evidence(related);
    expect([relatedHit.memory.id, relatedHit.confidence]).toEqual([teamIds.get("invoice-table"), "medium"]);
    expect(relatedHit.evidence.share).toBeGreaterThanOrEqual(MEDIUM_EVIDENCE.share);
    expect(relatedHit.evidence.similarity).toBeGreaterThanOrEqual(MEDIUM_EVIDENCE.similarity);
    const pointed = await hook(submit(related), env);
    expect(pointed.code).toBe(0);
    expect(Buffer.byteLength(pointed.stdout)).toBeLessThanOrEqual(HOOK_OUTPUT_BYTES);
    expect([...pointed.stdout.matchAll(/t_[0-9a-f]{32}/g)].map(([id]) => id)).toEqual([teamIds.get("invoice-table")]);

    for (const unrelated of [
      "add type declarations for the untyped slugify package we import in the web app",
      "Error: ENOSPC: System limit for number of file watchers reached",
    ]) {
      const hit = await evidence(unrelated);
      expect(hit.confidence).toBe("medium");
      expect(hit.evidence.share).toBeLessThan(MEDIUM_EVIDENCE.share);
      const silent = await hook(submit(unrelated), env);
      expect([silent.code, silent.stdout]).toEqual([0, ""]);
      expect(silent.stderr).toContain("no memory bears on this prompt");
    }
  });

  it("prints nothing and exits 0 when Cairn is unreachable, refuses the token, is too slow, or the input is not the hook's", async () => {
    const prompt = submit("AUTH-412: the token refresh Redis stream consumer group needs a dead-letter queue");
    const closed = await hook(prompt, { CAIRN_URL: "http://127.0.0.1:9", CAIRN_TOKEN: agent.token });
    expect([closed.code, closed.stdout]).toEqual([0, ""]);
    expect(closed.stderr).toContain("unreachable");

    const refused = await hook(prompt, { CAIRN_URL: cairn.url.origin, CAIRN_TOKEN: "cairn_not-a-token" });
    expect([refused.code, refused.stdout]).toEqual([0, ""]);
    expect(refused.stderr).toContain("401");

    // A server that accepts the connection and never answers.
    const silent: Server = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = silent.address() as AddressInfo;
      const slow = await hook(prompt, { CAIRN_URL: `http://127.0.0.1:${port}`, CAIRN_TOKEN: agent.token, CAIRN_HOOK_TIMEOUT_MS: "300" });
      expect([slow.code, slow.stdout]).toEqual([0, ""]);
      expect(slow.stderr).toContain("within 300 ms");
    } finally {
      silent.close();
    }

    const garbled = await hook("{not json", { CAIRN_URL: cairn.url.origin, CAIRN_TOKEN: agent.token });
    expect([garbled.code, garbled.stdout]).toEqual([0, ""]);
    const unset = await hook(prompt, {});
    expect([unset.code, unset.stdout]).toEqual([0, ""]);
    expect(unset.stderr).toContain("CAIRN_URL");
    // The same prompt with everything in order speaks: the silences above are the faults', not the prompt's.
    expect((await hook(prompt, { CAIRN_URL: cairn.url.origin, CAIRN_TOKEN: agent.token })).stdout).toContain("UserPromptSubmit");
  });

  it("in a git repository, says a memory was written on a branch not merged yet, and not once it is merged", async () => {
    const root = await mkdtemp(join(tmpdir(), "cairn-prompt-hook-git-"));
    const git = (...args: string[]) =>
      execFileSync("git", args, {
        cwd: root,
        encoding: "utf8",
        env: {
          PATH: process.env.PATH ?? "",
          HOME: root,
          GIT_CONFIG_NOSYSTEM: "1",
          GIT_AUTHOR_NAME: "dev",
          GIT_AUTHOR_EMAIL: "dev@example.test",
          GIT_COMMITTER_NAME: "dev",
          GIT_COMMITTER_EMAIL: "dev@example.test",
        },
      }).trim();
    git("init", "-q", "-b", "main");
    await writeFile(join(root, "cache.ts"), "v1\n");
    git("add", "-A");
    git("commit", "-q", "-m", "initial");
    git("checkout", "-q", "-b", "feature/token-cache");
    await writeFile(join(root, "cache.ts"), "v2\n");
    git("commit", "-q", "-am", "cache refreshed tokens");
    const commit = git("rev-parse", "HEAD");
    git("checkout", "-q", "main");
    const res = await http(cairn.url, "POST", "/v1/memories", {
      token: agent.token,
      body: {
        session_id: "cache-311",
        kind: "decision",
        prompt: "CACHE-311: cache refreshed tokens in process",
        thought: "Refresh hit Redis on every request; a 30 s in-process cache removes most of those calls.",
        response: "CACHE-311 decided: refreshed tokens are cached in process for 30 seconds.",
        code: { branch: "feature/token-cache", commit, paths: [{ path: "cache.ts" }] },
      },
    });
    expect(res.status).toBe(201);
    const env = { CAIRN_URL: cairn.url.origin, CAIRN_TOKEN: agent.token };
    const ask = JSON.stringify({
      session_id: "s",
      cwd: root,
      hook_event_name: "UserPromptSubmit",
      prompt: "CACHE-311: how long are refreshed tokens cached in process?",
    });
    const line = async () =>
      (JSON.parse((await hook(ask, env, root)).stdout).hookSpecificOutput.additionalContext as string)
        .split("\n")
        .find((l) => l.includes(res.body.id));
    expect(await line()).toContain("decision; on branch feature/token-cache, not merged)");
    git("merge", "-q", "--no-ff", "-m", "merge", "feature/token-cache");
    const merged = await line();
    expect(merged).toContain(res.body.id);
    expect(merged).not.toContain("on branch");
  });
});
