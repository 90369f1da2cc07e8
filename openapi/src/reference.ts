import type { Contract, JsonSchema, Operation } from "./contract.js";

/**
 * Renders the contract as a Markdown reference (docs/contract.md). Pure and deterministic: the same contract
 * always gives the same bytes, so a test can tell a stale reference from a fresh one.
 */
export function renderReference(contract: Contract): string {
  const doc = contract.document;
  const out: string[] = [];
  const info = doc.info as { title: string; version: string; description?: string };
  out.push(
    "# Contract reference",
    "",
    "<!-- Generated from openapi/memory-core.yaml by `npm run docs:contract`. Do not edit: edit the contract and render again. -->",
    "",
    `${info.title}, contract version ${info.version}. Every operation below is both a REST route and an MCP tool of`,
    "the same name, with the same input (path, query and header parameters and body fields, as one object) and the",
    "same output. Requests are validated against these schemas on both transports.",
    "",
    oneParagraphs(info.description ?? ""),
    "",
    "Conventions: every call needs `Authorization: Bearer <token>` (stdio: `CAIRN_TOKEN`); the token's role must be",
    "at least the operation's role. Over MCP, call the tool with the input as `arguments`; over REST, path and query",
    "fields go in the URL and body fields in a JSON body. Each operation lists the error `code`s it can answer.",
    "",
    "## Operations",
    "",
    "| tool | REST route | role | what for |",
    "|---|---|---|---|",
  );
  for (const op of contract.operations) {
    out.push(
      `| [\`${op.operationId}\`](#${op.operationId}) | \`${op.method.toUpperCase()} ${op.path}\` | ${op.requiredRole} | ${cell(op.summary)} |`,
    );
  }
  for (const op of contract.operations) out.push("", ...renderOperation(doc, op));
  out.push("", ...renderSchemas(doc), "", ...renderErrorCodes(doc));
  return `${out
    .join("\n")
    .replace(/\n{3,}/g, "\n\n")
    .trimEnd()}\n`;
}

type Doc = Record<string, unknown>;

function renderOperation(doc: Doc, op: Operation): string[] {
  const raw = rawOperation(doc, op);
  const out = [
    `### ${op.operationId}`,
    "",
    `**${op.title}** — \`${op.method.toUpperCase()} ${op.path}\` — role: \`${op.requiredRole}\``,
    "",
    `${op.summary}`,
    "",
    oneParagraphs(op.description),
    "",
    `MCP annotations: ${annotationList(op)}.`,
    "",
    "**Input**",
    "",
  ];
  const rows = inputRows(doc, op, raw);
  if (rows.length === 0) {
    out.push("None: call it with `{}`.");
  } else {
    out.push("| field | in | type | required | limits | default | description |", "|---|---|---|---|---|---|---|", ...rows);
  }

  out.push("", "**Output**", "");
  const responses = (raw.responses ?? {}) as Record<string, Doc>;
  for (const status of Object.keys(responses)
    .filter((s) => /^2\d\d$/.test(s))
    .sort()) {
    const response = resolveAll(doc, responses[status]!);
    const schema = (response.content as Record<string, { schema: JsonSchema }> | undefined)?.["application/json"]?.schema;
    const fields = schema ? Object.keys((resolveAll(doc, schema).properties ?? {}) as Doc) : [];
    out.push(
      `- \`${status}\` ${oneLine(String(response.description ?? ""))} ${schema ? `Returns ${typeOf(doc, schema)}` : ""}` +
        (fields.length > 0 ? `: ${fields.map((f) => `\`${f}\``).join(", ")}.` : "."),
    );
  }

  out.push("", "**Errors**", "", "| status | code | when |", "|---|---|---|");
  for (const status of Object.keys(responses)
    .filter((s) => !/^2\d\d$/.test(s))
    .sort()) {
    const description = oneLine(String(resolveAll(doc, responses[status]!).description ?? ""));
    const codes = codesIn(doc, description);
    out.push(`| ${status} | ${codes.map((c) => `\`${c}\``).join(", ") || "—"} | ${cell(description)} |`);
  }

  const example = exampleInput(op, raw);
  out.push(
    "",
    "**Example**",
    "",
    "```json",
    JSON.stringify({ tool: op.operationId, arguments: example }, null, 2),
    "```",
    "",
    "```sh",
    curlFor(op, example),
    "```",
  );
  return out;
}

function annotationList(op: Operation): string {
  const entries = Object.entries(op.annotations).sort(([a], [b]) => a.localeCompare(b));
  return entries.length === 0 ? "none" : entries.map(([name, value]) => `\`${name}: ${String(value)}\``).join(", ");
}

