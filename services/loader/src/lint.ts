import { pathOfRef } from "@cairn/openapi/code-paths";
import { movedSince } from "./git.js";

/**
 * Pointers in an index into the archive — memory ids (`t_` and 32 hex digits) and `session:<id>` — checked
 * against a running memory-core, and, in a git repository, whether the code a memory cites moved since it was
 * written. What it finds comes with the fix.
 */

export interface LintFinding {
  pointer: string;
  problem: "missing" | "forgotten" | "superseded" | "outdated" | "moved" | "unauthorized" | "unreachable";
  fix: string;
}

/** How long one pointer's check may take, over HTTP and in git each. */
const CHECK_TIMEOUT_MS = 5000;
const MEMORY_ID = /\bt_[0-9a-f]{32}\b/g;
const SESSION = /\bsession:([A-Za-z0-9][A-Za-z0-9._:@/-]*)/g;

export function findPointers(index: string): { memories: string[]; sessions: string[] } {
  const memories = [...new Set(index.match(MEMORY_ID) ?? [])];
  const sessions = [...new Set([...index.matchAll(SESSION)].map((m) => m[1]!.replace(/[.:/]+$/, "")))];
  return { memories, sessions };
}

/**
 * `repository` (the git repository's top folder), when given, adds the `moved` finding: commits on HEAD touched
 * a path the memory cites (`code.paths`, or a `refs` entry shaped as a path) after its `code.commit`, else after
 * its time. It is advice (re-read the lesson against the code), not a broken pointer.
 */
export async function lintPointers(index: string, memoryCore: URL, token: string | undefined, repository?: string): Promise<LintFinding[]> {
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
      code?: { commit?: string; paths?: Array<{ path: string }> };
      refs?: string[];
      occurred_at?: string;
      recorded_at?: string;
    } = {};
    try {
      const response = await fetch(new URL(check.path, memoryCore), {
        headers: token ? { authorization: `Bearer ${token}` } : {},
        signal: AbortSignal.timeout(CHECK_TIMEOUT_MS),
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
    if (status === 200 && repository && !body.superseded_by && !body.superseded_reason) {
      const moved = await codeMoved(body, repository);
      if (moved) findings.push({ pointer: check.pointer, problem: "moved", fix: moved });
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

/** What to say when commits touched the code a memory cites since it was written; undefined when none did. */
async function codeMoved(
  memory: { code?: { commit?: string; paths?: Array<{ path: string }> }; refs?: string[]; occurred_at?: string; recorded_at?: string },
  repository: string,
): Promise<string | undefined> {
  const paths = [...new Set([...(memory.code?.paths ?? []).map((p) => p.path), ...(memory.refs ?? []).flatMap((r) => pathOfRef(r) ?? [])])];
  if (paths.length === 0) return undefined;
  try {
    const moved = await movedSince(
      paths,
      { commit: memory.code?.commit, time: memory.occurred_at ?? memory.recorded_at },
      { cwd: repository, deadline: Date.now() + CHECK_TIMEOUT_MS },
    );
    if (!moved) return undefined;
    const shown = paths.length <= 3 ? paths.join(", ") : `${paths.slice(0, 3).join(", ")} and ${paths.length - 3} more`;
    return (
      `the code it cites moved since: ${moved.commits} commit${moved.commits === 1 ? "" : "s"} touched ${shown}, newest ${moved.newest}; ` +
      "re-read the lesson against the code, then keep, rewrite or remove it"
    );
  } catch {
    // git missing or too slow: the pointer was checked against Cairn all the same.
    return undefined;
  }
}
