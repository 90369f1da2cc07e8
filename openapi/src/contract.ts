import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import SwaggerParser from "@apidevtools/swagger-parser";
import yaml from "js-yaml";

export type JsonSchema = Record<string, unknown>;

export const CONTRACT_PATH = fileURLToPath(new URL("../memory-core.yaml", import.meta.url));

export type HttpMethod = "get" | "post" | "put" | "patch" | "delete";
const HTTP_METHODS: readonly HttpMethod[] = ["get", "post", "put", "patch", "delete"];

export interface ToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** A request parameter that is not part of the body (path, query or header). */
export interface ParameterSpec {
  name: string;
  in: "path" | "query" | "header";
  /** The input property it fills: its own name, or `x-input-name` for headers such as `Idempotency-Key`. */
  inputName: string;
  required: boolean;
  schema: JsonSchema;
}

/** The roles a token can have (a tokens file's `role`). */
export type Role = "agent" | "importer" | "admin";
export const REQUIRED_ROLES = ["agent", "importer", "admin"] as const;
export type RequiredRole = (typeof REQUIRED_ROLES)[number];

/**
 * Whether a token of `role` may call an operation that requires `required`: `agent` operations any token may
 * call; `importer` ones (bulk writes) an importer's or an admin's; `admin` ones an admin's only. An importer
 * writes and reads what an import needs, and never reviews or administers.
 */
export function mayCall(required: RequiredRole, role: Role): boolean {
  if (required === "agent") return true;
  if (required === "importer") return role === "importer" || role === "admin";
  return role === "admin";
}

/** One contract operation, flattened into what both transports need. */
export interface Operation {
  operationId: string;
  method: HttpMethod;
  /** The OpenAPI path template, e.g. `/v1/sessions/{session_id}`. */
  path: string;
  title: string;
  summary: string;
  description: string;
  annotations: ToolAnnotations;
  /** Who may call it (`mayCall`): any token (`agent`), an importer's or an admin's (`importer`), an admin's only. */
  requiredRole: RequiredRole;
  parameters: ParameterSpec[];
  hasBody: boolean;
  /** Parameters (path, query, header) and body properties as one object: the MCP tool's input schema. */
  inputSchema: JsonSchema;
  /** The success response's schema: the MCP tool's output schema. */
  outputSchema: JsonSchema;
  successStatuses: number[];
}

export interface Contract {
  /** The document as written (refs intact), for `/openapi.json`. */
  document: Record<string, unknown>;
  version: string;
  operations: Operation[];
  operation(operationId: string): Operation;
}

export class ContractError extends Error {
  override name = "ContractError";
}

/**
 * Reads, validates (swagger-parser: OpenAPI 3.1 structure and every $ref) and flattens the contract.
 * Throws `ContractError` naming the problem; callers stop rather than serve a half-valid contract.
 */
export async function loadContract(path: string = CONTRACT_PATH): Promise<Contract> {
  const text = await readFile(path, "utf8");
  const document = yaml.load(text) as Record<string, unknown>;
  let paths: object | undefined;
  try {
    await SwaggerParser.validate(parserInput(document));
    ({ paths } = await SwaggerParser.dereference(parserInput(document)));
  } catch (error) {
    throw new ContractError(`the contract is not valid OpenAPI: ${(error as Error).message}`);
  }
  const operations = flattenOperations(paths, document);
  const byId = new Map(operations.map((op) => [op.operationId, op]));
  const info = document.info as { version: string };
  return {
    document,
    version: info.version,
    operations,
    operation(operationId) {
      const op = byId.get(operationId);
      if (!op) throw new ContractError(`no operation ${operationId} in the contract`);
      return op;
    },
  };
}

/** swagger-parser's OpenAPI document type (openapi-types', which this package does not depend on itself). */
type OpenApiDocument = Awaited<ReturnType<typeof SwaggerParser.dereference>>;

/**
 * A copy of the document for swagger-parser, which resolves $refs in the object it is given. It must be an object
 * naming its OpenAPI version, as swagger-parser's type says (a string would be read as a file's path): the parser
 * checks the rest.
 */
function parserInput(document: unknown): OpenApiDocument {
  const copy = structuredClone(document);
  if (!isOpenApiDocument(copy)) throw new Error("it is not an object with an openapi version");
  return copy;
}

function isOpenApiDocument(value: unknown): value is OpenApiDocument {
  return typeof value === "object" && value !== null && "openapi" in value && typeof value.openapi === "string";
}

/** The operations of the dereferenced document's paths; `written` is the document as written, $refs and all. */
function flattenOperations(dereferencedPaths: object | undefined, written: Record<string, unknown>): Operation[] {
  const paths = (dereferencedPaths ?? {}) as Record<string, Record<string, unknown>>;
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(paths)) {
    for (const method of HTTP_METHODS) {
      const raw = item[method] as Record<string, unknown> | undefined;
      if (raw) operations.push(flattenOperation(path, method, raw, item, ownBodyDescriptions(written, path, method)));
    }
  }
  const seen = new Set<string>();
  for (const op of operations) {
    if (seen.has(op.operationId)) throw new ContractError(`operationId ${op.operationId} is used twice`);
    seen.add(op.operationId);
  }
  return operations;
}

