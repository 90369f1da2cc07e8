import { createHash } from "node:crypto";

const digest = (parts: readonly string[]) => createHash("sha256").update(parts.join("\u0000"), "utf8").digest("hex");

/** A turn's id: the same agent and key always name the same record, on every replica. */
export const turnId = (agent: string, idempotencyKey: string) => `t_${digest(["turn", agent, idempotencyKey]).slice(0, 32)}`;

/** Without a key, the content is the key: a blind retry of the same turn never stores a second copy. */
export const contentKey = (sessionId: string, prompt: string, thought: string, response: string) =>
  `content:${digest([sessionId, prompt, thought, response])}`;

/** One summary per session. */
export const summaryId = (sessionId: string) => `s_${digest(["summary", sessionId]).slice(0, 32)}`;

/** A stable hash of a JSON value: key order does not matter. */
export function canonicalHash(value: unknown): string {
  return createHash("sha256").update(canonicalJson(value), "utf8").digest("hex");
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}
