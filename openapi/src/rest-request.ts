import { operationRoutes } from "./generated/operations.js";
import type { OperationId, OperationRequest } from "./operation-types.js";

/** One operation as an HTTP request: what a REST client sends. */
export interface RestRequest {
  method: Uppercase<(typeof operationRoutes)[OperationId]["method"]>;
  /** Path and query string, relative to the server's origin. */
  target: string;
  /** The JSON body, for operations that take one. */
  body?: Record<string, unknown>;
}

/**
 * Lays an operation's input out the way the contract's REST binding takes it: path fields into the path
 * (encoded), query fields into the query string, the rest as the JSON body. The inverse of memory-core's
 * `restInput`, so a client never spells a route by hand.
 */
export function restRequest<K extends OperationId>(operationId: K, input: OperationRequest<K>): RestRequest {
  const route = operationRoutes[operationId];
  const rest: Record<string, unknown> = { ...input };
  const inPath = new Set<string>(route.pathFields);
  const inQuery = new Set<string>(route.queryFields);
  const path = route.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(String(rest[name])));
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(rest)) {
    if (inPath.has(name)) delete rest[name];
    else if (inQuery.has(name)) {
      if (value !== undefined) query.set(name, String(value));
      delete rest[name];
    }
  }
  const target = query.size > 0 ? `${path}?${query}` : path;
  const method = route.method.toUpperCase() as RestRequest["method"];
  return route.method === "get" ? { method, target } : { method, target, body: rest };
}

// What a client in a browser needs of the contract, without the loader's Node modules.
export { ApiError, RestClient, type ApiErrorInit, type RestCall, type RestClientOptions } from "./rest-client.js";
export type { components } from "./generated/schema.js";
export type { OperationId, OperationOutput, OperationRequest } from "./operation-types.js";
