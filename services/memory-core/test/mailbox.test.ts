import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectContractOutput } from "./support/contract-schemas.js";
import { http, makeToken, mcpClient, turn, uniqueWorkspace, useCairn, type TestToken } from "./support/harness.js";

/**
 * The mailbox over REST and MCP, with real tokens of two workspaces. Each group of tests has a workspace of its
 * own (team messages reach every agent of a workspace), with the same agents' names in each; `other` is a second
 * workspace with an agent named `bob` too.
 */
const crew = (label: string) => {
  const workspace = uniqueWorkspace(label);
  return {
    alice: makeToken(workspace, "alice"),
    bob: makeToken(workspace, "bob"),
    carol: makeToken(workspace, "carol"),
    ops: makeToken(workspace, "ops", "admin"),
  };
};
const direct = crew("mail-direct");
const team = crew("mail-team");
const order = crew("mail-order");
const keys = crew("mail-keys");
const bad = crew("mail-bad");
const status = crew("mail-status");
const viaMcp = crew("mail-mcp");
const otherWorkspace = uniqueWorkspace("mail-other");
const mallory = makeToken(otherWorkspace, "mallory");
const otherBob = makeToken(otherWorkspace, "bob");
const all = [direct, team, order, keys, bad, status, viaMcp].flatMap((c) => Object.values(c));
const cairn = useCairn([...all, mallory, otherBob]);

type Message = { id: string; from: string; to: string; subject: string; sent_at: string; read: boolean; body?: string };
type Inbox = { messages: Message[]; unread: number; next_cursor: string | null };

async function send(from: TestToken, body: Record<string, unknown>): Promise<string> {
  const res = await http(cairn.url, "POST", "/v1/messages", { token: from.token, body });
  if (res.status !== 201) throw new Error(`send_message answered ${res.status}: ${res.text}`);
  expectContractOutput("send_message", res.body);
  return res.body.id as string;
}

async function inbox(reader: TestToken, query = ""): Promise<Inbox> {
  const res = await http<Inbox>(cairn.url, "GET", `/v1/messages${query ? `?${query}` : ""}`, { token: reader.token });
  if (res.status !== 200) throw new Error(`query_inbox answered ${res.status}: ${res.text}`);
  expectContractOutput("query_inbox", res.body);
  return res.body;
}

const ack = (reader: TestToken, ids: string[]) =>
  http(cairn.url, "POST", "/v1/messages/ack", { token: reader.token, body: { message_ids: ids } });
const subjects = (box: Inbox) => box.messages.map((m) => m.subject);
const idsOf = (box: Inbox) => box.messages.map((m) => m.id);

