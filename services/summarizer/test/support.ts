import { silentLogger, TokenRegistry, type Runtime } from "@cairn/memory-core";
import { loadSummarizerConfig } from "../src/config.js";
import { createSummarizer, type Summarizer } from "../src/index.js";
import { summarizerPort } from "../../memory-core/src/domain/summarizer-port.js";
import { http } from "../../memory-core/test/support/harness.js";

export {
  chromaUrl,
  http,
  makeToken,
  mcpClient,
  sharedEmbedder,
  startCairn,
  turn,
  uniqueWorkspace,
} from "../../memory-core/test/support/harness.js";
export { expectContractOutput } from "../../memory-core/test/support/contract-schemas.js";

type RuntimeLike = Pick<Runtime, "storage" | "services" | "embedder">;

/**
 * A summarizer over a running memory-core's parts that sees only `workspace` (other tests' sessions are not
 * its business), configured through the real config loader. The background loop is off unless the env turns
 * it on: tests drive rounds with runOnce().
 */
export function summarizerOver(
  runtime: RuntimeLike,
  workspace: string,
  env: Record<string, string> = {},
  options: { now?: () => number } = {},
): Summarizer {
  const config = loadSummarizerConfig({ CAIRN_SUMMARY_WORKER: "off", CAIRN_SUMMARY_IDLE_MS: "0", CAIRN_CHAT_BACKOFF_MS: "10", ...env });
  const tokens = new TokenRegistry([{ tokenSha256: "unused", workspace, agent: "summarizer-test", role: "agent" }]);
  return createSummarizer(
    config,
    summarizerPort({ storage: runtime.storage, writes: runtime.services.writes, embedder: runtime.embedder, tokens }),
    silentLogger,
    options,
  );
}

/** Env for a chat model served by the stub. */
export const chatEnv = (baseUrl: string, extra: Record<string, string> = {}) => ({
  CAIRN_CHAT_BASE_URL: baseUrl,
  CAIRN_CHAT_MODEL: "stub-chat",
  CAIRN_CHAT_TIMEOUT_MS: "5000",
  ...extra,
});

/** Writes the turns through the real REST API, in order; returns their ids. */
export async function addTurns(url: URL, token: string, bodies: object[]): Promise<string[]> {
  const ids: string[] = [];
  for (const body of bodies) {
    const res = await http(url, "POST", "/v1/memories", { token, body });
    if (res.status !== 201) throw new Error(`add_memory answered ${res.status}: ${res.text}`);
    ids.push(res.body.id);
  }
  return ids;
}

/** The session's stored summary, through get_session. */
export async function storedSummary(url: URL, token: string, sessionId: string) {
  const res = await http(url, "GET", `/v1/sessions/${encodeURIComponent(sessionId)}?limit=1`, { token });
  if (res.status !== 200) throw new Error(`get_session answered ${res.status}: ${res.text}`);
  return res.body.summary as null | Record<string, any>;
}
