import { restRequest, type components, type OperationId, type OperationOutput, type OperationRequest } from "@cairn/openapi/rest";

export type Schemas = components["schemas"];
export type Memory = Schemas["Memory"];
export type MemoryBrief = Schemas["MemoryBrief"];
export type Caller = Schemas["Caller"];

/** A refusal from memory-core, with the API's code and the hint it gives for what to do next. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly hint: string | undefined,
  ) {
    super(detail);
  }
}

export type Call = <K extends OperationId>(operationId: K, input: OperationRequest<K>) => Promise<OperationOutput<K>>;

/** Every call the console makes goes through the contract's REST binding, same origin, with the tab's token. */
export function apiFor(token: string): Call {
  return async (operationId, input) => {
    const { method, target, body } = restRequest(operationId, input);
    let response: Response;
    try {
      response = await fetch(target, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
    } catch {
      throw new ApiError(0, "unreachable", "Cairn did not answer.", "Check that memory-core is running, then try again.");
    }
    const parsed: unknown = await response.json().catch(() => undefined);
    if (!response.ok) {
      const problem = (parsed ?? {}) as { code?: string; detail?: string; hint?: string };
      throw new ApiError(response.status, problem.code ?? `http_${response.status}`, problem.detail ?? response.statusText, problem.hint);
    }
    return parsed as OperationOutput<typeof operationId>;
  };
}

/** A memory in a listing is brief unless asked for whole: both carry what a row shows. */
export const isBrief = (m: MemoryBrief | Memory): m is MemoryBrief => "text" in m;
