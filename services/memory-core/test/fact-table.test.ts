import { describe, expect, it } from "vitest";
import { FactTable } from "../src/lexical/fact-table.js";
import type { Metadata } from "../src/store/chroma-store.js";

describe("FactTable", () => {
  it("gives back each record's scalars as they were set, of every type, and nothing for a cleared record", () => {
    const table = new FactTable();
    const rows: Metadata[] = [
      { agent: "alice", session_id: "s1", valid_from: 1_700_000_000_123.5, valid_until: 8_640_000_000_000_000, trusted: true },
      { agent: "bob", session_id: "s1", valid_from: -3, trusted: false, kind: "decision", seq: 0 },
      { agent: "alice", session_id: "1", valid_from: 2, valid_until: 5, trusted: "true", seq: 1 },
    ];
    rows.forEach((row, n) => table.set(n, row));
    // Far beyond the tables' first size: they grow.
    table.set(5000, { agent: "carol", seq: 5000 });
    rows.forEach((row, n) => expect(table.metadata(n)).toEqual(row));
    expect(table.metadata(5000)).toEqual({ agent: "carol", seq: 5000 });
    expect(table.get(1, "valid_until")).toBeUndefined();
    expect(table.get(2, "session_id")).toBe("1"); // a string that reads as a number stays a string
    expect(table.get(2, "trusted")).toBe("true");
    expect(table.reader("agent")(0)).toBe("alice");
    expect(table.reader("nowhere")(0)).toBeUndefined();
    // Equal values share a code; a number has none.
    expect(table.code(0, "session_id")).toBe(table.code(1, "session_id"));
    expect(table.code(2, "session_id")).not.toBe(table.code(0, "session_id"));
    expect(table.code(0, "valid_from")).toBe(-1);

    table.clear(1);
    expect(table.metadata(1)).toEqual({});
    expect(table.metadata(0)).toEqual(rows[0]);
  });
});