interface RawParameter {
  name: string;
  in: string;
  required: boolean;
  description: string | undefined;
  schema: JsonSchema | undefined;
  "x-input-name": string | undefined;
}

function rawOperation(doc: Doc, op: Operation): Doc {
  const item = (doc.paths as Record<string, Doc>)[op.path]!;
  return item[op.method] as Doc;
}

function rawParameters(doc: Doc, op: Operation, raw: Doc): RawParameter[] {
  const item = (doc.paths as Record<string, Doc>)[op.path]!;
  const listed = [...((item.parameters as Doc[] | undefined) ?? []), ...((raw.parameters as Doc[] | undefined) ?? [])];
  return listed.map((p) => rawParameter(resolveAll(doc, p)));
}

/** A parameter object as the reference reads it: `name` and `in` are strings (swagger-parser has checked them). */
function rawParameter(p: Doc): RawParameter {
  const { name, in: where, required, description, schema, "x-input-name": inputName } = p;
  if (typeof name !== "string" || typeof where !== "string") throw new Error("a parameter needs a name and an `in`");
  return {
    name,
    in: where,
    required: required === true,
    description: typeof description === "string" ? description : undefined,
    schema: isDoc(schema) ? schema : undefined,
    "x-input-name": typeof inputName === "string" ? inputName : undefined,
  };
}

const isDoc = (value: unknown): value is Doc => typeof value === "object" && value !== null && !Array.isArray(value);

function bodySchema(doc: Doc, raw: Doc): Doc | undefined {
  const body = raw.requestBody as { content?: Record<string, { schema?: JsonSchema }> } | undefined;
  const schema = body?.content?.["application/json"]?.schema;
  return schema ? resolveAll(doc, schema) : undefined;
}

function inputRows(doc: Doc, op: Operation, raw: Doc): string[] {
  const body = bodySchema(doc, raw);
  const bodyProps = (body?.properties ?? {}) as Record<string, JsonSchema>;
  const bodyRequired = new Set((body?.required as string[] | undefined) ?? []);
  const rows: string[] = [];
  const headerFor = new Map<string, string>();
  for (const p of rawParameters(doc, op, raw)) {
    const inputName = p["x-input-name"] ?? p.name;
    if (p.in === "header" && inputName in bodyProps) {
      headerFor.set(inputName, p.name);
      continue;
    }
    const where = p.in === "header" ? `header \`${p.name}\`` : p.in;
    rows.push(row(doc, inputName, where, p.schema ?? {}, Boolean(p.required), p.description));
  }
  for (const [name, schema] of Object.entries(bodyProps)) {
    const header = headerFor.get(name);
    const where = header ? `body, or header \`${header}\`` : "body";
    rows.push(row(doc, name, where, schema, bodyRequired.has(name), undefined));
  }
  return rows;
}

function row(doc: Doc, name: string, where: string, schema: JsonSchema, required: boolean, description: string | undefined): string {
  const flat = flatten(doc, schema);
  const text = description ?? (typeof flat.description === "string" ? flat.description : "");
  const fallback = flat.default === undefined ? "" : `\`${JSON.stringify(flat.default)}\``;
  return `| \`${name}\` | ${where} | ${typeOf(doc, schema)} | ${required ? "yes" : "no"} | ${limits(doc, flat)} | ${fallback} | ${cell(text)} |`;
}

function renderSchemas(doc: Doc): string[] {
  const schemas = ((doc.components as Doc).schemas ?? {}) as Record<string, JsonSchema>;
  const out = [
    "## Schemas",
    "",
    "The objects that operations take and return. Scalar types (ids, names, timestamps) are shown inline where they are used.",
  ];
  for (const [name, schema] of Object.entries(schemas)) {
    if (!isObjectSchema(schema)) continue;
    out.push("", `### ${name}`, "");
    if (typeof schema.description === "string") out.push(oneLine(schema.description), "");
    const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((schema.required as string[] | undefined) ?? []);
    out.push("| field | type | required | limits | description |", "|---|---|---|---|---|");
    for (const [field, fieldSchema] of Object.entries(props)) {
      const flat = flatten(doc, fieldSchema);
      const text = typeof flat.description === "string" ? flat.description : "";
      out.push(
        `| \`${field}\` | ${typeOf(doc, fieldSchema)} | ${required.has(field) ? "yes" : "no"} | ${limits(doc, flat)} | ${cell(text)} |`,
      );
    }
  }
  return out;
}

