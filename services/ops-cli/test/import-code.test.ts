import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  http,
  makeToken,
  mcpClient,
  startCairn,
  uniqueWorkspace,
  type TestCairn,
  type TestToken,
} from "../../memory-core/test/support/harness.js";
import { planGitImport } from "../src/import/git-history.js";
import { gitIn } from "./support/git.js";
import { cairnCli } from "./support/run-cli.js";

/**
 * Imported history cites its files: `cairn import git` as a child process over a real git repository, each
 * memory's `code` read back over REST, and `query_raw_memories` asked by path over REST and MCP.
 */

const REMOTE_PASSWORD = "s3cr3t-Pa55word-77";
/** A key in a file's name: the name is cited, the key is not. */
const KEY_IN_NAME = "sk-proj-Qw3rTy7uIo9pAs2dFg5hJk8lZx1cVb4nM6";

let dir: string;
let cairn: TestCairn;
let repo: string;
let hashes: Hashes;
const ws = uniqueWorkspace("code");
const dev = makeToken(ws, "dev");
const oldWs = uniqueWorkspace("code-old");
const oldDev = makeToken(oldWs, "dev");

type Hashes = Record<"auth" | "rename" | "readme" | "wide" | "retry" | "revert" | "fix", string>;

interface Citation {
  repository?: string;
  branch?: string;
  commit?: string;
  paths: Array<{ path: string; lines?: string; symbol?: string }>;
}
interface Memory {
  id: string;
  kind: string;
  refs: string[];
  tags: string[];
  response: string;
  code?: Citation;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cairn-import-code-"));
  cairn = await startCairn([dev, oldDev]);
  ({ repo, hashes } = await buildRepository());
});
afterAll(async () => {
  await cairn?.close();
  await rm(dir, { recursive: true, force: true });
});

/** A repository whose commits touch known files: two files, a rename, an unrelated file, 100 files at once, a revert, a fix. */
async function buildRepository(): Promise<{ repo: string; hashes: Hashes }> {
  const repo = join(dir, "api-checkout");
  await mkdir(repo, { recursive: true });
  let clock = Date.parse("2026-11-02T09:00:00Z");
  const git = gitIn(repo, dir, () => new Date((clock += 60_000)).toISOString());
  const write = async (files: Record<string, string>) => {
    for (const [file, text] of Object.entries(files)) {
      await mkdir(dirname(join(repo, file)), { recursive: true });
      await writeFile(join(repo, file), text);
    }
  };
  const commit = (message: string) => {
    git("add", "-A");
    git("commit", "-q", "-m", message);
    return git("rev-parse", "HEAD");
  };
  git("init", "-q", "-b", "main");
  // A remote with credentials in its URL: the citation names the repository by the URL's path alone.
  git("remote", "add", "origin", `https://deploy:${REMOTE_PASSWORD}@git.example.com/acme/api.git`);
  const hashes = {} as Hashes;
  await write({ "src/auth/refresh.ts": "export const refresh = 1;\n", "src/auth/session.ts": "export const session = 'cookie';\n" });
  hashes.auth = commit("Refresh tokens before they expire");
  git("mv", "src/auth/session.ts", "src/auth/sessions.ts");
  hashes.rename = commit("Name the sessions module after what it holds, which fixes a confusing name");
  await write({ "README.md": "# api\n", [`deploy/OPENAI_API_KEY=${KEY_IN_NAME}.env`]: "\n" });
  hashes.readme = commit("Say what the api is");
  const wide: Record<string, string> = {};
  for (let i = 0; i < 50; i++) wide[`pkg/a/f${i}.js`] = `module.exports = ${i};\n`;
  for (let i = 0; i < 40; i++) wide[`pkg/b/g${i}.js`] = `module.exports = ${i};\n`;
  for (let i = 0; i < 10; i++) wide[`docs/page${i}.md`] = `# page ${i}\n`;
  await write(wide);
  hashes.wide = commit("fix: vendor the payment packages and their pages");
  await write({ "src/auth/refresh.ts": "export const refresh = 2;\nexport const retries = 3;\n" });
  hashes.retry = commit("Retry the token refresh three times");
  git("revert", "--no-edit", hashes.retry);
  hashes.revert = git("rev-parse", "HEAD");
  await write({ "src/auth/refresh.ts": "export const refresh = 3;\n" });
  hashes.fix = commit(`fix: refresh one minute earlier (a regression from ${hashes.auth.slice(0, 9)})`);
  return { repo, hashes };
}

const common = (token: TestToken) => ["--url", cairn.url.toString(), "--token", token.token];

/** Every memory the token's agent holds, by commit (each memory's first ref), each read whole through get_memory. */
async function byCommit(token: TestToken): Promise<Map<string, Memory>> {
  const recent = await http(cairn.url, "GET", "/v1/memories/recent?limit=100", { token: token.token });
  expect(recent.status).toBe(200);
  const out = new Map<string, Memory>();
  for (const turn of recent.body.turns as Array<{ id: string }>) {
    const memory = await http(cairn.url, "GET", `/v1/memories/${turn.id}`, { token: token.token });
    expect(memory.status).toBe(200);
    out.set((memory.body as Memory).refs[0]!, memory.body as Memory);
  }
  return out;
}

