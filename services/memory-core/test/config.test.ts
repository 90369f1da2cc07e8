import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";

const fail = (env: Record<string, string>) => {
  try {
    loadConfig(env, "/srv/cairn");
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
  throw new Error("expected a ConfigError");
};

describe("configuration", () => {
  it("defaults to the embedded, local, loopback setup", () => {
    const config = loadConfig({}, "/srv/cairn");
    expect(config).toMatchObject({
      port: 8790,
      host: "127.0.0.1",
      dataDir: "/srv/cairn/.cairn",
      tokensFile: "/srv/cairn/.cairn/tokens.yaml",
      tokensFileGiven: false,
      chromaUrl: undefined,
      embeddings: { kind: "local" },
      maintenance: false,
    });
  });

  it("reads every setting", () => {
    const config = loadConfig(
      {
        CAIRN_PORT: "9000",
        CAIRN_HOST: "0.0.0.0",
        CAIRN_DATA_DIR: "/data",
        CAIRN_TOKENS_FILE: "/run/secrets/tokens.yaml",
        CAIRN_CHROMA_URL: "http://chroma:8000",
        CAIRN_EMBEDDINGS: "openai",
        CAIRN_EMBEDDINGS_BASE_URL: "http://models:11434/v1",
        CAIRN_EMBEDDINGS_MODEL: "nomic-embed-text",
        CAIRN_TOKEN: "cairn_x",
        CAIRN_MAINTENANCE: "1",
      },
      "/srv",
    );
    expect(config.port).toBe(9000);
    expect(config.tokensFileGiven).toBe(true);
    expect(config.chromaUrl?.host).toBe("chroma:8000");
    expect(config.embeddings).toEqual({ kind: "openai", baseUrl: "http://models:11434/v1", model: "nomic-embed-text", apiKey: undefined });
    expect(config.stdioToken).toBe("cairn_x");
    expect(config.maintenance).toBe(true);
  });

  it("names the variable of a wrong value in one line", () => {
    expect(fail({ CAIRN_PORT: "http" })).toBe('CAIRN_PORT: must be a port number from 0 to 65535, not "http"');
    expect(fail({ CAIRN_PORT: "70000" })).toMatch(/^CAIRN_PORT: /);
    expect(fail({ CAIRN_CHROMA_URL: "chroma:8000" })).toMatch(/^CAIRN_CHROMA_URL: must be an http\(s\) URL/);
    expect(fail({ CAIRN_CHROMA_URL: "ftp://chroma" })).toMatch(/^CAIRN_CHROMA_URL: /);
    expect(fail({ CAIRN_MAINTENANCE: "maybe" })).toBe('CAIRN_MAINTENANCE: must be 1 or 0 (true or false), not "maybe"');
    expect(fail({ CAIRN_EMBEDDINGS: "magic" })).toBe('CAIRN_EMBEDDINGS: must be local or openai, not "magic"');
    expect(fail({ CAIRN_EMBEDDINGS: "openai" })).toMatch(/^CAIRN_EMBEDDINGS_BASE_URL: is required/);
    expect(fail({ CAIRN_EMBEDDINGS: "openai", CAIRN_EMBEDDINGS_BASE_URL: "http://m/v1" })).toMatch(/^CAIRN_EMBEDDINGS_MODEL: is required/);
  });
});