describe("send_message over REST", () => {
  it("delivers a direct message to its recipient, shows it to its sender and an admin, and to no other agent", async () => {
    const id = await send(direct.alice, { to: "bob", subject: "Finish the migration", body: "Rows 10k+ are left; see the runbook." });
    const teamId = await send(direct.ops, { to: "team", subject: "Freeze on Friday", body: "No deploys after noon." });

    const bobs = await inbox(direct.bob);
    expect(bobs.messages.find((m) => m.id === id)).toMatchObject({
      from: "alice",
      to: "bob",
      subject: "Finish the migration",
      read: false,
    });
    expect(bobs.messages[0]).not.toHaveProperty("body");
    expect(bobs.unread).toBe(2);
    // Carol is of the same workspace: she has the team message and not bob's.
    const carols = await inbox(direct.carol);
    expect(idsOf(carols)).toEqual([teamId]);
    expect(idsOf(carols)).not.toContain(id);
    expect(carols.unread).toBe(1);

    // The sender finds it among what she sent (read by her), an admin in bob's box; carol may not open bob's box.
    const sent = await inbox(direct.alice, "box=sent&detail=full");
    expect(sent.messages).toEqual([expect.objectContaining({ id, read: true, body: "Rows 10k+ are left; see the runbook." })]);
    const asAdmin = await inbox(direct.ops, "agent=bob");
    expect(idsOf(asAdmin)).toContain(id);
    const refused = await http(cairn.url, "GET", "/v1/messages?agent=bob", { token: direct.carol.token });
    expect([refused.status, refused.body.code]).toEqual([403, "forbidden"]);

    // Acknowledging: carol cannot see it (not found, as an id that names nothing); bob, alice and ops can.
    const nothing = "m_00000000000000000000000000000000";
    const carolAck = await ack(direct.carol, [id, nothing, teamId]);
    expect(carolAck.status).toBe(200);
    expect(carolAck.body).toEqual({ read: [teamId], marked: 1, not_found: [id, nothing] });
    const bobAck = await ack(direct.bob, [id]);
    expect(bobAck.body).toEqual({ read: [id], marked: 1, not_found: [] });
    expect((await ack(direct.alice, [id])).body).toEqual({ read: [id], marked: 0, not_found: [] });
    expect((await ack(direct.ops, [id])).body).toEqual({ read: [id], marked: 0, not_found: [] });
    const after = await inbox(direct.bob);
    expect(after.messages.find((m) => m.id === id)?.read).toBe(true);
    expect(after.unread).toBe(1);
  });

  it("delivers a team message to every agent of the workspace, read per reader, and to no one of another workspace", async () => {
    const id = await send(team.alice, { to: "team", subject: "Review the retry policy", body: "Before Thursday's release." });
    const theirs = await send(mallory, { to: "team", subject: "Other workspace news", body: "Not for the first workspace." });
    for (const reader of [team.bob, team.carol, team.ops]) {
      const box = await inbox(reader);
      expect(box.messages.find((m) => m.id === id)).toMatchObject({ from: "alice", to: "team", read: false });
      expect(idsOf(box)).not.toContain(theirs);
    }
    // The other workspace's agents have their own team message, and never this one.
    for (const reader of [mallory, otherBob]) {
      const box = await inbox(reader);
      expect(idsOf(box)).toContain(theirs);
      expect(idsOf(box)).not.toContain(id);
    }
    const crossAck = await ack(otherBob, [id]);
    expect(crossAck.body).toEqual({ read: [], marked: 0, not_found: [id] });
    // Its sender has it as read; bob's mark leaves carol's unread.
    expect((await inbox(team.alice)).messages.find((m) => m.id === id)?.read).toBe(true);
    expect((await inbox(team.alice)).unread).toBe(0);
    expect((await ack(team.bob, [id])).body.marked).toBe(1);
    expect((await inbox(team.bob)).messages.find((m) => m.id === id)?.read).toBe(true);
    expect((await inbox(team.carol)).messages.find((m) => m.id === id)?.read).toBe(false);
    expect((await inbox(team.bob)).unread).toBe(0);
    expect((await inbox(team.carol)).unread).toBe(1);
  });

  it("replays a send with the same key and content, refuses the key with other content, and stores one message", async () => {
    const body = { to: "bob", subject: "Hand-over", body: "The flaky test is quarantined.", idempotency_key: "handover-1" };
    const first = await http(cairn.url, "POST", "/v1/messages", { token: keys.alice.token, body });
    expect(first.status).toBe(201);
    expect(first.body.replayed).toBe(false);
    const again = await http(cairn.url, "POST", "/v1/messages", { token: keys.alice.token, body });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ...first.body, replayed: true });
    // The same key in the header replays too.
    const { idempotency_key: _key, ...rest } = body;
    const header = await http(cairn.url, "POST", "/v1/messages", {
      token: keys.alice.token,
      body: rest,
      headers: { "idempotency-key": "handover-1" },
    });
    expect([header.status, header.body.id]).toEqual([200, first.body.id]);
    const conflict = await http(cairn.url, "POST", "/v1/messages", { token: keys.alice.token, body: { ...body, body: "Something else." } });
    expect([conflict.status, conflict.body.code]).toEqual([409, "idempotency_conflict"]);
    expect(conflict.body.hint).toEqual(expect.any(String));
    // Another sender's same key is another message.
    const carols = await http(cairn.url, "POST", "/v1/messages", { token: keys.carol.token, body });
    expect(carols.status).toBe(201);
    expect(carols.body.id).not.toBe(first.body.id);
    const bobs = await inbox(keys.bob, "detail=full");
    expect(
      bobs.messages
        .filter((m) => m.subject === "Hand-over")
        .map((m) => m.from)
        .sort(),
    ).toEqual(["alice", "carol"]);
    expect(bobs.messages.find((m) => m.id === first.body.id)?.body).toBe("The flaky test is quarantined.");
  });

  it("refuses bad input with a 4xx and a code, and sends nothing", async () => {
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ to: "bob", subject: "Long", body: "x".repeat(32_769) }, 400, "validation_failed"],
      [{ to: "bob", subject: "s".repeat(201), body: "ok" }, 400, "validation_failed"],
      [{ to: "bob", subject: "Blank", body: "   " }, 400, "validation_failed"],
      [{ to: "nobody", subject: "Who?", body: "An agent that has no token here." }, 404, "not_found"],
      [{ to: "mallory", subject: "Across", body: "An agent of another workspace." }, 404, "not_found"],
      [{ to: "alice", subject: "Myself", body: "A note to self." }, 400, "validation_failed"],
      [{ to: "bob", subject: "Refs", body: "ok", memory_ids: ["not-a-memory"] }, 400, "validation_failed"],
    ];
    for (const [body, statusCode, code] of cases) {
      const res = await http(cairn.url, "POST", "/v1/messages", { token: bad.alice.token, body });
      expect([res.status, res.body.code], JSON.stringify(body).slice(0, 80)).toEqual([statusCode, code]);
      expect(res.body.hint).toEqual(expect.any(String));
    }
    expect((await inbox(bad.bob)).messages).toEqual([]);
    // The same sender and recipient with a body at the limit: sent.
    const id = await send(bad.alice, { to: "bob", subject: "At the limit", body: "y".repeat(32_768) });
    expect(idsOf(await inbox(bad.bob))).toEqual([id]);
  });
});

