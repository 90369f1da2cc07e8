import { describe, expect, it } from "vitest";
import { SUPERSESSION_PAIRS } from "./fixtures/supersession-pairs.js";
import { http, makeToken, mcpClient, uniqueWorkspace, useCairn } from "./support/harness.js";

const workspace = uniqueWorkspace("supersede-hint");
const architect = makeToken(workspace, "architect");
const cairn = useCairn([architect]);

async function write(body: object) {
  const res = await http(cairn.url, "POST", "/v1/memories", { token: architect.token, body });
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
