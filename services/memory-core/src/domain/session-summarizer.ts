import type { SummarizeSessionResult } from "../records/types.js";

/**
 * The port through which `summarize_session` reaches a summarizer. memory-core only defines it; the
 * summarizer package implements it, and the composition root (main.ts, or a test) plugs it in. A server
 * started without one answers `summarizer_unavailable`.
 */
export interface SessionSummarizer {
  summarizeSession(workspace: string, sessionId: string, options: { force: boolean }): Promise<SummarizeSessionResult>;
}
