import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dockerfileViolations } from "./support/dockerfile-rules.js";
import { isExcluded, parseDockerignore } from "./support/dockerignore.js";

const run = promisify(execFile);
const repo = fileURLToPath(new URL("../../", import.meta.url));
const dockerfile = readFileSync(join(repo, "Dockerfile"), "utf8");
const ignoreRules = parseDockerignore(readFileSync(join(repo, ".dockerignore"), "utf8"));

/** The repository's files as `docker build .` sees them, before .dockerignore. */
function repoFiles(dir = "", into: string[] = []): string[] {
  for (const entry of readdirSync(join(repo, dir), { withFileTypes: true })) {
    const path = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.name === "node_modules" || entry.name === ".git") continue;
    if (entry.isDirectory()) repoFiles(path, into);
    else into.push(path);
  }
  return into;
}

describe("the Dockerfile", () => {
  it("keeps the image rules", () => {
    expect(dockerfileViolations(dockerfile)).toEqual([]);
    expect(dockerfile).toMatch(/^USER cairn:cairn$/m);
  });

  it("and the rules catch each way of breaking them", () => {
    const cases: Array<[string, string]> = [
      [dockerfile.replace(/^USER .*$/m, ""), "runs as root (no USER in the final stage)"],
      [dockerfile.replace(/^USER .*$/m, "USER root"), "runs as root (USER root)"],
      [dockerfile.replace(/^HEALTHCHECK[^\n]*\\\n[^\n]*$/m, ""), "no HEALTHCHECK in the final stage"],
      [dockerfile.replace(/--omit=dev /, ""), "no `npm ci --omit=dev`"],
      [
        dockerfile.replace(/^ARG NODE_IMAGE=.*$/m, "ARG NODE_IMAGE=node:latest"),
        "stage image node:latest is not a pinned Node 24 slim image",
      ],
      [
        dockerfile.replace(/^ARG NODE_IMAGE=.*$/m, "ARG NODE_IMAGE=node:24.22.3-bookworm"),
        "stage image node:24.22.3-bookworm is not a pinned Node 24 slim image",
      ],
      [
        dockerfile.replace(/^ARG NODE_IMAGE=.*$/m, "ARG NODE_IMAGE=node:20.20.2-bookworm-slim"),
        "stage image node:20.20.2-bookworm-slim is not a pinned Node 24 slim image",
      ],
      [`${dockerfile}\nENV CAIRN_TOKEN=abc\n`, "a secret in the image: ENV CAIRN_TOKEN=abc"],
      [`${dockerfile}\nCOPY secrets/tokens.yaml /app/\n`, "copies a secret into the image: COPY secrets/tokens.yaml /app/"],
    ];
    for (const [text, violation] of cases) {
      expect(text).not.toBe(dockerfile);
      expect(dockerfileViolations(text)).toContain(violation);
    }
  });
});

describe("the build context after .dockerignore", () => {
  const sent = repoFiles().filter((path) => !isExcluded(ignoreRules, path));

  it("holds what the services run", () => {
    for (const needed of [
      "package.json",
      "package-lock.json",
      "openapi/package.json",
      "openapi/memory-core.yaml",
      "openapi/src/index.ts",
      "services/memory-core/package.json",
      "services/server/src/main.ts",
      "services/console/src/build.ts",
      "services/console/src/ui/main.tsx",
      "services/memory-core/src/config.ts",
      "deploy/healthcheck.mjs",
    ]) {
      expect(sent).toContain(needed);
    }
    for (const workspace of readdirSync(join(repo, "services"))) {
      expect(sent).toContain(`services/${workspace}/package.json`);
    }
  });

  it("leaves out tests, benchmarks, docs, local data and secrets", () => {
    const devOrSecret = /(^|\/)(test|bench|docs|testing|secrets|\.cairn|\.test-data|coverage)\/|\.test\.ts$|(^|\/)\.env|\.env$|\.md$/;
    expect(sent.filter((path) => devOrSecret.test(path))).toEqual([]);
    // The same rules over paths that may not exist in this checkout, both ways.
    for (const path of [
      "secrets/tokens.yaml",
      ".env",
      "profiles/local-model.env",
      ".cairn/chroma/chroma.sqlite3",
      "node_modules/chromadb/package.json",
      "services/summarizer/node_modules/x/index.js",
      "services/summarizer/test/worker.test.ts",
      "deploy/test/compose.test.ts",
      "docs/deployment.md",
      ".git/config",
    ]) {
      expect(isExcluded(ignoreRules, path), path).toBe(true);
    }
    for (const path of ["services/summarizer/src/main.ts", "services/summarizer/package.json", "services/loader/bin/cairn-load.mjs"]) {
      expect(isExcluded(ignoreRules, path), path).toBe(false);
    }
  });
});

describe("deploy/healthcheck.mjs", () => {
  const script = join(repo, "deploy/healthcheck.mjs");
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      res.statusCode = req.url === "/readyz" ? 200 : 503;
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const exitCode = async (...args: string[]) => {
    try {
      await run(process.execPath, [script, ...args]);
      return 0;
    } catch (error) {
      return (error as { code: number }).code;
    }
  };

  it("is healthy when the URL answers 2xx and unhealthy when it answers 503 or nothing", async () => {
    expect(await exitCode("http", `${base}/readyz`)).toBe(0);
    expect(await exitCode("http", `${base}/not-ready`)).toBe(1);
    const gone = createServer();
    await new Promise<void>((resolve) => gone.listen(0, "127.0.0.1", resolve));
    const closed = `http://127.0.0.1:${(gone.address() as AddressInfo).port}/readyz`;
    await new Promise<void>((resolve) => gone.close(() => resolve()));
    expect(await exitCode("http", closed)).toBe(1);
  });

  it("finds a running process by its command line, and not one that is not running", async () => {
    // This test's own worker runs under vitest.
    expect(await exitCode("process", "vitest")).toBe(0);
    expect(await exitCode("process", "no-such-cairn-process-4e1c")).toBe(1);
    expect(await exitCode("nonsense")).toBe(2);
  });
});
