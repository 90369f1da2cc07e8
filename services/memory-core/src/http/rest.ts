import type { Operation } from "@cairn/openapi";
import { Router, type Request } from "express";
import type { TokenRegistry } from "../auth/tokens.js";
import { CairnError, validationFailed } from "../errors.js";
import { assertInputDepth } from "../input-depth.js";
import type { OperationExecutor } from "../operations/executor.js";
import { authenticate } from "./authenticate.js";

/** `/v1/sessions/{session_id}` → `/v1/sessions/:session_id` */
export const expressPath = (path: string) => path.replace(/\{([^}]+)\}/g, ":$1");

/** One route per contract operation; each gathers its input and hands it to the executor. */
export function restRouter(executor: OperationExecutor, tokens: TokenRegistry): Router {
  const router = Router();
  for (const operation of executor.operations) {
    router[operation.method](expressPath(operation.path), async (req, res) => {
      const principal = authenticate(req, tokens);
      const result = await executor.execute(operation.operationId, restInput(operation, req), principal, "rest");
      res.status(result.status).json(result.body);
    });
  }
  return router;
}

/** Path, query and header parameters and the JSON body, as one input object in the contract's shape. */
export function restInput(operation: Operation, req: Request): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  if (operation.hasBody) {
    if (hasBody(req) && !req.is(["application/json", "application/*+json"])) {
      throw new CairnError("unsupported_media_type", 415, "The body must be JSON.", "Send the body with Content-Type: application/json.");
    }
    const body: unknown = req.body ?? {};
    assertInputDepth(body);
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      throw validationFailed([{ path: "", message: "the body must be a JSON object" }]);
    }
    // Own data properties, as parsed: assigning would take a `__proto__` key for the prototype and drop it
    // silently, where every unknown field must be refused.
    for (const [key, value] of Object.entries(body))
      Object.defineProperty(input, key, { value, enumerable: true, writable: true, configurable: true });
  }
  const query = req.query as Record<string, unknown>;
  for (const name of Object.keys(query)) {
    if (!operation.parameters.some((p) => p.in === "query" && p.name === name)) {
      throw validationFailed([{ path: name, message: "is not a parameter of this operation" }]);
    }
  }
  for (const param of operation.parameters) {
    const raw = param.in === "path" ? req.params[param.name] : param.in === "query" ? query[param.name] : req.get(param.name);
    if (raw === undefined) continue;
    if (Array.isArray(raw) || typeof raw !== "string") {
      throw validationFailed([{ path: param.inputName, message: "must be given once" }]);
    }
    const value = coerce(raw, param.schema.type);
    if (param.inputName in input && input[param.inputName] !== value) {
      throw validationFailed([
        { path: param.inputName, message: `differs from the ${param.name} ${param.in === "header" ? "header" : "parameter"}` },
      ]);
    }
    input[param.inputName] = value;
  }
  return input;
}

export function hasBody(req: Request): boolean {
  return req.get("transfer-encoding") !== undefined || Number(req.get("content-length") ?? 0) > 0;
}

/** Query strings are text: numbers and booleans are read as such where the contract says so, else left for ajv. */
function coerce(raw: string, type: unknown): unknown {
  if ((type === "integer" || type === "number") && /^-?\d+(\.\d+)?$/.test(raw)) return Number(raw);
  if (type === "boolean" && (raw === "true" || raw === "false")) return raw === "true";
  return raw;
}
