import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Principal } from "../auth/principal.js";
import { asCairnError, CairnError, RETRY_AFTER_SECONDS } from "../errors.js";
import type { Logger } from "../logger.js";
import type { OperationExecutor, Transport } from "../operations/executor.js";
import { toolsFor } from "./tools.js";

export const INSTRUCTIONS = `Cairn keeps what is not in git: what was tried and dropped, what was decided and why, what was measured, what comes next.
- After a compaction or at a fresh start: query_recent_turns first (your own newest turns), then query_raw_memories with anchors from them, then query_summaries.
- Before a design decision or a ticket: query_raw_memories for earlier decisions on the subject; before a change, assess_change for how similar ones ended.
- At the end of each turn: add_memory with the task (prompt), the decisions and evidence (thought), and the outcome and next step (response).
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
  const server = new Server(info, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  const tools = toolsFor(executor.operations, principal.role);

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));

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
