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
  },
});