describe("query_inbox over REST", () => {
  it("lists unread messages first, each part newest first, and pages through both with a cursor", async () => {
    const m1 = await send(order.alice, { to: "bob", subject: "one", body: "first" });
    const m2 = await send(order.carol, { to: "team", subject: "two", body: "second" });
    const m3 = await send(order.alice, { to: "bob", subject: "three", body: "third" });
    const m4 = await send(order.ops, { to: "bob", subject: "four", body: "fourth" });
    expect((await ack(order.bob, [m4, m2])).body.marked).toBe(2);

    const box = await inbox(order.bob);
    expect(subjects(box)).toEqual(["three", "one", "four", "two"]);
    expect(box.messages.map((m) => m.read)).toEqual([false, false, true, true]);
    expect(box.unread).toBe(2);
    expect(idsOf(await inbox(order.bob, "unread_only=true"))).toEqual([m3, m1]);

    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const page: Inbox = await inbox(order.bob, `limit=1${cursor ? `&cursor=${cursor}` : ""}`);
      if (page.messages.length > 0) pages.push(subjects(page));
      cursor = page.next_cursor;
    } while (cursor !== null && pages.length < 10);
    expect(pages).toEqual([["three"], ["one"], ["four"], ["two"]]);

    // A cursor of another listing (the unread ones only) is refused here, and a made-up one too.
    const unreadPage = await inbox(order.bob, "unread_only=true&limit=1");
    expect(unreadPage.next_cursor).toEqual(expect.any(String));
    const mixed = await http(cairn.url, "GET", `/v1/messages?cursor=${unreadPage.next_cursor}`, { token: order.bob.token });
    expect([mixed.status, mixed.body.code]).toEqual([400, "invalid_cursor"]);
    const forged = await http(cairn.url, "GET", "/v1/messages?cursor=abc", { token: order.bob.token });
    expect([forged.status, forged.body.code]).toEqual([400, "invalid_cursor"]);
    const tooMany = await http(cairn.url, "GET", "/v1/messages?limit=51", { token: order.bob.token });
    expect([tooMany.status, tooMany.body.code]).toEqual([400, "validation_failed"]);
    expect(idsOf(await inbox(order.bob, "limit=50"))).toEqual([m3, m1, m4, m2]);
  });
});

