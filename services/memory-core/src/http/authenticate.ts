import type { Request } from "express";
import type { Principal } from "../auth/principal.js";
import type { TokenRegistry } from "../auth/tokens.js";
import { unauthorized } from "../errors.js";

/** Who each request turned out to be, for its log line; gone with the request. */
const principals = new WeakMap<Request, Principal>();

export function bearerToken(req: Request): string | undefined {
  const header = req.get("authorization");
  const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
  return match?.[1];
}

export function authenticate(req: Request, tokens: TokenRegistry): Principal {
  const principal = tokens.resolve(bearerToken(req));
  if (!principal) throw unauthorized();
  principals.set(req, principal);
  return principal;
}

/** The agent a request authenticated as, if it got that far. */
export const authenticatedAgent = (req: Request): string | undefined => principals.get(req)?.agent;
