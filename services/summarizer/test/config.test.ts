import { ConfigError } from "@cairn/memory-core";
import { describe, expect, it } from "vitest";
import { loadStandaloneConfig, loadSummarizerConfig } from "../src/config.js";

const errorOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a ConfigError");
};

describe("summarizer configuration", () => {
  it("defaults to extractive summaries of sessions idle for 15 minutes", () => {
    expect(loadSummarizerConfig({})).toEqual({
      chat: undefined,
      idleMs: 900_000,
      pollMs: 30_000,
      concurrency: 2,
      leaseMs: 120_000,
      worker: true,
    });
    expect(
      loadSummarizerConfig({ CAIRN_CHAT_BASE_URL: "http://127.0.0.1:8080/v1", CAIRN_CHAT_MODEL: "qwen", CAIRN_SUMMARY_IDLE_MS: "60000" }),
    ).toMatchObject({
      idleMs: 60_000,
      chat: { baseUrl: "http://127.0.0.1:8080/v1", model: "qwen", apiKey: undefined, timeoutMs: 120_000, contextTokens: 8_192, retries: 2 },
    });
  });

  it("stops at a wrong value with one line naming the variable", () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ CAIRN_SUMMARY_IDLE_MS: "soon" }, /^CAIRN_SUMMARY_IDLE_MS: must be a whole number at least 0, not "soon"$/],
      [{ CAIRN_SUMMARY_CONCURRENCY: "0" }, /^CAIRN_SUMMARY_CONCURRENCY: must be a whole number from 1 to 64/],
      [{ CAIRN_SUMMARY_WORKER: "maybe" }, /^CAIRN_SUMMARY_WORKER: must be on or off/],
      [{ CAIRN_CHAT_MODEL: "qwen" }, /^CAIRN_CHAT_BASE_URL: is required when CAIRN_CHAT_MODEL is set/],
      [{ CAIRN_CHAT_BASE_URL: "http://x/v1" }, /^CAIRN_CHAT_MODEL: is required/],
      [{ CAIRN_CHAT_BASE_URL: "ftp://x", CAIRN_CHAT_MODEL: "m" }, /^CAIRN_CHAT_BASE_URL: must be an http\(s\) URL/],
      [{ CAIRN_CHAT_BASE_URL: "http://x/v1", CAIRN_CHAT_MODEL: "m", CAIRN_CHAT_TIMEOUT_MS: "-5" }, /^CAIRN_CHAT_TIMEOUT_MS: /],
    ];
    for (const [env, message] of cases) {
      const error = errorOf(() => loadSummarizerConfig(env));
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toContain("\n");
    }
  });

  it("needs an external Chroma to run on its own, and takes memory-core's settings for the rest", () => {
    expect((errorOf(() => loadStandaloneConfig({}, "/srv")) as Error).message).toMatch(
      /^CAIRN_CHROMA_URL: is required for the standalone summarizer/,
    );
    const config = loadStandaloneConfig({ CAIRN_CHROMA_URL: "http://chroma:8000", CAIRN_TOKENS_FILE: "tokens.yaml" }, "/srv");
    expect(config.core.chromaUrl.toString()).toBe("http://chroma:8000/");
    expect(config.core.tokensFile).toBe("/srv/tokens.yaml");
    expect(config.summarizer.worker).toBe(true);
  });
});
