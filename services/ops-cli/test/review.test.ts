import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { http, makeToken, startCairn, turn, uniqueWorkspace, type TestCairn } from "../../memory-core/test/support/harness.js";
import { cairnCli } from "./support/run-cli.js";

/** `cairn review` as an operator runs it: a child process against a running memory-core that reviews two a call. */
describe("cairn review", () => {
  const workspace = uniqueWorkspace("cli-review");
  const importer = makeToken(workspace, "git-import", "importer");
  const alice = makeToken(workspace, "alice");
  const ops = makeToken(workspace, "ops", "admin");
  let cairn: TestCairn;
  let gitIds: string[] = [];
  let transcriptId = "";
  beforeAll(async () => {
    cairn = await startCairn([importer, alice, ops], { reviewPerCall: 2 });
    const memories = Array.from({ length: 5 }, (_, i) => turn("git-main", i + 1, { prompt: `Imported commit ${i + 1}` }));
    const batch = await http(cairn.url, "POST", "/v1/memories/batch", { token: importer.token, body: { memories } });
    expect(batch.status).toBe(200);
    gitIds = batch.body.results.map((r: { id: string }) => r.id).sort();
    const own = await http(cairn.url, "POST", "/v1/memories", {
      token: alice.token,
      body: turn("transcript-1", 1, { source: "import", prompt: "An imported transcript" }),
    });
    transcriptId = own.body.id;
  });
  afterAll(() => cairn?.close());

  const cli = (...args: string[]) => cairnCli([...args, "--url", cairn.url.toString(), "--token", ops.token]);
  const reviewOf = async (id: string) => (await http(cairn.url, "GET", `/v1/memories/${id}`, { token: ops.token })).body.review;

  it("lists how many wait and the oldest, filtered, as text and as JSON", async () => {
    const all = await cli("review", "list", "--json");
    expect(all.code, all.stderr).toBe(0);
    const listed = JSON.parse(all.stdout);
    expect([listed.workspace, listed.total, listed.pending]).toEqual([workspace, 6, 6]);
    expect(listed.memories.map((m: { id: string }) => m.id)).toEqual([...gitIds, transcriptId]);

    const git = await cli("review", "list", "--session", "git-main", "--limit", "2");
    expect(git.code, git.stderr).toBe(0);
    expect(git.stdout).toContain(`${workspace}: 5 waiting for review (6 in all), the oldest 2:`);
    expect(git.stdout).toContain(gitIds[0]);
    expect(git.stdout).toContain(gitIds[1]);
    expect(git.stdout).not.toContain(gitIds[2]);
    expect(git.stdout).not.toContain(transcriptId);

    const byAgent = JSON.parse((await cli("review", "list", "--agent", "alice", "--source", "import", "--json")).stdout);
    expect([byAgent.total, byAgent.memories.map((m: { id: string }) => m.id)]).toEqual([1, [transcriptId]]);
    const future = JSON.parse((await cli("review", "list", "--since", "2999-01-01", "--json")).stdout);
    expect([future.total, future.memories, future.pending]).toEqual([0, [], 6]);
  });

  it("refuses bad arguments before asking memory-core, and an agent's token with what to fix", async () => {
    const noReason = await cli("review", "approve", "--session", "git-main");
    expect([noReason.code, noReason.stderr]).toEqual([2, expect.stringContaining("--reason R is required")]);
    const badDate = await cli("review", "list", "--since", "last tuesday");
    expect([badDate.code, badDate.stderr]).toEqual([2, expect.stringContaining("--since takes a date")]);
    const badSource = await cli("review", "reject", "--reason", "x", "--source", "robot");
    expect([badSource.code, badSource.stderr]).toEqual([2, expect.stringContaining('unknown --source "robot"')]);
    const noAction = await cli("review");
    expect(noAction.code).toBe(2);
    const asAgent = await cairnCli(["review", "approve", "--reason", "mine", "--url", cairn.url.toString(), "--token", alice.token]);
    expect([asAgent.code, asAgent.stderr]).toEqual([1, expect.stringContaining("not an admin token (403)")]);
    for (const id of gitIds) expect(await reviewOf(id)).toEqual({ state: "pending" });
  });

  it("a dry run counts and changes nothing; a run approves exactly what matches over several calls, and again changes nothing", async () => {
    const dry = await cli("review", "approve", "--reason", "history checked", "--session", "git-main", "--dry-run");
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toBe(`${workspace}: 5 waiting memories match; would approve them (dry run, nothing changed)\n`);
    for (const id of gitIds) expect(await reviewOf(id)).toEqual({ state: "pending" });

    const run = await cli("review", "approve", "--reason", "history checked", "--session", "git-main");
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe(`${workspace}: approved 5 of 5 matching\n`);
    // Progress on stderr, as memory-core's bound of two a call moved it on.
    expect(run.stderr).toContain("(5/5)");
    for (const id of gitIds) expect(await reviewOf(id)).toMatchObject({ state: "approved", by: "ops", reason: "history checked" });
    expect(await reviewOf(transcriptId)).toEqual({ state: "pending" });
    const audit = await http(cairn.url, "GET", `/v1/audit?agent=ops&limit=100`, { token: ops.token });
    const approvals = audit.body.entries.filter((e: { action: string }) => e.action === "approve");
    expect(approvals.map((e: { memory_id: string }) => e.memory_id).sort()).toEqual(gitIds);
    expect(new Set(approvals.map((e: { reason: string }) => e.reason))).toEqual(new Set(["history checked"]));

    const again = await cli("review", "approve", "--reason", "history checked", "--session", "git-main");
    expect([again.code, again.stdout]).toEqual([0, `${workspace}: nothing waiting matches; nothing changed\n`]);
    const after = JSON.parse((await cli("review", "list", "--json")).stdout);
    expect([after.total, after.memories.map((m: { id: string }) => m.id)]).toEqual([1, [transcriptId]]);
  });
});
