import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  getObjectShape,
  objectFromShape,
  safeParse,
  type AnyObjectSchema,
  type SchemaOutput,
} from "@modelcontextprotocol/sdk/server/zod-compat.js";
import { ErrorCode, ListToolsRequestSchema, McpError, RequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Principal } from "../auth/principal.js";
import { asCairnError, CairnError, RETRY_AFTER_SECONDS } from "../errors.js";
import type { Logger } from "../logger.js";
import { clip } from "../text.js";
import type { OperationExecutor, Transport } from "../operations/executor.js";
import { toolsFor } from "./tools.js";

export const INSTRUCTIONS = `Cairn keeps what is not in git: what was tried and dropped, what was decided and why, what was measured, what comes next.
- After a compaction or at a fresh start: query_recent_turns first (your own newest turns), then query_raw_memories with anchors from them, then query_summaries.
- Before a design decision or a ticket: query_raw_memories for earlier decisions on the subject; before a change, assess_change for how similar ones ended.
- Before editing a file: query_raw_memories with paths: [the file] for what the team decided or tried there.
- Messages: the hooks show your unread ones; read them with query_inbox, then ack_messages; hand work over with send_message (to an agent or team).
- At the end of each turn: add_memory with the task (prompt), the decisions and evidence (thought), and the outcome and next step (response); cite the files in code.paths.
Answers are brief (each memory in a few words); open the ones that matter with get_memory.
Memory proposes; the live repository decides: check what you recall against it.`;

export interface ServerInfo {
  name: string;
  version: string;
}

/**
 * The MCP server for one caller: every contract operation its role may call is a tool (see tools.ts). Shared
 * by the Streamable HTTP and stdio transports.
 */
export function buildServer(
  executor: OperationExecutor,
  principal: Principal,
  transport: Transport,
  log: Logger,
  info: ServerInfo = { name: "cairn-memory-core", version: executor.contract.version },
): Server {
  const server = new CairnMcpServer(info, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  const tools = toolsFor(executor.operations, principal.role);

  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));

  // tools/call is answered here rather than through setRequestHandler: the SDK checks a registered handler's
  // request against its schema and answers a malformed call with InternalError and the schema library's dump.
  // A malformed call is the caller's mistake: InvalidParams, in one sentence.
  server.fallbackRequestHandler = async (request): Promise<CallToolResult> => {
    if (request.method !== "tools/call") throw new McpError(ErrorCode.MethodNotFound, "Method not found");
    const { name, arguments: args } = toolCall(request.params);
    if (!executor.operations.some((op) => op.operationId === name)) {
      throw new McpError(ErrorCode.InvalidParams, "Unknown tool: see tools/list for the tools this server has");
    }
    try {
      const result = await executor.execute(name, args, principal, transport);
      return {
        content: [{ type: "text", text: JSON.stringify(result.body) }],
        structuredContent: result.body as Record<string, unknown>,
      };
    } catch (error) {
      if (!(error instanceof CairnError)) log.error("tool failed", { tool: name, error: String(error) });
      return toolError(asCairnError(error));
    }
  };
  return server;
}

type Handler = Parameters<Server["setRequestHandler"]>[1];

/**
 * The SDK's server, answering a request whose params do not match the method's schema (`initialize`,
 * `tools/list`, `ping`: every handler the SDK or this module registers) with InvalidParams and one short
 * sentence. The SDK checks a registered handler's request against its schema and answers a mismatch with
 * InternalError and the schema library's whole issue list; here each handler is registered with a schema that
 * takes any params (the transport has already checked that they are an object, if present) and the request is
 * checked against the method's own schema first. Both transports build their server here.
 */
class CairnMcpServer extends Server {
  override setRequestHandler<T extends AnyObjectSchema>(
    requestSchema: T,
    handler: (request: SchemaOutput<T>, extra: Parameters<Handler>[1]) => ReturnType<Handler>,
  ): void {
    // The method's schema with RequestSchema's params in place of its own, built with the SDK's own helpers.
    const anyParams = objectFromShape({ ...getObjectShape(requestSchema), params: RequestSchema.shape.params });
    super.setRequestHandler(anyParams, (request, extra) => {
      const checked = safeParse(requestSchema, request);
      if (!checked.success) throw invalidParams(String((request as { method?: unknown }).method), checked.error);
      return handler(checked.data as SchemaOutput<T>, extra);
    });
  }
}

/** How long a part of an InvalidParams message may be: it names what the caller sent, which has no bound. */
const PART_LIMIT = 120;

/**
 * InvalidParams naming the first problem of the params and how many others there are: never the issue list. A
 * plain error with a JSON-RPC code, which the SDK answers with as it is (an McpError's message carries its code).
 */
function invalidParams(method: string, error: unknown): Error & { code: number } {
  const issues = ((error as { issues?: unknown }).issues ?? []) as Array<{ path?: unknown; message?: unknown }>;
  const first = issues[0];
  const path = Array.isArray(first?.path) ? first.path.map(String).join(".") : "";
  const what = typeof first?.message === "string" ? first.message : "is not valid";
  const where = path.startsWith("params.") ? path.slice("params.".length) : path === "params" ? "" : path;
  const rest = issues.length > 1 ? ` (and ${issues.length - 1} more)` : "";
  const message = `Invalid params for ${clip(method, PART_LIMIT)}: ${where ? `${clip(where, PART_LIMIT)}: ` : ""}${clip(what, PART_LIMIT)}${rest}; see the MCP specification for this method's params`;
  return Object.assign(new Error(message), { code: ErrorCode.InvalidParams });
}

/** A tools/call's name and arguments, or InvalidParams: `name` a non-empty string, `arguments` absent or an object. */
function toolCall(params: unknown): { name: string; arguments: Record<string, unknown> } {
  const { name, arguments: args } = (typeof params === "object" && params !== null ? params : {}) as Record<string, unknown>;
  if (typeof name !== "string" || name.length === 0) {
    throw new McpError(ErrorCode.InvalidParams, "tools/call needs params.name, the name of a tool");
  }
  if (args !== undefined && (typeof args !== "object" || args === null || Array.isArray(args))) {
    throw new McpError(ErrorCode.InvalidParams, "tools/call params.arguments must be a JSON object of the tool's inputs");
  }
  return { name, arguments: (args ?? {}) as Record<string, unknown> };
}

/** A failure the model can act on: the same code, detail and hint as the REST problem document. */
function toolError(error: CairnError): CallToolResult {
  const problem = error.toProblem();
  const payload = {
    code: problem.code,
    status: problem.status,
    detail: problem.detail,
    ...(problem.hint ? { hint: problem.hint } : {}),
    ...(problem.errors ? { errors: problem.errors } : {}),
    ...(problem.status === 503 ? { retry_after_s: RETRY_AFTER_SECONDS } : {}),
  };
  return { isError: true, content: [{ type: "text", text: JSON.stringify(payload) }] };
}
