import { mayCall, type JsonSchema, type Operation } from "@cairn/openapi";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Role } from "../auth/principal.js";

/**
 * The tool list a caller is shown. Every session that connects pays for it in context, so it holds only the
 * tools the caller's role may call (an admin tool still answers an agent that calls it by name with 403),
 * each with the contract's description, its input schema made lean (see LEFT_OUT), an outline of its output
 * (the top-level fields every answer has, and their types) and its annotations. The full output schemas are in
 * the contract (`GET /openapi.json`); answers still conform to the outline, so a client that validates
 * structured results against it accepts them.
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
    outputSchema: outline(operation.outputSchema) as Tool["outputSchema"],
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
 * An object schema reduced to the fields it requires and their types, one level deep; what it leaves out (the
 * fields an answer may lack, the fields' parts and constraints), it allows.
 */
export function outline(schema: JsonSchema): JsonSchema {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return {
    type: "object",
    properties: Object.fromEntries(
      Object.entries(properties)
        .filter(([name]) => required.has(name))
        .map(([name, field]) => [name, typeOf(field)]),
    ),
  };
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

/** A field's JSON types, without its constraints or its parts. */
function typeOf(field: JsonSchema): JsonSchema {
  const types = new Set<string>();
  const collect = (s: JsonSchema) => {
    if (typeof s.type === "string") types.add(s.type);
    else if (Array.isArray(s.type)) for (const t of s.type) types.add(String(t));
    for (const branch of [...((s.oneOf as JsonSchema[]) ?? []), ...((s.anyOf as JsonSchema[]) ?? [])]) collect(branch);
    if (s.enum !== undefined && s.type === undefined) for (const v of s.enum as unknown[]) types.add(v === null ? "null" : typeof v);
  };
  collect(field);
  if (types.size === 0) return {};
  const list = [...types].map((t) => (t === "integer" && types.has("number") ? "number" : t));
  const unique = [...new Set(list)];
  return { type: unique.length === 1 ? unique[0]! : unique };
}
