import type { Role } from "@cairn/openapi";

export type { Role };

/** Who is calling, as their token says; never taken from the request itself. */
export interface Principal {
  workspace: string;
  agent: string;
  role: Role;
}