function renderErrorCodes(doc: Doc): string[] {
  const responses = ((doc.components as Doc).responses ?? {}) as Record<string, Doc>;
  const statusOf = new Map<string, Set<string>>();
  // The status each shared response stands for, read from the operations that use it.
  for (const item of Object.values(doc.paths as Record<string, Doc>)) {
    for (const raw of Object.values(item)) {
      if (typeof raw !== "object" || raw === null || !("responses" in raw)) continue;
      for (const [status, response] of Object.entries((raw as Doc).responses as Record<string, Doc>)) {
        const ref = response.$ref;
        if (typeof ref !== "string") continue;
        const name = ref.split("/").pop()!;
        statusOf.set(name, (statusOf.get(name) ?? new Set()).add(status));
      }
    }
  }
  const out = ["## Error codes", "", "| code | status | meaning |", "|---|---|---|"];
  const named = new Set<string>();
  for (const [name, response] of Object.entries(responses)) {
    const description = oneLine(String(response.description ?? ""));
    const statuses = [...(statusOf.get(name) ?? [])].sort().join(", ") || "—";
    for (const code of codesIn(doc, description)) {
      named.add(code);
      out.push(`| \`${code}\` | ${statuses} | ${cell(description)} |`);
    }
  }
  const others = problemCodes(doc).filter((c) => !named.has(c));
  if (others.length > 0) {
    out.push("", `Also in \`Problem.code\`, not named by an operation's responses: ${others.map((c) => `\`${c}\``).join(", ")}.`);
  }
  return out;
}

function problemCodes(doc: Doc): string[] {
  const problem = (((doc.components as Doc).schemas ?? {}) as Record<string, Doc>).Problem;
  const code = ((problem?.properties ?? {}) as Record<string, Doc>).code;
  return ((code?.enum as string[] | undefined) ?? []).slice();
}

function codesIn(doc: Doc, text: string): string[] {
  const known = new Set(problemCodes(doc));
  return [...text.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!).filter((c) => known.has(c));
}

/** A valid input: the contract's own example when it has one, with required fields it leaves out filled in. */
function exampleInput(op: Operation, raw: Doc): Record<string, unknown> {
  const body = raw.requestBody as { content?: Record<string, { examples?: Record<string, { value?: unknown }> }> } | undefined;
  const examples = body?.content?.["application/json"]?.examples;
  const first = examples ? Object.values(examples)[0]?.value : undefined;
  const input: Record<string, unknown> = {};
  const properties = (op.inputSchema.properties ?? {}) as Record<string, JsonSchema>;
  for (const name of (op.inputSchema.required as string[] | undefined) ?? []) {
    input[name] = sampleValue(name, properties[name] ?? {});
  }
  return { ...input, ...((first as Record<string, unknown> | undefined) ?? {}) };
}

/** The smallest value a reader can recognise as a placeholder that still passes the schema where it can. */
function sampleValue(name: string, schema: JsonSchema): unknown {
  const examples = schema.examples as unknown[] | undefined;
  if (examples && examples.length > 0) return examples[0];
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  switch (schema.type) {
    case "integer":
    case "number":
      return schema.minimum ?? 1;
    case "boolean":
      return false;
    case "array": {
      const min = typeof schema.minItems === "number" ? schema.minItems : 0;
      return Array.from({ length: min }, () => sampleValue(name, (schema.items as JsonSchema | undefined) ?? {}));
    }
    case "object": {
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      const required = (schema.required as string[] | undefined) ?? [];
      return Object.fromEntries(required.map((field) => [field, sampleValue(field, properties[field] ?? {})]));
    }
    default:
      return schema.format === "date-time" ? "2026-11-29T12:00:00Z" : `<${name}>`;
  }
}

function curlFor(op: Operation, input: Record<string, unknown>): string {
  let path = op.path;
  const query: string[] = [];
  const headers: string[] = [];
  const bodyFields = { ...input };
  for (const p of op.parameters) {
    const value = input[p.inputName];
    if (p.in === "path") {
      path = path.replace(`{${p.name}}`, encodeURIComponent(String(value)));
      delete bodyFields[p.inputName];
    } else if (p.in === "query") {
      if (value !== undefined) query.push(`${p.name}=${encodeURIComponent(String(value))}`);
      delete bodyFields[p.inputName];
    } else if (p.in === "header" && !op.hasBody && value !== undefined) {
      headers.push(`-H '${p.name}: ${String(value)}'`);
      delete bodyFields[p.inputName];
    }
  }
  const url = `http://127.0.0.1:8790${path}${query.length > 0 ? `?${query.join("&")}` : ""}`;
  const token = { admin: "$CAIRN_ADMIN_TOKEN", importer: "$CAIRN_IMPORT_TOKEN", agent: "$CAIRN_TOKEN" }[op.requiredRole];
  const parts = [`curl -s -X ${op.method.toUpperCase()} '${url}'`, `-H "Authorization: Bearer ${token}"`, ...headers];
  if (op.hasBody) {
    parts.push(`-H 'Content-Type: application/json'`, `-d '${JSON.stringify(bodyFields).replace(/'/g, "'\\''")}'`);
  }
  return parts.join(" \\\n  ");
}