/** The commits whose memories `query_raw_memories` answers for these paths, in the order it answers them. */
async function commitsCiting(token: TestToken, body: Record<string, unknown>): Promise<string[]> {
  const res = await http(cairn.url, "POST", "/v1/memories/query", { token: token.token, body: { limit: 20, detail: "full", ...body } });
  expect(res.status).toBe(200);
  return (res.body.hits as Array<{ memory: Memory }>).map((h) => h.memory.refs[0]!);
}

describe("cairn import git cites the files each commit touched", () => {
  it("stores repository, branch, commit and the touched paths on each memory, read back over REST", async () => {
    const run = await cairnCli(["import", "git", "--repo", repo, ...common(dev)]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("7 commits, 7 stored, 0 already there; 1 reverts, 1 reverted commits marked outdated");
    const memories = await byCommit(dev);
    expect(memories.size).toBe(7);

    const auth = memories.get(hashes.auth)!;
    expect(auth.code).toEqual({
      repository: "acme/api",
      branch: "main",
      commit: hashes.auth,
      paths: [{ path: "src/auth/refresh.ts" }, { path: "src/auth/session.ts" }],
    });
    // The remote's credentials and host are in no memory.
    const everything = JSON.stringify([...memories.values()]);
    expect(everything).not.toContain(REMOTE_PASSWORD);
    expect(everything).not.toContain("git.example.com");
    expect(everything).toContain("acme/api");

    // A rename cites the new path; the summary still says where it came from.
    const rename = memories.get(hashes.rename)!;
    expect(rename.code?.paths).toEqual([{ path: "src/auth/sessions.ts" }]);
    expect(rename.response).toContain("src/auth/sessions.ts (renamed from src/auth/session.ts)");
    expect(memories.get(hashes.readme)!.code?.paths).toEqual([{ path: "README.md" }, { path: "deploy/OPENAI_API_KEY=[redacted].env" }]);
    expect(everything).not.toContain(KEY_IN_NAME.slice(0, 12));

    // The revert and the fix cite the file they touched, like any commit.
    for (const hash of [hashes.retry, hashes.revert, hashes.fix]) {
      expect({ hash, paths: memories.get(hash)!.code?.paths }).toEqual({ hash, paths: [{ path: "src/auth/refresh.ts" }] });
      expect(memories.get(hash)!.code?.commit).toBe(hash);
    }
    expect(memories.get(hashes.revert)!.tags).toContain("revert");
    expect(memories.get(hashes.fix)!.tags).toContain("fix");
    // What the edit hook reads before an edit: a revert is an approach tried and dropped, a fix what went wrong;
    // any other commit is a plain turn, and so is a fix only in passing (not how its subject begins) or sweeping
    // over 100 files.
    const kinds = [hashes.revert, hashes.fix, hashes.retry, hashes.auth, hashes.rename, hashes.wide].map((h) => memories.get(h)!.kind);
    expect(kinds).toEqual(["attempt", "lesson", "turn", "turn", "turn", "turn"]);
  });

  it("cites at most 64 paths: beyond, the folders holding the most of the files, files elsewhere by name", async () => {
    const wide = (await byCommit(dev)).get(hashes.wide)!;
    expect(wide.response).toContain("100 files changed");
    const paths = wide.code!.paths.map((p) => p.path);
    // 100 files: pkg/a/ (50 files) is named as a folder, which is enough to fit; pkg/b/ (40) and docs/ (10) keep their files.
    expect(paths).toHaveLength(51);
    expect(paths).toContain("pkg/a/");
    expect(paths.filter((p) => p.startsWith("pkg/a/"))).toEqual(["pkg/a/"]);
    expect(paths.filter((p) => p.startsWith("pkg/b/"))).toHaveLength(40);
    expect(paths).toContain("pkg/b/g7.js");
    expect(paths.filter((p) => p.startsWith("docs/"))).toHaveLength(10);
    expect(paths).toEqual([...paths].sort());
  });

  it("asked by path, query_raw_memories answers the commits that touched the file and not the others (REST and MCP)", async () => {
    const refresh = await commitsCiting(dev, { paths: ["src/auth/refresh.ts"] });
    // The first commit, the revert and the fix touched it: answered, newest first.
    expect(refresh).toEqual(expect.arrayContaining([hashes.auth, hashes.revert, hashes.fix]));
    expect(refresh.indexOf(hashes.fix)).toBeLessThan(refresh.indexOf(hashes.auth));
    // The same history holds commits that did not touch it: not answered.
    expect(refresh).not.toContain(hashes.readme);
    expect(refresh).not.toContain(hashes.rename);
    expect(refresh).not.toContain(hashes.wide);

    const readme = await commitsCiting(dev, { paths: ["README.md"] });
    expect(readme).toEqual([hashes.readme]);

    // A folder: every commit under it, and none elsewhere.
    const auth = await commitsCiting(dev, { paths: ["src/auth/"] });
    expect(auth).toEqual(expect.arrayContaining([hashes.auth, hashes.rename, hashes.revert, hashes.fix]));
    expect(auth).not.toContain(hashes.readme);
    expect(auth).not.toContain(hashes.wide);
    // The commit that cites pkg/a/ as a folder is found by it; and by pkg/b/'s files, which it names one by one.
    expect(await commitsCiting(dev, { paths: ["pkg/a/"] })).toEqual([hashes.wide]);
    expect(await commitsCiting(dev, { paths: ["pkg/b/g7.js"] })).toEqual([hashes.wide]);
    expect(await commitsCiting(dev, { paths: ["pkg/c/"] })).toEqual([]);

    // With words too: among the memories citing the file, ranked as a query ranks.
    const words = await commitsCiting(dev, { paths: ["src/auth/refresh.ts"], query: "refresh one minute earlier regression" });
    expect(words[0]).toBe(hashes.fix);
    expect(words).not.toContain(hashes.readme);

    const client = await mcpClient(cairn.url, dev.token);
    try {
      const answer = await client.callTool({ name: "query_raw_memories", arguments: { paths: ["README.md"], detail: "full" } });
      expect(answer.isError).toBeFalsy();
      const hits = (answer.structuredContent as { hits: Array<{ memory: Memory }> }).hits;
      expect(hits.map((h) => h.memory.refs[0])).toEqual([hashes.readme]);
    } finally {
      await client.close();
    }
  });

  it("replays on a second run: the same memories with the same citations, nothing stored twice", async () => {
    const before = await byCommit(dev);
    const again = await cairnCli(["import", "git", "--repo", repo, "--branch", "main", ...common(dev)]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("7 commits, 0 stored, 7 already there");
    const after = await byCommit(dev);
    expect([...after.values()].map((m) => m.id).sort()).toEqual([...before.values()].map((m) => m.id).sort());
    expect(after.get(hashes.auth)!.code).toEqual(before.get(hashes.auth)!.code);
  });

  it("over history an importer without citations stored, stores nothing twice: those memories are left as they were and counted", async () => {
    // What an importer that sent no `code` stored: the same requests, keys included, without it.
    const plan = await planGitImport(repo, {});
    for (const { request } of plan.commits.slice(0, 3)) {
      const { code, ...older } = request;
      expect(code).toBeDefined();
      const stored = await http(cairn.url, "POST", "/v1/memories", { token: oldDev.token, body: older });
      expect(stored.status).toBe(201);
    }
    const run = await cairnCli(["import", "git", "--repo", repo, ...common(oldDev)]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("7 commits, 4 stored, 0 already there, 3 stored before with other content (left as they were)");
    const memories = await byCommit(oldDev);
    expect(memories.size).toBe(7);
    expect(memories.get(hashes.auth)!.code).toBeUndefined();
    expect(memories.get(hashes.wide)!.code?.commit).toBe(hashes.wide);
    // Found by path all the same: its refs name the files it touched.
    const refresh = await commitsCiting(oldDev, { paths: ["src/auth/refresh.ts"] });
    expect(refresh).toEqual(expect.arrayContaining([hashes.auth, hashes.fix]));
    expect(refresh).not.toContain(hashes.readme);
  });

  it("names a repository without a remote by its folder, and a branch imported by name; a commit imported by hash names no branch", async () => {
    const plain = join(dir, "ledger");
    await mkdir(plain, { recursive: true });
    const git = gitIn(plain, dir);
    git("init", "-q", "-b", "trunk");
    await writeFile(join(plain, "book.ts"), "export const book = [];\n");
    git("add", "-A");
    git("commit", "-q", "-m", "Start the ledger");
    git("checkout", "-q", "-b", "feature/fx");
    await writeFile(join(plain, "fx.ts"), "export const fx = 1;\n");
    git("add", "-A");
    git("commit", "-q", "-m", "Convert currencies");
    const tip = git("rev-parse", "HEAD");
    git("checkout", "-q", "trunk");

    const onBranch = await planGitImport(plain, { branch: "feature/fx" });
    expect(onBranch.commits.map((c) => c.request.code)).toEqual([
      { repository: "ledger", branch: "feature/fx", commit: onBranch.commits[0]!.hash, paths: [{ path: "book.ts" }] },
      { repository: "ledger", branch: "feature/fx", commit: tip, paths: [{ path: "fx.ts" }] },
    ]);
    const onHead = await planGitImport(plain, {});
    expect(onHead.commits.map((c) => c.request.code?.branch)).toEqual(["trunk"]);
    const byHash = await planGitImport(plain, { branch: tip });
    expect(byHash.commits.map((c) => c.request.code?.branch)).toEqual([undefined, undefined]);
    expect(byHash.commits.map((c) => c.request.code?.commit)).toEqual([onBranch.commits[0]!.hash, tip]);
  });
});
