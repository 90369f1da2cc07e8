import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseTokensFile, sha256, TokenRegistry, TokensFileError } from "../src/auth/tokens.js";
import { watchTokensFile } from "../src/auth/tokens-reload.js";
import type { Logger } from "../src/logger.js";

const parseError = (text: string) => {
  try {
    parseTokensFile(text);
  } catch (error) {
    expect(error).toBeInstanceOf(TokensFileError);
    return (error as Error).message;
  }
  throw new Error("expected a TokensFileError");
};

describe("tokens file", () => {
  it("resolves clear and hashed tokens to their principals, and nothing else", () => {
    const clear = "cairn_clear-token-0123456789";
    const hashed = "cairn_hashed-token-0123456789";
    const registry = new TokenRegistry(
      parseTokensFile(`tokens:
  - token: ${clear}
    workspace: team-a
    agent: backend
  - token_sha256: ${sha256(hashed)}
    workspace: team-b
    agent: ops
    role: admin
`),
    );
    expect(registry.resolve(clear)).toEqual({ workspace: "team-a", agent: "backend", role: "agent" });
    expect(registry.resolve(hashed)).toEqual({ workspace: "team-b", agent: "ops", role: "admin" });
    expect(registry.resolve(sha256(hashed))).toBeUndefined();
    expect(registry.resolve("cairn_unknown-token-012345")).toBeUndefined();
    expect(registry.resolve(undefined)).toBeUndefined();
    expect(registry.workspaces()).toEqual(["team-a", "team-b"]);
  });

  it("names the entry of each problem and never echoes a token", () => {
    const secret = "cairn_secret-token-0123456789";
    expect(parseError("tokens: []")).toMatch(/non-empty list/);
    expect(parseError(": not yaml: [")).toMatch(/not valid YAML/);
    const badWorkspace = parseError(`tokens:\n  - token: ${secret}\n    workspace: Team A\n    agent: dev\n`);
    expect(badWorkspace).toMatch(/tokens\[0\]: workspace/);
    expect(badWorkspace).not.toContain(secret);
    expect(parseError(`tokens:\n  - token: short\n    workspace: team\n    agent: dev\n`)).toMatch(/at least 16/);
    expect(parseError(`tokens:\n  - token: ${secret}\n    workspace: team\n    agent: dev\n    role: root\n`)).toMatch(/role/);
    const twice = parseError(
      `tokens:\n  - token: ${secret}\n    workspace: team\n    agent: a\n  - token: ${secret}\n    workspace: team\n    agent: b\n`,
    );
    expect(twice).toMatch(/tokens\[1\] repeats a token/);
    expect(twice).not.toContain(secret);
  });
});

describe("tokens file reload", () => {
  const entry = (agent: string) => `  - token: cairn_${agent}-token-0123456789\n    workspace: team-a\n    agent: ${agent}\n`;
  const token = (agent: string) => `cairn_${agent}-token-0123456789`;

  async function watching(text: string) {
    const dir = await mkdtemp(join(tmpdir(), "cairn-tokens-reload-"));
    const file = join(dir, "tokens.yaml");
    await writeFile(file, text);
    const registry = new TokenRegistry(parseTokensFile(text));
    const errors: string[] = [];
    const infos: string[] = [];
    const log: Logger = { info: (m) => infos.push(m), warn() {}, error: (m) => errors.push(m) };
    // The timer is not relied on: each look is asked for by the test.
    const reload = watchTokensFile({ file, registry, log, openWorkspace: async () => {}, inForce: text, intervalMs: 3_600_000 });
    return { file, registry, errors, infos, reload };
  }

  it("a file caught half-written by an in-place editor is neither applied nor refused; the finished file is", async () => {
    const { file, registry, errors, infos, reload } = await watching(`tokens:\n${entry("first")}`);
    try {
      const finished = `tokens:\n${entry("later")}${entry("first")}`;
      // Cut after the first entry, the text parses: applied, it would revoke "first".
      await writeFile(file, `tokens:\n${entry("later")}`);
      await reload.check();
      expect(registry.resolve(token("first"))).toEqual({ workspace: "team-a", agent: "first", role: "agent" });
      expect(registry.resolve(token("later"))).toBeUndefined();
      // Cut inside an entry, the text does not parse.
      await writeFile(file, `tokens:\n${entry("later")}  - token: cairn_first-token-0123456789\n    works`);
      await reload.check();
      await writeFile(file, finished);
      await reload.check();
      await reload.check();
      expect(registry.resolve(token("first"))).toEqual({ workspace: "team-a", agent: "first", role: "agent" });
      expect(registry.resolve(token("later"))).toEqual({ workspace: "team-a", agent: "later", role: "agent" });
      expect(errors).toEqual([]);
      expect(infos).toEqual(["tokens file applied"]);
    } finally {
      reload.stop();
    }
  });

  it("a text that does not parse at two looks in a row is refused once, and the set in force stays", async () => {
    const { file, registry, errors, reload } = await watching(`tokens:\n${entry("first")}`);
    try {
      await writeFile(file, `tokens:\n${entry("later")}  - this: [is not yaml`);
      await reload.check();
      expect(errors).toEqual([]);
      await reload.check();
      await reload.check();
      expect(errors).toHaveLength(1);
      expect(errors[0]).toContain("not applied");
      expect(registry.resolve(token("first"))).toEqual({ workspace: "team-a", agent: "first", role: "agent" });
      expect(registry.resolve(token("later"))).toBeUndefined();
    } finally {
      reload.stop();
    }
  });
});
