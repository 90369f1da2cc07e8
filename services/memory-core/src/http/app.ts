import { localhostHostValidation } from "@modelcontextprotocol/sdk/server/middleware/hostHeaderValidation.js";
import express, { type ErrorRequestHandler, type Express } from "express";
import type { TokenRegistry } from "../auth/tokens.js";
import { CairnError, notFound } from "../errors.js";
import type { Logger } from "../logger.js";
import type { Metrics } from "../metrics.js";
import type { OperationExecutor } from "../operations/executor.js";
import { healthRouter, type Readiness } from "./health.js";
import { mcpRouter } from "./mcp-route.js";
import { sendProblem, toCairnError } from "./problem.js";
import { expressPath, restRouter } from "./rest.js";

export interface AppDeps {
  executor: OperationExecutor;
  tokens: TokenRegistry;
  metrics: Metrics;
  readiness: () => Promise<Readiness>;
  log: Logger;
  /** The address the server binds: on a loopback address, Host headers are checked against DNS rebinding. */
  host: string;
}

/** Big enough for three 32768-character fields of multi-byte text, small enough to refuse abuse early. */
export const BODY_LIMIT = "512kb";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);

/** The HTTP app: REST under /v1 and MCP at /mcp from one contract, health, metrics and the contract itself. */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable("x-powered-by");
  if (LOOPBACK.has(deps.host)) app.use(localhostHostValidation());
  app.use((req, res, next) => {
    res.on("finish", () => {
      const route = (req.route as { path?: string } | undefined)?.path ?? "unmatched";
      deps.metrics.httpRequests.inc({ route, status: String(res.statusCode) });
    });
    next();
  });
  app.use(healthRouter(deps.executor.contract, deps.metrics, deps.tokens, deps.readiness));
  app.use(express.json({ limit: BODY_LIMIT, strict: true, type: ["application/json", "application/*+json"] }));
  app.use(mcpRouter(deps.executor, deps.tokens, deps.log));
  app.use(restRouter(deps.executor, deps.tokens));

  const allowed = new Map<string, string[]>();
  for (const op of deps.executor.operations) {
    const path = expressPath(op.path);
    allowed.set(path, [...(allowed.get(path) ?? []), op.method.toUpperCase()]);
  }
  for (const [path, methods] of allowed) {
    app.all(path, (_req, res) => {
      res.setHeader("Allow", methods.join(", "));
      throw new CairnError("method_not_allowed", 405, `This route takes ${methods.join(", ")}.`, "See GET /openapi.json.");
    });
  }
  app.use(() => {
    throw notFound("No such route.", "The routes are listed in GET /openapi.json.");
  });

  const errorBoundary: ErrorRequestHandler = (error, req, res, _next) => {
    const cairnError = toCairnError(error);
    if (cairnError.status >= 500 && !(error instanceof CairnError)) {
      deps.log.error("request failed", { method: req.method, path: req.path, error: String(error?.stack ?? error) });
    }
    if (res.headersSent) return;
    if (req.path === "/mcp" && cairnError.code === "malformed_json") {
      // An MCP client expects JSON-RPC's own answer to a body it cannot parse.
      res.status(400).json({ jsonrpc: "2.0", error: { code: -32700, message: "Parse error: the body is not valid JSON" }, id: null });
      return;
    }
    sendProblem(res, cairnError);
  };
  app.use(errorBoundary);
  return app;
}
