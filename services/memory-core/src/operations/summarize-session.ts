import { summarizerUnavailable } from "../errors.js";
import type { OperationRegistry } from "./registry.js";

export function registerSummarizeSession(registry: OperationRegistry): void {
  registry.register("summarize_session", async (input, { principal, summarizer }) => {
    if (!summarizer) throw summarizerUnavailable();
    const result = await summarizer.summarizeSession(principal.workspace, String(input.session_id), { force: input.force === true });
    return { status: 200, body: result };
  });
}
