/**
 * A hook's request to memory-core: the agent's token, a JSON body when there is one, and no more time than the
 * hook's deadline leaves. What an answer or a failure means is each hook's to say.
 */
export function requestCairn(
  cairn: URL,
  token: string,
  path: string,
  deadline: number,
  init: { method?: "GET" | "POST"; body?: unknown } = {},
): Promise<Response> {
  return fetch(new URL(path, cairn), {
    method: init.method ?? "GET",
    headers: { authorization: `Bearer ${token}`, ...(init.body === undefined ? {} : { "content-type": "application/json" }) },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())),
  });
}