describe("ack_messages over REST", () => {
  it("is idempotent, bounded, and in the audit log with every send", async () => {
    const id = await send(status.carol, { to: "bob", subject: "Audit me", body: "One message." });
    expect((await ack(status.bob, [id, id])).body).toEqual({ read: [id], marked: 1, not_found: [] });
    expect((await ack(status.bob, [id])).body).toEqual({ read: [id], marked: 0, not_found: [] });
    const tooMany = await ack(
      status.bob,
      Array.from({ length: 101 }, (_, i) => `m_${i.toString(16).padStart(32, "0")}`),
    );
    expect([tooMany.status, tooMany.body.code]).toEqual([400, "validation_failed"]);
    const empty = await ack(status.bob, []);
    expect([empty.status, empty.body.code]).toEqual([400, "validation_failed"]);
    const hundred = await ack(
      status.bob,
      Array.from({ length: 100 }, (_, i) => `m_${i.toString(16).padStart(32, "0")}`),
    );
    expect([hundred.status, hundred.body.not_found.length, hundred.body.marked]).toEqual([200, 100, 0]);

    const log = await http(cairn.url, "GET", "/v1/audit?limit=500", { token: status.ops.token });
    expect(log.status).toBe(200);
    expectContractOutput("get_audit_log", log.body);
    const entries = log.body.entries as Array<Record<string, unknown>>;
    expect(entries.filter((e) => e.action === "send_message")).toEqual([
      expect.objectContaining({ actor: "carol", message_ids: [id], to: "bob" }),
    ]);
    // One entry for the ack that marked it; the repeat marked nothing and changed nothing.
    expect(entries.filter((e) => e.action === "ack_messages")).toEqual([expect.objectContaining({ actor: "bob", message_ids: [id] })]);
  });
});

describe("query_team_status over REST: unread messages", () => {
  it("shows each agent's unread count, which an acknowledgement lowers for its reader only", async () => {
    for (const who of [status.alice, status.bob, status.carol]) {
      const res = await http(cairn.url, "POST", "/v1/memories", { token: who.token, body: turn(`status-${who.agent}`, 1) });
      expect(res.status).toBe(201);
    }
    const t1 = await send(status.ops, { to: "team", subject: "Standup moved", body: "To 10:00." });
    await send(status.alice, { to: "carol", subject: "Pair on the parser?", body: "This afternoon." });
    const unread = async () => {
      const res = await http(cairn.url, "GET", "/v1/team", { token: status.alice.token });
      expect(res.status).toBe(200);
      expectContractOutput("query_team_status", res.body);
      return Object.fromEntries(
        (res.body.agents as Array<{ agent: string; unread_messages: number }>).map((a) => [a.agent, a.unread_messages]),
      );
    };
    // bob read carol's direct message in the test above; he has the team message left.
    expect(await unread()).toEqual({ alice: 1, bob: 1, carol: 2 });
    expect((await ack(status.carol, [t1])).body.marked).toBe(1);
    expect(await unread()).toEqual({ alice: 1, bob: 1, carol: 1 });
    expect((await inbox(status.carol)).unread).toBe(1);
  });
});

type ToolResult = { isError?: boolean; structuredContent?: any; content: Array<{ type: string; text?: string }> };
const call = async (c: Client, name: string, args: Record<string, unknown>) => (await c.callTool({ name, arguments: args })) as ToolResult;
const errorOf = (result: ToolResult) => JSON.parse(result.content[0]!.text!) as { code: string; hint?: string };

describe("send_message over MCP", () => {
  const clients = new Map<string, Client>();
  const client = (t: TestToken) => clients.get(`${t.workspace}/${t.agent}`)!;
  beforeAll(async () => {
    for (const t of [...Object.values(viaMcp), otherBob]) clients.set(`${t.workspace}/${t.agent}`, await mcpClient(cairn.url, t.token));
  });
  afterAll(async () => {
    for (const c of clients.values()) await c.close();
  });

  it("lists the mailbox's tools to an agent within the tools/list budget", async () => {
    const listed = await client(viaMcp.alice).listTools();
    const names = listed.tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["send_message", "query_inbox", "ack_messages"]));
    expect(names).not.toContain("get_audit_log");
    expect(Buffer.byteLength(JSON.stringify(listed))).toBeLessThanOrEqual(16 * 1024);
  });

  it("sends within the workspace only, replays a key, and answers bad input with a tool error and a code", async () => {
    const sent = await call(client(viaMcp.alice), "send_message", {
      to: "bob",
      subject: "Look at PR 12",
      body: "The cache key changed.",
      idempotency_key: "mcp-1",
      memory_ids: ["t_0123456789abcdef0123456789abcdef"],
    });
    expect(sent.isError).toBeFalsy();
    expectContractOutput("send_message", sent.structuredContent);
    expect(sent.structuredContent).toMatchObject({ from: "alice", to: "bob", replayed: false });
    const replay = await call(client(viaMcp.alice), "send_message", {
      to: "bob",
      subject: "Look at PR 12",
      body: "The cache key changed.",
      idempotency_key: "mcp-1",
      memory_ids: ["t_0123456789abcdef0123456789abcdef"],
    });
    expect(replay.structuredContent).toMatchObject({ id: sent.structuredContent.id, replayed: true });
    const conflict = await call(client(viaMcp.alice), "send_message", { to: "bob", subject: "Other", body: "x", idempotency_key: "mcp-1" });
    expect([conflict.isError, errorOf(conflict).code]).toEqual([true, "idempotency_conflict"]);
    const unknown = await call(client(viaMcp.alice), "send_message", { to: "nobody", subject: "s", body: "b" });
    expect([unknown.isError, errorOf(unknown).code]).toEqual([true, "not_found"]);
    const long = await call(client(viaMcp.alice), "send_message", { to: "bob", subject: "s", body: "z".repeat(40_000) });
    expect([long.isError, errorOf(long).code]).toEqual([true, "validation_failed"]);

    // The bob of the other workspace is another agent: nothing reaches him.
    const theirs = await call(client(otherBob), "query_inbox", {});
    expect(theirs.isError).toBeFalsy();
    expect(theirs.structuredContent.messages.map((m: Message) => m.id)).not.toContain(sent.structuredContent.id);
    const ours = await call(client(viaMcp.bob), "query_inbox", { detail: "full" });
    expect(ours.structuredContent.messages).toEqual([
      expect.objectContaining({
        id: sent.structuredContent.id,
        body: "The cache key changed.",
        memory_ids: ["t_0123456789abcdef0123456789abcdef"],
      }),
    ]);
  });
});

