/** Where the console is, read from the URL's hash so that every page has a link, a history entry and a reload. */
export type Route =
  | { page: "timeline"; agent?: string; session?: string }
  | { page: "search" }
  | { page: "status" }
  | { page: "team" }
  | { page: "review" }
  | { page: "inbox" }
  | { page: "memory"; id: string }
  | { page: "session"; id: string };

export function parseRoute(hash: string): Route {
  const [path = "", query = ""] = hash.replace(/^#/, "").split("?");
  const params = new URLSearchParams(query);
  const [, page, id] = path.split("/").map((part) => decodeURIComponent(part));
  if (page === "search") return { page: "search" };
  if (page === "status") return { page: "status" };
  if (page === "team") return { page: "team" };
  if (page === "review") return { page: "review" };
  if (page === "inbox") return { page: "inbox" };
  if (page === "memory" && id) return { page: "memory", id };
  if (page === "session" && id) return { page: "session", id };
  return { page: "timeline", ...(params.get("agent") ? { agent: params.get("agent")! } : {}) };
}

export const memoryHref = (id: string) => `#/memory/${encodeURIComponent(id)}`;
export const sessionHref = (id: string) => `#/session/${encodeURIComponent(id)}`;
export const timelineHref = (agent?: string) => (agent ? `#/timeline?agent=${encodeURIComponent(agent)}` : "#/timeline");
