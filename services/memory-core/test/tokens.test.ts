import { describe, expect, it } from "vitest";
import { parseTokensFile, sha256, TokenRegistry, TokensFileError } from "../src/auth/tokens.js";

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
