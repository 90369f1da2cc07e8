/**
 * Pointers in an index into the archive — memory ids (`t_` and 32 hex digits) and `session:<id>` — checked
 * against a running memory-core. What it finds comes with the fix.
 */

export interface LintFinding {
  pointer: string;
  problem: "missing" | "forgotten" | "superseded" | "outdated" | "unauthorized" | "unreachable";
  fix: string;
}

const MEMORY_ID = /\bt_[0-9a-f]{32}\b/g;
const SESSION = /\bsession:([A-Za-z0-9][A-Za-z0-9._:@/-]*)/g;

export function findPointers(index: string): { memories: string[]; sessions: string[] } {
  const memories = [...new Set(index.match(MEMORY_ID) ?? [])];
  const sessions = [...new Set([...index.matchAll(SESSION)].map((m) => m[1]!.replace(/[.:/]+$/, "")))];
  return { memories, sessions };
}

export async function lintPointers(index: string, memoryCore: URL, token: string | undefined): Promise<LintFinding[]> {
  const { memories, sessions } = findPointers(index);
  const checks = [
    ...memories.map((id) => ({ pointer: id, path: `/v1/memories/${id}` })),
    ...sessions.map((id) => ({ pointer: `session:${id}`, path: `/v1/sessions/${encodeURIComponent(id)}` })),
  ];
  const findings: LintFinding[] = [];
  for (const check of checks) {
    let status: number;
    let body: {
      superseded_by?: string;
      superseded_reason?: string;
      outdated?: boolean;
      corrections?: Array<{ kind: string; reason: string }>;
    } = {};
    try {
      const response = await fetch(new URL(check.path, memoryCore), {
        headers: token ? { authorization: `Bearer ${token}` } : {},
        signal: AbortSignal.timeout(5000),
      });
      status = response.status;
      body = ((await response.json().catch(() => ({}))) ?? {}) as typeof body;
    } catch {
      return [
        { pointer: memoryCore.origin, problem: "unreachable", fix: "start memory-core or unset CAIRN_URL; pointers were not checked" },
      ];
    }
    if (status === 401 || status === 403) {
      return [{ pointer: memoryCore.origin, problem: "unauthorized", fix: "set CAIRN_TOKEN to a token of this workspace" }];
    }
    if (status === 410) {
      findings.push({ pointer: check.pointer, problem: "forgotten", fix: "remove the pointer: its memory was forgotten" });
    } else if (status === 200 && body.superseded_by) {
      findings.push({
        pointer: check.pointer,
        problem: "superseded",
        fix: `point to ${body.superseded_by} instead${body.superseded_reason ? ` (${body.superseded_reason})` : ""}`,
      });
    } else if (status === 200 && body.superseded_reason) {
      findings.push({ pointer: check.pointer, problem: "superseded", fix: `remove or rewrite the lesson (${body.superseded_reason})` });
    }
    if (status === 200 && body.outdated && !body.superseded_reason) {
      const latest = body.corrections?.filter((c) => c.kind === "outdated").at(-1);
      findings.push({
        pointer: check.pointer,
        problem: "outdated",
        fix: `re-check the lesson against the live repository, then rewrite or remove it${latest ? ` (${latest.reason})` : ""}`,
      });
    }
    if (status === 404) {
      findings.push({
        pointer: check.pointer,
        problem: "missing",
        fix: "remove the pointer, or replace it with the id that holds the lesson now (query_raw_memories finds it)",
      });
    }
  }
  return findings;
}
