import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["openapi/test/**/*.test.ts", "services/*/test/**/*.test.ts", "deploy/test/**/*.test.ts"],
    globalSetup: ["services/memory-core/test/support/global-setup.ts"],
    pool: "forks",
    // Two cores: more workers only contend for the CPU-bound embedder.
    maxWorkers: 2,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // A poll waits for what a page or a process shows once a write has gone through Chroma; Vitest's default second
    // was outlasted on a busy machine (the console's "mark outdated" in CI). Polls wait for a state, never for its absence.
    expect: { poll: { timeout: 15_000 } },
  },
});
