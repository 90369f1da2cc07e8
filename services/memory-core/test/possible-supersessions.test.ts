import { describe, expect, it } from "vitest";
import { terms } from "../src/lexical/text-analysis.js";
import { OTHER_WORDS_SUPERSESSION_PAIRS, SUPERSESSION_PAIRS } from "./fixtures/supersession-pairs.js";
import { http, makeToken, mcpClient, uniqueWorkspace, useCairn } from "./support/harness.js";

const workspace = uniqueWorkspace("supersede-hint");
const architect = makeToken(workspace, "architect");
const ledgerTeam = makeToken(uniqueWorkspace("supersede-other-words"), "architect");
const cairn = useCairn([architect, ledgerTeam]);

async function write(body: object, token = architect.token) {
  const res = await http(cairn.url, "POST", "/v1/memories", { token, body });
  if (res.status !== 201) throw new Error(`add_memory answered ${res.status}: ${res.text}`);
  return res.body as { id: string; possible_supersedes?: Array<{ id: string; agent: string; decision: string }> };
}

describe("possible_supersedes with add_memory", () => {
  it("names the live decision a new decision settles anew, and nothing for a decision that only shares its area", async () => {
    const replacing = SUPERSESSION_PAIRS.find((p) => p.replaces && p.later.prompt.startsWith("Outbound HTTP client"))!;
    const standing = SUPERSESSION_PAIRS.find((p) => !p.replaces && p.later.prompt.startsWith("Timeouts for the payments"))!;
    const earlier = await write({ session_id: "hint-1", kind: "decision", ...replacing.earlier });
    const earlierIds = new Map<string, string>();
    for (const [i, other] of SUPERSESSION_PAIRS.filter((p) => p.replaces && p !== replacing).entries()) {
      earlierIds.set(other.earlier.prompt, (await write({ session_id: `hint-other-${i}`, kind: "decision", ...other.earlier })).id);
    }

    // Same area (the payments service's outbound calls), another decision: nothing proposed.
    const alongside = await write({ session_id: "hint-2", kind: "decision", ...standing.later });
    expect(alongside.possible_supersedes).toBeUndefined();
    // The same subject decided anew: the earlier decision is proposed, with who and what; nothing is superseded.
    const later = await write({ session_id: "hint-3", kind: "decision", ...replacing.later });
    expect(later.possible_supersedes?.map((p) => p.id)).toEqual([earlier.id]);
    expect(later.possible_supersedes![0]).toMatchObject({ agent: "architect", decision: expect.stringContaining("axios") });
    expect((await http(cairn.url, "GET", `/v1/memories/${earlier.id}`, { token: architect.token })).body.superseded_by).toBeUndefined();

    // A later decision whose task reads differently ("with trunk-based development") but restates the subject
    // and the choice it replaces ("the Tuesday train ends") is proposed too; the neighbour of its area is not.
    const cadence = SUPERSESSION_PAIRS.find((p) => p.replaces && p.later.prompt.startsWith("Web app release cadence"))!;
    const notes = SUPERSESSION_PAIRS.find((p) => !p.replaces && p.later.prompt.startsWith("Release notes for the web app"))!;
    const tuesday = earlierIds.get(cadence.earlier.prompt);
    expect((await write({ session_id: "hint-7", kind: "decision", ...notes.later })).possible_supersedes).toBeUndefined();
    const trunk = await write({ session_id: "hint-8", kind: "decision", ...cadence.later });
    expect(trunk.possible_supersedes?.map((p) => p.id)).toEqual([tuesday]);

    // Only decisions propose; one that names what it supersedes is not told of it again.
    expect((await write({ session_id: "hint-4", kind: "turn", ...replacing.later })).possible_supersedes).toBeUndefined();
    const named = await write({ session_id: "hint-5", kind: "decision", ...replacing.later, supersedes: [earlier.id] });
    expect(named.possible_supersedes?.map((p) => p.id) ?? []).not.toContain(earlier.id);
  });
});

describe("possible_supersedes for a replacement in other words", () => {
  it("names the decision a changing one settles in other words, and nothing for decisions of the same area", async () => {
    const find = (replaces: boolean, start: string) =>
      OTHER_WORDS_SUPERSESSION_PAIRS.find((p) => p.replaces === replaces && p.later.prompt.startsWith(start))!;
    const go = find(true, "What we write fresh microservices");
    const logging = find(false, "Logging in new backend services");
    const cents = find(true, "Rounding errors");
    const rates = find(false, "Exchange rates");
    // The team's live decisions: one per subject of the group.
    const earlier = new Map<string, string>();
    for (const pair of OTHER_WORDS_SUPERSESSION_PAIRS) {
      if (earlier.has(pair.earlier.prompt)) continue;
      const { id } = await write({ session_id: `words-${earlier.size}`, kind: "decision", ...pair.earlier }, ledgerTeam.token);
      earlier.set(pair.earlier.prompt, id);
    }
    const add = async (session: string, decision: object) =>
      (await write({ session_id: session, kind: "decision", ...decision }, ledgerTeam.token)).possible_supersedes;

    // New backend services again, and their words ("new backend services"), but how they log: nothing proposed.
    expect(await add("words-logging", logging.later)).toBeUndefined();
    // Go for "fresh microservices" "from now on": Python for new backend services is proposed, though few of its words return.
    expect((await add("words-go", go.later))?.map((p) => p.id)).toEqual([earlier.get(go.earlier.prompt)]);

    // Integer cents replace the ledger's floats without one word of the floats' decision: words alone cannot find it.
    const said = (t: { prompt: string; response: string }) => new Set(terms(`${t.prompt}\n${t.response}`));
    expect([...said(cents.earlier)].filter((term) => said(cents.later).has(term))).toEqual([]);
    const proposed = await add("words-cents", cents.later);
    expect(proposed?.map((p) => p.id)).toEqual([earlier.get(cents.earlier.prompt)]);
    expect(proposed![0]).toMatchObject({ agent: "architect", decision: expect.stringContaining("double-precision floats") });
    // Money on invoices too, close in meaning, but another decision that says nothing of a change: nothing proposed.
    expect(await add("words-rates", rates.later)).toBeUndefined();
  });
});

describe("possible_supersedes over MCP", () => {
  it("comes back with add_memory's structured result, and not for a decision on another subject", async () => {
    const pair = SUPERSESSION_PAIRS.find((p) => p.replaces && p.later.prompt.startsWith("Log retention"))!;
    const neighbour = SUPERSESSION_PAIRS.find((p) => !p.replaces && p.later.prompt.startsWith("Log format"))!;
    const client = await mcpClient(cairn.url, architect.token);
    try {
      type Added = { id: string; possible_supersedes?: Array<{ id: string }> };
      const add = async (args: Record<string, unknown>) =>
        ((await client.callTool({ name: "add_memory", arguments: args })) as unknown as { structuredContent: Added }).structuredContent;
      const earlier = await add({ session_id: "mcp-hint-1", kind: "decision", ...pair.earlier });
      expect((await add({ session_id: "mcp-hint-2", kind: "decision", ...neighbour.later })).possible_supersedes).toBeUndefined();
      expect((await add({ session_id: "mcp-hint-3", kind: "decision", ...pair.later })).possible_supersedes?.map((p) => p.id)).toContain(
        earlier.id,
      );
    } finally {
      await client.close();
    }
  });
});
