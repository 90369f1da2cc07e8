import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { Router } from "express";
import type { TokenRegistry } from "../auth/tokens.js";
import { CairnError } from "../errors.js";
import type { Logger } from "../logger.js";
import { buildServer } from "../mcp/server.js";
import type { OperationExecutor } from "../operations/executor.js";
import { authenticate } from "./authenticate.js";

/**
 * MCP over Streamable HTTP, stateless: each POST gets its own server bound to the caller's token, so no
 * session state lives in a replica and any replica can answer any request.
 */
export function mcpRouter(executor: OperationExecutor, tokens: TokenRegistry, log: Logger): Router {
  const router = Router();
  router.post("/mcp", async (req, res) => {
    const principal = authenticate(req, tokens);
    const server = buildServer(executor, principal, "mcp-http", log);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    // The request is over either way: a close that fails is logged, never left to reject unheard.
    const closeFailed = (error: unknown) => log.warn("mcp close failed", { error: error instanceof Error ? error.message : String(error) });
    res.on("close", () => {
      transport.close().catch(closeFailed);
      server.close().catch(closeFailed);
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  router.all("/mcp", () => {
    throw new CairnError(
      "method_not_allowed",
      405,
      "This MCP endpoint is stateless: it takes POST only.",
      "Send JSON-RPC requests with POST; there are no sessions to open with GET or close with DELETE.",
    );
  });
  return router;
}
