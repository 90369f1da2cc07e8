import express, { type ErrorRequestHandler, type Express, type Request, type RequestHandler } from "express";
import type { Contract } from "@cairn/openapi";
import type { TokenRegistry } from "../auth/tokens.js";
import { CairnError, notFound, validationFailed } from "../errors.js";
import type { Logger } from "../logger.js";
import type { Metrics } from "../metrics.js";
import type { OperationExecutor } from "../operations/executor.js";
import { consoleRouter, type ConsoleFiles } from "./console-route.js";
import { healthRouter, type Readiness } from "./health.js";
import { mcpRouter } from "./mcp-route.js";
import { authenticatedAgent } from "./authenticate.js";
import { BODY_ENCODINGS, sendProblem, toCairnError, unsupportedEncoding } from "./problem.js";
import { expressPath, hasBody, restRouter } from "./rest.js";

export interface AppDeps {
  executor: OperationExecutor;
  tokens: TokenRegistry;
  metrics: Metrics;
  readiness: () => Promise<Readiness>;
  log: Logger;
  /** The address the server binds: on a loopback address, Host headers are checked against DNS rebinding. */
  host: string;
  /** The console's files, when the composition root built it; without them /console is a 404. */
  console?: ConsoleFiles;
}

/** Big enough for three 32768-character fields of multi-byte text, small enough to refuse abuse early. */
export const BODY_LIMIT = "512kb";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);
/** Host header names that reach a loopback server legitimately; a browser on a rebound DNS name sends another. */
const LOOPBACK_HOSTNAMES = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** The HTTP app: REST under /v1 and MCP at /mcp from one contract, health, metrics and the contract itself. */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable("x-powered-by");
  const routeOf = routePatterns(deps.executor.contract);
  app.use((req, res, next) => {
    const started = process.hrtime.bigint();
    res.on("finish", () => {
      const route = (req.route as { path?: string } | undefined)?.path ?? "unmatched";
      deps.metrics.httpRequests.inc({ route, status: String(res.statusCode) });
      if (res.statusCode >= 400) logErrorResponse(deps.log, req, res.statusCode, res.locals, routeOf(req.path), started);
    });
    next();
  });
  if (LOOPBACK.has(deps.host)) app.use(loopbackHostOnly());
  app.use((req, _res, next) => {
    // Express decodes path parameters on the way into a route and fails with an untyped error: judged here first.
    try {
      decodeURIComponent(req.path);
    } catch {
      throw validationFailed(
        [{ path: "", message: "the URL path is not valid percent-encoding" }],
        "Percent-encode the path's parameters as UTF-8 (encodeURIComponent); the routes are listed in GET /openapi.json.",
      );
    }
    next();
  });
  app.use(healthRouter(deps.executor.contract, deps.metrics, deps.tokens, deps.readiness));
  if (deps.console) app.use(consoleRouter(deps.console));
  app.use((req, _res, next) => {
    const encoding = req.get("content-encoding")?.trim().toLowerCase();
    if (encoding !== undefined && hasBody(req) && !BODY_ENCODINGS.has(encoding)) throw unsupportedEncoding();
    next();
  });
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
    if (cairnError.status >= 500 && !(error instanceof CairnError)) res.locals.failure = String(error?.stack ?? error);
    if (res.headersSent) return;
    if (req.path === "/mcp" && cairnError.code === "malformed_json") {
      // An MCP client expects JSON-RPC's own answer to a body it cannot parse.
      res.locals.problemCode = cairnError.code;
      res.status(400).json({ jsonrpc: "2.0", error: { code: -32700, message: "Parse error: the body is not valid JSON" }, id: null });
      return;
    }
    sendProblem(res, cairnError);
  };
  app.use(errorBoundary);
  return app;
}

/**
 * DNS-rebinding protection on a loopback server: a page on a rebound name reaches 127.0.0.1 with its own
 * name as Host. REST routes answer the refusal as a problem like every other error; /mcp as JSON-RPC.
 */
function loopbackHostOnly(): RequestHandler {
  return (req, res, next) => {
    let hostname: string | undefined;
    try {
      hostname = new URL(`http://${req.headers.host ?? ""}`).hostname;
    } catch {
      hostname = undefined;
    }
    if (hostname !== undefined && LOOPBACK_HOSTNAMES.has(hostname)) {
      next();
      return;
    }
    if (req.path === "/mcp") {
      res.locals.problemCode = "forbidden";
      res.status(403).json({ jsonrpc: "2.0", error: { code: -32000, message: "Invalid Host header" }, id: null });
      return;
    }
    throw new CairnError(
      "forbidden",
      403,
      "This server answers only requests addressed to its loopback name.",
      "Send the Host header of the address the server listens on (its loopback address and port); other names are refused against DNS rebinding.",
    );
  };
}

/** The route pattern of a request path, as the contract writes it; never the raw path, whose segments are data. */
function routePatterns(contract: Contract): (path: string) => string {
  const fixed = new Set(["/mcp", "/healthz", "/readyz", "/metrics", "/openapi.json", "/console"]);
  // Literal segments win over parameters (`/v1/memories/recent` over `/v1/memories/{memory_id}`).
  const templates = [...new Set(contract.operations.map((op) => op.path))]
    .sort((a, b) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0))
    .map((template) => ({
      template,
      pattern: new RegExp(
        `^${template
          .split(/\{[^}]+\}/)
          .map((part) => part.replace(/[.*+?^$()|[\]\\]/g, "\\$&"))
          .join("[^/]+")}/?$`,
      ),
    }));
  return (path) => (fixed.has(path) ? path : (templates.find((t) => t.pattern.test(path))?.template ?? "unmatched"));
}

/**
 * One line per refused or failed request, for operators: what was asked of which route and how it ended.
 * Never bodies, query strings or tokens: they may hold what agents wrote, or credentials.
 */
function logErrorResponse(
  log: Logger,
  req: Request,
  status: number,
  locals: Record<string, unknown>,
  route: string,
  started: bigint,
): void {
  const agent = authenticatedAgent(req);
  const fields = {
    method: req.method,
    route,
    status,
    ...(typeof locals.problemCode === "string" ? { code: locals.problemCode } : {}),
    ...(agent !== undefined ? { agent } : {}),
    duration_ms: Number((process.hrtime.bigint() - started) / 1000n) / 1000,
    ...(typeof locals.failure === "string" ? { error: locals.failure } : {}),
  };
  if (status >= 500) log.error("request failed", fields);
  else log.warn("request refused", fields);
}
