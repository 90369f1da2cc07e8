import { describe, expect, it } from "vitest";
import { nextStep } from "../src/domain/team-status.js";
import { turnDocument } from "../src/records/turn-record.js";
import { expectContractOutput } from "./support/contract-schemas.js";
import { http, makeToken, mcpClient, turn, uniqueWorkspace, useCairn } from "./support/harness.js";
import { turnOf } from "../src/records/stored-turn.js";

const workspace = uniqueWorkspace("team");
const alice = makeToken(workspace, "alice");
const bob = makeToken(workspace, "bob");
const other = makeToken(uniqueWorkspace("team-other"), "mallory");
const cairn = useCairn([alice, bob, other]);

const failing = (name: string) => [{ name, status: "failed" as const }];

async function write(token: string, body: object): Promise<string> {
  const res = await http(cairn.url, "POST", "/v1/memories", { token, body });
  if (res.status !== 201) throw new Error(`add_memory answered ${res.status}: ${res.text}`);
  return res.body.id;
}

let seeded: Promise<Record<string, string>> | undefined;
/** Alice's two turns, then bob's three (one failed check marked outdated, one standing), then nothing from mallory here. */
function seed() {
  seeded ??= (async () => {
    const ids: Record<string, string> = {};
    ids.a1 = await write(alice.token, turn("team-a", 1));
    ids.a2 = await write(alice.token, {
      session_id: "team-a",
      prompt: "Move checkout sessions to Redis",
      thought: "Redis TTLs replace the sweeper.",
      response: "Sessions now live in Redis. Next: migrate the rows still in Postgres. Then drop the table.",
    });
    ids.bOld = await write(bob.token, turn("team-b", 1, { checks: failing("lint") }));
    ids.bFail = await write(bob.token, turn("team-b", 2, { checks: failing("integration tests") }));
    ids.b3 = await write(bob.token, turn("team-b", 3, { response: "Wrote the export; no next step written here." }));
    await http(cairn.url, "POST", `/v1/memories/${ids.bOld}/outdated`, { token: bob.token, body: { reason: "lint config replaced" } });
    await write(other.token, turn("team-other", 1));
    return ids;
  })();
  return seeded;
}

describe("query_team_status over REST", () => {
  it("lists each agent's newest turn, most recently active first, with its next step and its failed checks still standing", async () => {
    const ids = await seed();
    const res = await http(cairn.url, "GET", "/v1/team", { token: alice.token });
    expect(res.status).toBe(200);
    expectContractOutput("query_team_status", res.body);
    expect(res.body.more).toBe(false);
    expect(res.body.agents.map((a: { agent: string }) => a.agent)).toEqual(["bob", "alice"]);
    const [b, a] = res.body.agents;
    expect(a).toMatchObject({
      memory_id: ids.a2,
      session_id: "team-a",
      task: "Move checkout sessions to Redis",
      next_step: "migrate the rows still in Postgres.",
    });
    expect(a.failed_checks).toEqual([]);
    expect(b).toMatchObject({ memory_id: ids.b3, next_step: null });
    // The failed check marked outdated no longer stands; the other does.
    expect(b.failed_checks).toEqual([{ memory_id: ids.bFail, checks: ["integration tests"] }]);
    // Another workspace's agent is not part of this team.
    expect(JSON.stringify(res.body)).not.toContain("mallory");
  });

  it("lists at most `limit` agents and says there are more", async () => {
    await seed();
    const res = await http(cairn.url, "GET", "/v1/team?limit=1", { token: bob.token });
    expect(res.body.agents.map((a: { agent: string }) => a.agent)).toEqual(["bob"]);
    expect(res.body.more).toBe(true);
    const refused = await http(cairn.url, "GET", "/v1/team?limit=1000", { token: bob.token });
    expect([refused.status, refused.body.code]).toEqual([400, "validation_failed"]);
  });
});

describe("query_team_status over MCP", () => {
  it("answers the same census as a tool", async () => {
    const ids = await seed();
    const client = await mcpClient(cairn.url, bob.token);
    try {
      const result = (await client.callTool({ name: "query_team_status", arguments: {} })) as { structuredContent?: any };
      expectContractOutput("query_team_status", result.structuredContent);
      expect(result.structuredContent.agents.map((a: { agent: string }) => a.agent)).toEqual(["bob", "alice"]);
      expect(result.structuredContent.agents[1].memory_id).toBe(ids.a2);
    } finally {
      await client.close();
    }
  });
});

describe("the next step a turn wrote", () => {
  // A turn's document as stored: its three fields joined, their lengths in the metadata.
  const record = (response: string, thought = "") =>
    turnOf({
      id: "t",
      metadata: { prompt_chars: 1, thought_chars: thought.length },
      document: turnDocument({ prompt: "p", thought, response }),
    });
  it("is the sentence that begins with Next, from the outcome or else the reasoning; none when no sentence does", () => {
    expect(nextStep(record("Done. Next step: add the index.\nMore text"))).toBe("add the index.");
    expect(nextStep(record("Shipped it.", "Next - ask ops for the quota."))).toBe("ask ops for the quota.");
    expect(nextStep(record("Shipped it; the next release is Friday.", "no plan"))).toBeNull();
  });
});
