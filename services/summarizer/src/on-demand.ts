import { notFound, unavailable, type SessionSummarizer, type SummarizeSessionResult } from "@cairn/memory-core";
import { sleep } from "./model/backoff.js";
import type { SummaryWriter } from "./writer.js";

/** How long a request waits for another worker that holds the session's lease. */
const WAIT_FOR_LEASE_MS = 60_000;
const WAIT_STEP_MS = 250;

/** `summarize_session`: the session summarized now, through the same writer and lease as the worker. */
export class OnDemandSummarizer implements SessionSummarizer {
  constructor(
    private readonly writer: SummaryWriter,
    private readonly signal: AbortSignal,
  ) {}

  async summarizeSession(workspace: string, sessionId: string, options: { force: boolean }): Promise<SummarizeSessionResult> {
    const deadline = Date.now() + WAIT_FOR_LEASE_MS;
    let force = options.force;
    const missing = () =>
      notFound(
        `No session ${sessionId} in this workspace.`,
        "Check the session_id; query_recent_turns lists the sessions of recent turns.",
      );
    // A refused request leaves nothing behind: not even the lease it would have taken.
    if (!(await this.writer.hasSession(workspace, sessionId))) throw missing();
    for (;;) {
      const outcome = await this.writer.write(workspace, sessionId, { force, signal: this.signal });
      if (outcome.kind === "written") return { summary: outcome.summary, generated: true };
      if (outcome.kind === "current") return { summary: outcome.summary, generated: false };
      if (outcome.kind === "empty") throw missing();
      if (Date.now() >= deadline || this.signal.aborted) {
        throw unavailable(`Session ${sessionId} is being summarized by another worker right now.`);
      }
      // Another worker is writing it: once it is done, its summary is current and is what we answer.
      force = false;
      await sleep(WAIT_STEP_MS, this.signal);
    }
  }
}
