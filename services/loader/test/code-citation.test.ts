import { loadContract } from "@cairn/openapi";
import { describe, expect, it } from "vitest";
import { CONTRACT_PATTERNS } from "@cairn/openapi/code-paths";
import { CITED_PATHS, citationOf, citedPaths, folderName, repositoryName } from "../src/transcript/code-citation.js";

describe("a repository's name from its remote", () => {
  it("is the URL's path, without scheme, credentials, host, port or .git", () => {
    const cases: Array<[string, string]> = [
      ["https://github.com/acme/api.git", "acme/api"],
      ["https://github.com/acme/api", "acme/api"],
      ["https://deploy:s3cr3t@git.example.com/acme/api.git", "acme/api"],
      // A password holding `/` and `@`: the credentials run to the last `@`.
      ["https://deploy:pa/ss@word@git.example.com/acme/api.git", "acme/api"],
      ["https://ghp_R8kW3nQ7vX2mL9pZ4tY6bC1dF5gH0jK8sA3e@github.com/acme/api.git", "acme/api"],
      ["git@github.com:acme/api.git", "acme/api"],
      ["ssh://git@git.example.com:2222/acme/api.git", "acme/api"],
      ["https://gitlab.example.com/group/sub/api.git/", "group/sub/api"],
      ["https://git.example.com/acme/api.git?ref=x#y", "acme/api"],
      ["/srv/git/api.git", "api"],
      ["../api", "api"],
      ["file:///srv/git/ledger.git", "ledger"],
      ["C:\\repos\\api", "api"],
      ["https://git.example.com/acme/my api (old).git", "acme/my-api--old-"],
    ];
    for (const [url, name] of cases) expect({ url, name: repositoryName(url) }).toEqual({ url, name });
    for (const url of cases.map(([u]) => u)) {
      const name = repositoryName(url)!;
      expect({ url, leaks: /s3cr3t|word@|ghp_|example\.com|github\.com|:\/\//.test(name) }).toEqual({ url, leaks: false });
    }
  });

  it("is undefined when nothing is left, and a folder's name otherwise", () => {
    expect(repositoryName("https://git.example.com/")).toBeUndefined();
    expect(repositoryName("https://git.example.com/acme/api")).toBe("acme/api");
    expect(folderName("/home/dev/shop/")).toBe("shop");
    expect(folderName("/")).toBeUndefined();
  });
});

describe("the contract's patterns the importer checks names against", () => {
  it("are the contract's own, and the number of paths its limit", async () => {
    const schema = (await loadContract()).operation("add_memory").inputSchema as {
      properties: {
        code: {
          properties: Record<string, { pattern?: string; maxItems?: number; items?: { properties: { path: { pattern: string } } } }>;
        };
      };
    };
    const code = schema.properties.code.properties;
    expect(CONTRACT_PATTERNS).toEqual({
      repository: code.repository!.pattern,
      branch: code.branch!.pattern,
      path: code.paths!.items!.properties.path.pattern,
      commit: code.commit!.pattern,
    });
    expect(CITED_PATHS).toBe(code.paths!.maxItems);
  });
});

describe("the paths one commit cites", () => {
  const files = (folder: string, n: number) => Array.from({ length: n }, (_, i) => `${folder}f${String(i).padStart(3, "0")}.ts`);

  it("are the files themselves up to the limit, in name order", () => {
    const sixtyFour = files("src/", CITED_PATHS).reverse();
    expect(citedPaths(sixtyFour)).toEqual([...sixtyFour].sort());
    expect(citedPaths(["b.ts", "a.ts", "a.ts"])).toEqual(["a.ts", "b.ts"]);
  });

  it("beyond it, name the deepest folders first, those holding the most files first, and stop once they fit", () => {
    // 65 files: the deepest folder holding two (app/ui/forms/) is enough; the rest keep their names.
    const deep = [...files("app/", 62), "app/ui/forms/a.ts", "app/ui/forms/b.ts", "app/ui/c.ts"];
    const cited = citedPaths(deep);
    expect(cited).toHaveLength(64);
    expect(cited).toContain("app/ui/forms/");
    expect(cited).toContain("app/ui/c.ts");
    expect(cited).toContain("app/f000.ts");
    expect(cited.some((p) => p.startsWith("app/ui/forms/") && p !== "app/ui/forms/")).toBe(false);

    // One level: 30 + 20 + 20 files in three folders and 10 at the top: the largest folder alone makes it fit.
    const level = [...files("a/", 30), ...files("b/", 20), ...files("c/", 20), ...files("", 10)];
    const byLevel = citedPaths(level);
    expect(byLevel).toHaveLength(51);
    expect(byLevel.filter((p) => p.startsWith("a/"))).toEqual(["a/"]);
    expect(byLevel.filter((p) => p.startsWith("b/"))).toHaveLength(20);
  });

  it("keep the entries holding the most files when even the top level is too many", () => {
    const top = [...files("", 70), ...files("big/", 5)];
    const cited = citedPaths(top);
    expect(cited).toHaveLength(CITED_PATHS);
    expect(cited).toContain("big/");
    expect(cited).toContain("f000.ts");
    expect(cited).not.toContain("f069.ts");
  });

  it("leave out what the contract would refuse and redact the rest; no path left means no citation", () => {
    const citation = citationOf({
      repository: "acme/api",
      branch: "main",
      commit: "0123456789abcdef0123456789abcdef01234567",
      paths: [
        "ok.ts",
        "bad\\name.ts",
        "tab\there.ts",
        "x".repeat(600),
        "config/OPENAI_API_KEY=sk-proj-Qw3rTy7uIo9pAs2dFg5hJk8lZx1cVb4nM6.env",
      ],
    });
    expect(citation?.paths.map((p) => p.path)).toEqual(["config/OPENAI_API_KEY=[redacted].env", "ok.ts"]);
    expect(citation).toMatchObject({ repository: "acme/api", branch: "main", commit: "0123456789abcdef0123456789abcdef01234567" });
    expect(citationOf({ repository: "acme/api", paths: ["bad\\name.ts"] })).toBeUndefined();
    // A name that redaction changes into one the contract refuses is left out; the paths stay.
    const redactedBranch = citationOf({ branch: "deploy/AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI", paths: ["ok.ts"] });
    expect(redactedBranch).toEqual({ paths: [{ path: "ok.ts" }] });
  });
});