function flattenOperation(
  path: string,
  method: HttpMethod,
  raw: Record<string, unknown>,
  pathItem: Record<string, unknown>,
  ownDescriptions: ReadonlyMap<string, string>,
): Operation {
  const operationId = raw.operationId as string | undefined;
  if (!operationId || !/^[a-z][a-z0-9_]*$/.test(operationId)) {
    throw new ContractError(`${method.toUpperCase()} ${path} needs a snake_case operationId (it is the MCP tool name)`);
  }
  const rawParams = [
    ...((pathItem.parameters as Record<string, unknown>[] | undefined) ?? []),
    ...((raw.parameters as Record<string, unknown>[] | undefined) ?? []),
  ];
  const parameters: ParameterSpec[] = rawParams.map((p) => {
    const where = p.in as string;
    if (where !== "path" && where !== "query" && where !== "header") {
      throw new ContractError(`${operationId}: parameters in ${where} are not supported`);
    }
    const inputName = (p["x-input-name"] as string | undefined) ?? (p.name as string);
    return {
      name: p.name as string,
      in: where,
      inputName,
      required: Boolean(p.required),
      schema: (p.schema as JsonSchema | undefined) ?? {},
    };
  });

  const body = raw.requestBody as { required?: boolean; content?: Record<string, { schema?: JsonSchema }> } | undefined;
  const bodySchema = body?.content?.["application/json"]?.schema;
  if (body && !bodySchema) throw new ContractError(`${operationId}: a request body must be application/json`);
  if (bodySchema && bodySchema.type !== "object") {
    throw new ContractError(`${operationId}: the request body must be an object schema`);
  }

  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const p of parameters) {
    // A header that mirrors a body property (Idempotency-Key) is already described by that property.
    if (p.in === "header" && bodySchema && hasProperty(bodySchema, p.inputName)) continue;
    properties[p.inputName] = withDescription(p.schema, rawParams.find((r) => r.name === p.name)?.description);
    if (p.required) required.push(p.inputName);
  }
  if (bodySchema) {
    const bodyProps = (bodySchema.properties ?? {}) as Record<string, JsonSchema>;
    for (const [name, schema] of Object.entries(bodyProps)) {
      if (name in properties) throw new ContractError(`${operationId}: ${name} is both a parameter and a body field`);
      properties[name] = withDescription(schema, ownDescriptions.get(name));
    }
    required.push(...(((bodySchema.required as string[] | undefined) ?? []) as string[]));
  }
  const inputSchema: JsonSchema = {
    type: "object",
    properties,
    required: [...new Set(required)],
    additionalProperties: false,
  };

  const responses = (raw.responses ?? {}) as Record<string, { content?: Record<string, { schema?: JsonSchema }> }>;
  const successStatuses = Object.keys(responses)
    .filter((s) => /^2\d\d$/.test(s))
    .map(Number)
    .sort();
  const firstSuccess = successStatuses[0];
  const outputSchema = firstSuccess ? responses[String(firstSuccess)]?.content?.["application/json"]?.schema : undefined;
  if (!outputSchema || outputSchema.type !== "object") {
    throw new ContractError(`${operationId}: the success response must be a JSON object schema`);
  }

  const mcp = (raw["x-mcp"] ?? {}) as { title?: string; annotations?: ToolAnnotations };
  const role = (raw["x-required-role"] as string | undefined) ?? "agent";
  if (!(REQUIRED_ROLES as readonly string[]).includes(role)) {
    throw new ContractError(`${operationId}: x-required-role is one of ${REQUIRED_ROLES.join(", ")}`);
  }
  return {
    operationId,
    method,
    path,
    title: mcp.title ?? operationId,
    summary: (raw.summary as string | undefined) ?? "",
    description: ((raw.description as string | undefined) ?? "").trim(),
    annotations: mcp.annotations ?? {},
    requiredRole: role as RequiredRole,
    parameters,
    hasBody: Boolean(bodySchema),
    inputSchema,
    outputSchema,
    successStatuses,
  };
}

function hasProperty(schema: JsonSchema, name: string): boolean {
  const props = schema.properties as Record<string, unknown> | undefined;
  return Boolean(props && name in props);
}

/**
 * The descriptions that body fields written as `$ref` give beside it, as the contract is written. Dereferencing
 * shares one object per referenced schema, so those descriptions do not survive it: every `since` would read as
 * the shared Timestamp's.
 */
function ownBodyDescriptions(written: Record<string, unknown>, path: string, method: HttpMethod): Map<string, string> {
  const operation = ((written.paths as Record<string, Record<string, unknown>>)[path]?.[method] ?? {}) as {
    requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  };
  let schema = operation.requestBody?.content?.["application/json"]?.schema;
  const components = ((written.components as Record<string, unknown> | undefined)?.schemas ?? {}) as Record<string, JsonSchema>;
  const ref = schema?.$ref;
  if (typeof ref === "string" && ref.startsWith("#/components/schemas/")) schema = components[ref.slice("#/components/schemas/".length)];
  const own = new Map<string, string>();
  for (const [name, field] of Object.entries((schema?.properties ?? {}) as Record<string, JsonSchema>)) {
    if (typeof field.$ref === "string" && typeof field.description === "string") own.set(name, field.description);
  }
  return own;
}

/** A field's own description says what it is for here; its schema's (shared by many fields) is generic. */
function withDescription(schema: JsonSchema, description: unknown): JsonSchema {
  return typeof description === "string" ? { ...schema, description } : schema;
}
