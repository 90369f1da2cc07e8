import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import openapiTS, { astToString } from "openapi-typescript";
import { describe, expect, it } from "vitest";
import { CONTRACT_PATH, compileInputValidators, loadContract, renderOperationTables, restRequest, VISIBLE_TEXT } from "../src/index.js";

describe("the contract", () => {
  it("is valid OpenAPI 3.1 and flattens into tools with object input and output schemas", async () => {
    const contract = await loadContract();
    expect(contract.document.openapi).toBe("3.1.0");
    expect(contract.operations.map((op) => op.operationId).sort()).toEqual(
      [
        "add_memory",
        "add_memories",
        "assess_change",
        "forget_memory",
        "get_audit_log",
        "get_caller",
        "get_memory",
        "get_session",
        "mark_outdated",
        "query_raw_memories",
        "query_recent_turns",
        "query_summaries",
        "query_team_status",
        "query_review_queue",
        "review_memory",
        "review_matching",
        "summarize_session",
        "supersede_memory",
        "export_records",
        "import_records",
        "verify_store",
        "get_store_status",
        "repair_store",
        "reembed_records",
        "send_message",
        "query_inbox",
        "ack_messages",
      ].sort(),
    );
    for (const op of contract.operations) {
      expect(op.inputSchema.type).toBe("object");
      expect(op.inputSchema.additionalProperties).toBe(false);
      expect(op.outputSchema.type).toBe("object");
      // Reads that take a body (a search, an assessment) are POSTs.
      expect(op.annotations.readOnlyHint).toBe(
        op.method === "get" || op.operationId.startsWith("query_") || op.operationId === "assess_change",
      );
      // import_records forgets a stored record when it restores that record's tombstone.
      expect(op.annotations.destructiveHint).toBe(op.operationId === "forget_memory" || op.operationId === "import_records");
      expect(op.description.length).toBeGreaterThan(40);
    }
  });

  it("keeps a body field's own description beside its `$ref`, not the shared schema's", async () => {
    const contract = await loadContract(fileURLToPath(new URL("./fixtures/ref-descriptions.yaml", import.meta.url)));
    const fields = contract.operation("search").inputSchema.properties as Record<string, { description?: string }>;
    // All three are the one Timestamp schema, which describes itself; two say what they filter here.
    expect(fields.since?.description).toBe("Only what was recorded at or after this instant.");
    expect(fields.until?.description).toBe("Only what was recorded before this instant.");
    expect(fields.at).toEqual({ type: "string", format: "date-time", description: "An RFC 3339 date-time." });
  });

  it("compiles a validator per operation that fills defaults and rejects unknown fields", async () => {
    const validators = compileInputValidators(await loadContract());
    expect(validators.get("query_recent_turns")!({})).toEqual({ ok: true, value: { limit: 20, detail: "brief" } });
    const bad = validators.get("query_raw_memories")!({ query: "x", unknown: 1 });
    expect(bad).toEqual({ ok: false, errors: [{ path: "unknown", message: "is not a field of this operation" }] });
  });

  it("holds every text meant to carry meaning to one rule: a character a reader can see", async () => {
    const contract = await loadContract();
    // Every unanchored pattern of an input is free text that must not be blank: each is the one visible-text rule.
    const freeText: string[] = [];
    const walk = (schema: unknown, at: string) => {
      if (typeof schema !== "object" || schema === null) return;
      const s = schema as Record<string, unknown>;
      if (typeof s.pattern === "string" && !s.pattern.startsWith("^")) {
        expect(s.pattern, at).toBe(VISIBLE_TEXT);
        freeText.push(at);
      }
      for (const [key, value] of Object.entries(s)) walk(value, `${at}/${key}`);
    };
    for (const op of contract.operations) walk(op.inputSchema, op.operationId);
    for (const field of [
      "add_memory/properties/prompt",
      "add_memory/properties/author",
      "add_memory/properties/refs/items",
      "supersede_memory/properties/reason",
      "mark_outdated/properties/reason",
      "forget_memory/properties/reason",
      "review_memory/properties/reason",
      "assess_change/properties/intent",
      "query_raw_memories/properties/query",
    ]) {
      expect(freeText).toContain(field);
    }

    const validators = compileInputValidators(contract);
    const reason = (text: string) => validators.get("mark_outdated")!({ memory_id: `t_${"a".repeat(32)}`, reason: text });
    for (const blank of ["\u0000", "\u200b\u200d", "\ufeff \u2060\t", "\u202e", " \n "]) {
      const result = reason(blank);
      expect(result.ok, JSON.stringify(blank)).toBe(false);
      expect(!result.ok && result.errors).toEqual([{ path: "reason", message: expect.stringMatching(/a reader can see/) }]);
    }
    for (const meaningful of ["stale", "キャッシュ", "🪨", "zero\u200bwidth", "e\u0301", "NUL \u0000 inside"]) {
      expect(reason(meaningful).ok, JSON.stringify(meaningful)).toBe(true);
    }
  });

  it("refuses a lone surrogate in any string of any input, field names too, and takes well-formed text in every script", async () => {
    const validators = compileInputValidators(await loadContract());
    const write = validators.get("add_memory")!;
    const good = { session_id: "s", prompt: "p", thought: "t", response: "r" };
    expect(write({ ...good, prompt: "a \ud800 b" })).toEqual({
      ok: false,
      errors: [{ path: "prompt", message: "must be well-formed Unicode (it holds a lone surrogate)" }],
    });
    expect(write({ ...good, tags: ["ok", "\udfff"], refs: ["\udc00\ud800"] })).toMatchObject({
      ok: false,
      errors: [{ path: "tags/1" }, { path: "refs/0" }],
    });
    const restore = validators.get("import_records")!;
    const record = { id: `t_${"a".repeat(32)}`, document: "d", metadata: { ["k\ud800"]: 1 } };
    expect(restore({ collection: "turns", records: [record] })).toMatchObject({
      ok: false,
      errors: [{ path: "records/0/metadata/k\ud800" }],
    });
    expect(write({ ...good, prompt: "日本語 🪨 \ud83e\udea8", tags: ["ça"] }).ok).toBe(true);
  });

  it("refuses a document that is not valid OpenAPI", async () => {
    const broken = fileURLToPath(new URL("./fixtures/broken.yaml", import.meta.url));
    await expect(loadContract(broken)).rejects.toThrow(/not valid OpenAPI/);
  });

  it("has generated types that match it (run `npm run generate -w @cairn/openapi` after editing it)", async () => {
    const generated = astToString(await openapiTS(new URL(`file://${CONTRACT_PATH}`)));
    const committed = await readFile(new URL("../src/generated/schema.ts", import.meta.url), "utf8");
    const normalize = (s: string) => s.replace(/^\/\*\*[\s\S]*?\*\/\s*/, "").trim();
    expect(normalize(committed)).toBe(normalize(generated));
  });

  it("has generated operation tables that match it, naming the fields validation fills", async () => {
    const contract = await loadContract();
    const committed = await readFile(new URL("../src/generated/operations.ts", import.meta.url), "utf8");
    expect(committed).toBe(renderOperationTables(contract));
    // The same fields the validator fills for a call that leaves them out, and no others.
    const filled = compileInputValidators(contract).get("query_recent_turns")!({});
    expect(committed).toContain(
      `query_recent_turns: ${Object.keys(filled.ok ? filled.value : {})
        .sort()
        .map((n) => JSON.stringify(n))
        .join(" | ")};`,
    );
    expect(committed).toContain("forget_memory: never;");
  });

  it("lays an operation out as its REST request: path fields encoded, query fields in the query, the rest as the body", async () => {
    expect(restRequest("get_session", { session_id: "a b/c", limit: 5 })).toEqual({
      method: "GET",
      target: "/v1/sessions/a%20b%2Fc?limit=5",
    });
    expect(restRequest("query_recent_turns", {})).toEqual({ method: "GET", target: "/v1/memories/recent" });
    expect(restRequest("mark_outdated", { memory_id: "m1", reason: "moved" })).toEqual({
      method: "POST",
      target: "/v1/memories/m1/outdated",
      body: { reason: "moved" },
    });
    // Every operation's route is the contract's.
    const contract = await loadContract();
    for (const op of contract.operations) {
      const route = restRequest(
        op.operationId as never,
        Object.fromEntries(op.parameters.filter((p) => p.in === "path").map((p) => [p.inputName, "x"])) as never,
      );
      expect(route.method).toBe(op.method.toUpperCase());
      expect(route.target).toBe(op.path.replace(/\{[^}]+\}/g, "x"));
    }
  });
});