/** The type as a reader needs it: named objects link to their schema, scalars show their base type. */
function typeOf(doc: Doc, schema: JsonSchema): string {
  if (typeof schema.$ref === "string") {
    const target = resolveRef(doc, schema.$ref);
    const name = schema.$ref.split("/").pop()!;
    return isObjectSchema(target) ? `[${name}](#${name.toLowerCase()})` : typeOf(doc, target);
  }
  const choices = (schema.oneOf ?? schema.anyOf) as JsonSchema[] | undefined;
  if (choices) return choices.map((c) => typeOf(doc, c)).join(" or ");
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => `\`${String(v)}\``).join(" · ");
  if (Array.isArray(schema.type)) return (schema.type as string[]).map((t) => typeOf(doc, { ...schema, type: t })).join(" or ");
  switch (schema.type) {
    case "array":
      return `array of ${typeOf(doc, (schema.items as JsonSchema | undefined) ?? {})}`;
    case "object": {
      const props = Object.keys((schema.properties ?? {}) as Doc);
      const required = new Set((schema.required as string[] | undefined) ?? []);
      return props.length === 0 ? "object" : `{${props.map((p) => (required.has(p) ? p : `${p}?`)).join(", ")}}`;
    }
    case "string":
      return typeof schema.format === "string" ? `string (${schema.format})` : "string";
    case undefined:
      return "any";
    default:
      return String(schema.type);
  }
}

function limits(doc: Doc, flat: Doc): string {
  const parts: string[] = [];
  const range = (min: unknown, max: unknown, unit: string) => {
    if (min !== undefined && max !== undefined) parts.push(`${String(min)}–${String(max)}${unit}`);
    else if (max !== undefined) parts.push(`≤ ${String(max)}${unit}`);
    else if (min !== undefined) parts.push(`≥ ${String(min)}${unit}`);
  };
  range(flat.minLength, flat.maxLength, " characters");
  range(flat.minimum, flat.maximum, "");
  range(flat.minItems, flat.maxItems, " items");
  if (flat.uniqueItems === true) parts.push("unique");
  if (typeof flat.pattern === "string") parts.push(`pattern \`${flat.pattern}\``);
  if (flat.type === "array" && flat.items) {
    const items = flatten(doc, flat.items as JsonSchema);
    const each = isObjectSchema(items) ? "" : limits(doc, items);
    if (each) parts.push(`each: ${each}`);
  }
  return cell(parts.join(", "));
}

/** A schema with its `$ref` followed and sibling keywords (a field's own description) laid over the target. */
function flatten(doc: Doc, schema: JsonSchema): Doc {
  if (typeof schema.$ref !== "string") return schema;
  const { $ref, ...siblings } = schema;
  return { ...flatten(doc, resolveRef(doc, $ref as string)), ...siblings };
}

function resolveAll(doc: Doc, value: Doc): Doc {
  return typeof value.$ref === "string" ? resolveAll(doc, resolveRef(doc, value.$ref)) : value;
}

function resolveRef(doc: Doc, ref: string): Doc {
  if (!ref.startsWith("#/")) throw new Error(`only local $refs are rendered, not ${ref}`);
  let node: unknown = doc;
  for (const segment of ref.slice(2).split("/")) {
    node = (node as Doc)[segment.replace(/~1/g, "/").replace(/~0/g, "~")];
    if (node === undefined) throw new Error(`unresolved $ref ${ref}`);
  }
  return node as Doc;
}

function isObjectSchema(schema: Doc): boolean {
  return schema.type === "object" && typeof schema.properties === "object";
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** Keeps paragraph breaks, joins the lines inside each paragraph. */
function oneParagraphs(text: string): string {
  return text
    .split(/\n\s*\n/)
    .map(oneLine)
    .filter(Boolean)
    .join("\n\n");
}

function cell(text: string): string {
  return oneLine(text).replace(/\|/g, "\\|");
}
