import { mayCall, type Operation } from "@cairn/openapi";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Role } from "../auth/principal.js";

/**
 * The tool list a caller is shown. Every session that connects pays for it in context, so it holds only the
 * tools the caller's role may call (an admin tool still answers an agent that calls it by name with 403),
 * each with the contract's description, its input schema made lean (see LEFT_OUT) and its annotations.
 *
 * No tool lists an `outputSchema`. MCP makes it optional: a tool answers `structuredContent` (and the same JSON
 * as text) whether or not it advertises one, and a client validates the structure only against a schema the
 * tool advertises. The output schemas are the contract's (`GET /openapi.json`), and every answer conforms to
 * them. Outlined in the listing, they took a large share of an agent's budget (a whole `Memory` for each tool
 * answering one), paid by every session whether or not it calls those tools (docs/benchmarks.md).
 */
export function toolsFor(operations: readonly Operation[], role: Role): Tool[] {
  return operations.filter((op) => mayCall(op.requiredRole, role)).map(toTool);
}

function toTool(operation: Operation): Tool {
  return {
    name: operation.operationId,
    title: operation.title,
    description: [operation.summary, operation.description].filter(Boolean).join("\n\n").trim(),
    inputSchema: lean(operation.inputSchema) as Tool["inputSchema"],
    annotations: hints(operation.annotations),
  };
}

/**
 * The annotations a client reads. The destructive and idempotent hints only mean something for a tool that
 * writes (MCP's ToolAnnotations), so a read-only tool goes without them.
 */
function hints(annotations: Operation["annotations"]): Operation["annotations"] {
  if (annotations.readOnlyHint !== true) return annotations;
  const { destructiveHint: _destructive, idempotentHint: _idempotent, ...rest } = annotations;
  return rest;
}

/**
 * Keywords of the contract's input schemas that a tool's schema leaves out: examples (the descriptions say what a
 * field is), string lengths, patterns and formats, unique items and closed objects (a text past its limit or off
 * its pattern, a repeated item or a field the contract does not name is refused with a 4xx that names the field
 * and what it must be, on every transport, since calls are validated against the full contract).
 */
const LEFT_OUT = new Set(["examples", "minLength", "maxLength", "pattern", "format", "uniqueItems", "additionalProperties"]);

function lean(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(lean);
  if (schema === null || typeof schema !== "object") return schema;
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([key, value]) => !LEFT_OUT.has(key) && !(key === "required" && Array.isArray(value) && value.length === 0))
      .map(([key, value]) => [key, key === "properties" ? mapValues(value, lean) : lean(value)]),
  );
}

const mapValues = (object: unknown, f: (v: unknown) => unknown) =>
  Object.fromEntries(Object.entries(object as Record<string, unknown>).map(([k, v]) => [k, f(v)]));
