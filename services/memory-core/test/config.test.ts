import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";

/** A cgroup filesystem holding `files` (path under the root → content). */
function cgroupRoot(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "cairn-cgroup-"));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

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
      indexDir: "/srv/cairn/.cairn/lexical",
    });
  });

  it("keeps lexical index snapshots under the data dir, elsewhere with CAIRN_INDEX_DIR, or nowhere with off", () => {
    expect(loadConfig({ CAIRN_DATA_DIR: "/var/cairn" }, "/srv").indexDir).toBe("/var/cairn/lexical");
    expect(loadConfig({ CAIRN_INDEX_DIR: "idx" }, "/srv").indexDir).toBe("/srv/idx");
    expect(loadConfig({ CAIRN_INDEX_DIR: "off" }, "/srv").indexDir).toBeUndefined();
  });

  it("bounds a review_matching call by CAIRN_REVIEW_PER_CALL, 1 to 1000, 200 unless set", () => {
    expect(loadConfig({}, "/srv").reviewPerCall).toBe(200);
    expect(loadConfig({ CAIRN_REVIEW_PER_CALL: "1" }, "/srv").reviewPerCall).toBe(1);
    expect(loadConfig({ CAIRN_REVIEW_PER_CALL: "1000" }, "/srv").reviewPerCall).toBe(1000);
    for (const value of ["0", "1001", "ten", "-5", "2.5"]) {
      expect(fail({ CAIRN_REVIEW_PER_CALL: value })).toBe(`CAIRN_REVIEW_PER_CALL: must be a whole number from 1 to 1000, not "${value}"`);
    }
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
    expect(fail({ CAIRN_MEMORY_LIMIT_MB: "1g" })).toBe('CAIRN_MEMORY_LIMIT_MB: must be a whole number of megabytes above 0, not "1g"');
    expect(fail({ CAIRN_MEMORY_LIMIT_MB: "0" })).toMatch(/^CAIRN_MEMORY_LIMIT_MB: /);
  });

  it("takes the HTTP server's connection limits from CAIRN_HTTP_*, else its defaults, and refuses incoherent ones", () => {
    expect(loadConfig({}, "/srv").http).toEqual({
      headersTimeoutMs: 20_000,
      requestTimeoutMs: 60_000,
      keepAliveTimeoutMs: 65_000,
      maxConnections: 1024,
    });
    expect(
      loadConfig(
        {
          CAIRN_HTTP_HEADERS_TIMEOUT_MS: "5000",
          CAIRN_HTTP_REQUEST_TIMEOUT_MS: "30000",
          CAIRN_HTTP_KEEP_ALIVE_TIMEOUT_MS: "75000",
          CAIRN_HTTP_MAX_CONNECTIONS: "64",
        },
        "/srv",
      ).http,
    ).toEqual({ headersTimeoutMs: 5000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 75_000, maxConnections: 64 });
    expect(fail({ CAIRN_HTTP_MAX_CONNECTIONS: "0" })).toMatch(/^CAIRN_HTTP_MAX_CONNECTIONS: must be a whole number from 1 to /);
    expect(fail({ CAIRN_HTTP_REQUEST_TIMEOUT_MS: "10s" })).toMatch(/^CAIRN_HTTP_REQUEST_TIMEOUT_MS: /);
    expect(fail({ CAIRN_HTTP_KEEP_ALIVE_TIMEOUT_MS: "9999999999" })).toMatch(/^CAIRN_HTTP_KEEP_ALIVE_TIMEOUT_MS: /);
    expect(fail({ CAIRN_HTTP_HEADERS_TIMEOUT_MS: "90000" })).toMatch(
      /^CAIRN_HTTP_HEADERS_TIMEOUT_MS: must not exceed CAIRN_HTTP_REQUEST_TIMEOUT_MS/,
    );
  });

  it("takes the memory limit from CAIRN_MEMORY_LIMIT_MB, else from the cgroup (v2, then v1), else none", () => {
    const v2 = cgroupRoot({ "memory.max": "1073741824\n" });
    const v1 = cgroupRoot({ "memory/memory.limit_in_bytes": "536870912\n" });
    expect(loadConfig({}, "/srv", v2).memoryLimit).toEqual({ bytes: 1024 ** 3, source: join(v2, "memory.max") });
    expect(loadConfig({}, "/srv", v1).memoryLimit).toEqual({ bytes: 512 * 1024 ** 2, source: join(v1, "memory/memory.limit_in_bytes") });
    expect(loadConfig({ CAIRN_MEMORY_LIMIT_MB: "1536" }, "/srv", v2).memoryLimit).toEqual({
      bytes: 1536 * 1024 ** 2,
      source: "CAIRN_MEMORY_LIMIT_MB",
    });
    // Unlimited cgroups, and none at all.
    expect(loadConfig({}, "/srv", cgroupRoot({ "memory.max": "max\n" })).memoryLimit).toBeUndefined();
    expect(loadConfig({}, "/srv", cgroupRoot({ "memory/memory.limit_in_bytes": "9223372036854771712\n" })).memoryLimit).toBeUndefined();
    expect(loadConfig({}, "/srv", cgroupRoot({})).memoryLimit).toBeUndefined();
  });
});
