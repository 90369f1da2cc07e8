import type { Contract } from "./contract.js";
import type { InputValidator } from "./validation.js";

/**
 * Runbooks and the contract reference write tool calls as fenced ```json blocks of the form
 * `{"tool": "<operationId>", "arguments": {...}}`, and REST routes as `METHOD /v1/...`. These helpers find
 * them and check them against the contract, so documentation cannot drift from it.
 */

export interface DocToolCall {
  tool: string;
  arguments: Record<string, unknown>;
  /** 1-based line of the block's opening fence. */
  line: number;
}

export interface DocProblem {
  line: number;
  message: string;
}

export interface DocRoute {
  method: string;
  path: string;
  line: number;
}

/** Every ```json block, parsed as a tool call; a block that is not one is a problem, not skipped. */
export function extractToolCalls(markdown: string): { calls: DocToolCall[]; problems: DocProblem[] } {
  const calls: DocToolCall[] = [];
  const problems: DocProblem[] = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== "```json") continue;
    const line = i + 1;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i]!.trim() !== "```"; i++) body.push(lines[i]!);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.join("\n"));
    } catch {
      problems.push({ line, message: "the ```json block is not valid JSON" });
      continue;
    }
    const call = parsed as Record<string, unknown> | null;
    const keys = call && typeof call === "object" && !Array.isArray(call) ? Object.keys(call).sort() : [];
    if (keys.join(",") !== "arguments,tool" || typeof call!.tool !== "string" || !isObject(call!.arguments)) {
      problems.push({ line, message: 'a ```json block must be exactly {"tool": "<operationId>", "arguments": {...}}' });
      continue;
    }
    calls.push({ tool: call!.tool as string, arguments: call!.arguments as Record<string, unknown>, line });
  }
  return { calls, problems };
}

/** Each tool call must name an operation of the contract and pass its input validation. */
export function checkToolCalls(
  markdown: string,
  contract: Contract,
  validators: ReadonlyMap<string, InputValidator>,
): { calls: DocToolCall[]; problems: DocProblem[] } {
  const { calls, problems } = extractToolCalls(markdown);
  const known = new Set(contract.operations.map((op) => op.operationId));
  for (const call of calls) {
    if (!known.has(call.tool)) {
      problems.push({ line: call.line, message: `${call.tool} is not an operation of the contract` });
      continue;
    }
    const result = validators.get(call.tool)!(call.arguments);
    if (!result.ok) {
      const why = result.errors.map((e) => (e.path ? `${e.path} ${e.message}` : e.message)).join("; ");
      problems.push({ line: call.line, message: `${call.tool}: ${why}` });
    }
  }
  return { calls, problems };
}

const ROUTE = /\b(GET|POST|PUT|PATCH|DELETE) (\/v1\/[A-Za-z0-9_{}./:@-]*)/g;
const CURL = /-X (GET|POST|PUT|PATCH|DELETE) '?https?:\/\/[^/\s'"]+(\/v1\/[^\s'"?]*)/g;

/** REST routes written as `POST /v1/...` or in a curl command line. */
export function extractRoutes(markdown: string): DocRoute[] {
  const routes: DocRoute[] = [];
  markdown.split("\n").forEach((text, index) => {
    for (const pattern of [ROUTE, CURL]) {
      for (const match of text.matchAll(pattern)) {
        routes.push({ method: match[1]!, path: match[2]!.replace(/[.:]+$/, ""), line: index + 1 });
      }
    }
  });
  return routes;
}

/** Each route must be one of the contract's, by method and path (a template's `{name}` matches any segment). */
export function checkRoutes(markdown: string, contract: Contract): { routes: DocRoute[]; problems: DocProblem[] } {
  const routes = extractRoutes(markdown);
  const templates = contract.operations.map((op) => ({
    method: op.method.toUpperCase(),
    pattern: new RegExp(
      `^${op.path
        .split(/\{[^}]+\}/)
        .map(escapeRegExp)
        .join("[^/]+")}$`,
    ),
  }));
  const problems = routes
    .filter((r) => !templates.some((t) => t.method === r.method && t.pattern.test(r.path)))
    .map((r) => ({ line: r.line, message: `${r.method} ${r.path} is not a route of the contract` }));
  return { routes, problems };
}

function isObject(value: unknown): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