describe("query_inbox over MCP", () => {
  it("answers the caller's messages, unread first, and refuses another agent's box to an agent", async () => {
    const alice = await mcpClient(cairn.url, viaMcp.alice.token);
    const carol = await mcpClient(cairn.url, viaMcp.carol.token);
    const ops = await mcpClient(cairn.url, viaMcp.ops.token);
    try {
      const id = (await call(alice, "send_message", { to: "carol", subject: "Direct to carol", body: "Only carol." })).structuredContent.id;
      const box = await call(carol, "query_inbox", { unread_only: true });
      expectContractOutput("query_inbox", box.structuredContent);
      expect(box.structuredContent.messages.map((m: Message) => m.id)).toEqual([id]);
      expect(box.structuredContent.unread).toBe(1);
      const refused = await call(carol, "query_inbox", { agent: "bob" });
      expect([refused.isError, errorOf(refused).code]).toEqual([true, "forbidden"]);
      const admin = await call(ops, "query_inbox", { agent: "carol" });
      expect(admin.structuredContent.messages.map((m: Message) => m.id)).toEqual([id]);
      const sent = await call(alice, "query_inbox", { box: "sent", limit: 50 });
      expect(sent.structuredContent.messages.map((m: Message) => m.id)).toContain(id);
    } finally {
      await Promise.all([alice.close(), carol.close(), ops.close()]);
    }
  });
});

describe("ack_messages over MCP", () => {
  it("marks read for the caller only, and reports ids it cannot read as not found", async () => {
    const alice = await mcpClient(cairn.url, viaMcp.alice.token);
    const bob = await mcpClient(cairn.url, viaMcp.bob.token);
    const stranger = await mcpClient(cairn.url, otherBob.token);
    try {
      const id = (await call(alice, "send_message", { to: "team", subject: "Team via MCP", body: "All of you." })).structuredContent.id;
      const foreign = await call(stranger, "ack_messages", { message_ids: [id] });
      expect(foreign.structuredContent).toEqual({ read: [], marked: 0, not_found: [id] });
      const first = await call(bob, "ack_messages", { message_ids: [id] });
      expectContractOutput("ack_messages", first.structuredContent);
      expect(first.structuredContent).toEqual({ read: [id], marked: 1, not_found: [] });
      expect((await call(bob, "ack_messages", { message_ids: [id] })).structuredContent.marked).toBe(0);
      const carol = await mcpClient(cairn.url, viaMcp.carol.token);
      try {
        const hers = await call(carol, "query_inbox", {});
        expect(hers.structuredContent.messages.find((m: Message) => m.id === id)?.read).toBe(false);
      } finally {
        await carol.close();
      }
      const tooMany = await call(bob, "ack_messages", { message_ids: Array.from({ length: 101 }, () => id) });
      expect([tooMany.isError, errorOf(tooMany).code]).toEqual([true, "validation_failed"]);
    } finally {
      await Promise.all([alice.close(), bob.close(), stranger.close()]);
    }
  });
});
