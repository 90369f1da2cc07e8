import type { Request } from "express";
import type { Principal } from "../auth/principal.js";
import type { TokenRegistry } from "../auth/tokens.js";
import { unauthorized } from "../errors.js";

export function bearerToken(req: Request): string | undefined {
  const header = req.get("authorization");
  const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
  return match?.[1];
}

export function authenticate(req: Request, tokens: TokenRegistry): Principal {
  const principal = tokens.resolve(bearerToken(req));
  if (!principal) throw unauthorized();
  return principal;
}
