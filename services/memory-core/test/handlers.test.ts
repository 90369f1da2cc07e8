import { loadContract, type OperationResult } from "@cairn/openapi";
import { describe, expect, expectTypeOf, it } from "vitest";
import { handlers, isOperationId, type Handler, type Handlers } from "../src/operations/handlers.js";

// The type-level cases below are checked by `npm run typecheck` (CI runs it): an `@ts-expect-error` that no
// longer finds an error fails the typecheck, so each case fails if the table stops catching its mistake.
const { add_memory: _addMemory, ...withoutAddMemory } = handlers;
// @ts-expect-error a table missing an operation of the contract is not a handler table
const missing: Handlers = withoutAddMemory;
// @ts-expect-error nor is one with an operation the contract does not have
const extra: Handlers = { ...handlers, drop_everything: handlers.verify_store };
// @ts-expect-error add_memory answers 200 or 201, never 202
const wrongStatus: Handler<"add_memory"> = () => Promise.resolve({ status: 202, body: {} });
// @ts-expect-error a handler reads the fields its operation takes, not another's
const wrongField: Handler<"forget_memory"> = (input) => Promise.resolve({ status: 200, body: { memory_id: input.query } });
const same: Handlers = { ...handlers };

describe("the handler table", () => {
  it("has exactly the contract's operations", async () => {
    const contract = await loadContract();
    expect(Object.keys(handlers).sort()).toEqual(contract.operations.map((op) => op.operationId).sort());
    expect(Object.keys(same).length).toBe(contract.operations.length);
    expect(isOperationId("add_memory")).toBe(true);
    expect(isOperationId("drop_everything")).toBe(false);
    // Own properties only: an object's prototype does not name operations.
    expect(isOperationId("toString")).toBe(false);
    expect([missing, extra, wrongStatus, wrongField].every(Boolean)).toBe(true);
  });

  it("types inputs with the contract's defaults filled and results with its statuses", () => {
    expectTypeOf<Parameters<Handler<"query_recent_turns">>[0]["limit"]>().toEqualTypeOf<number>();
    expectTypeOf<Parameters<Handler<"query_recent_turns">>[0]["agent"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<OperationResult<"add_memory">["status"]>().toEqualTypeOf<200 | 201>();
  });
});
