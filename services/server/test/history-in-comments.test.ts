import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * Comments say what is and why, in the present: how the code got here is in git, and what was measured is in
 * docs/benchmarks.md, whose sections a comment names by their titles. A benchmarks session number or a commit
 * hash in a comment is a story (or a pointer that goes stale), so no tracked source file's comments carry one,
 * and the operator docs carry no session numbers either (docs/benchmarks.md keeps its own history).
 */
const repo = fileURLToPath(new URL("../../../", import.meta.url));

/** "session" or "sessions" and a number, on one line or broken over two by a comment's leader. */
const SESSION = /\bsessions?(?:[ \t]*\n[ \t]*(?:\*|\/\/|#)?)?[ \t]+\d+\b/gi;
/** 7 to 40 hex digits, with a digit and a letter, standing alone (not part of a UUID, a t_... id or a word). */
const COMMIT = /(?<![-\w])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![-\w])/g;

const SCRIPT = /\.(ts|tsx|mts|cts|js|mjs|cjs)$/;
const HASH_COMMENTS = /(\.(ya?ml|sh|env)|(^|\/)(Dockerfile|Caddyfile|\.dockerignore|\.gitignore|\.prettierignore|\.ci\/run))$/;
const CSS = /\.css$/;

interface Comment {
  line: number;
  text: string;
}

/**
 * The comments of a script, as TypeScript reads them: every comment is trivia around some token, leading it or
 * trailing the one before it on the same line.
 */
function scriptComments(path: string, text: string): Comment[] {
  const kind = path.endsWith("x") ? ts.ScriptKind.TSX : path.match(/\.(m|c)?js$/) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, kind);
  const seen = new Set<number>();
  const comments: Comment[] = [];
  const take = (ranges: ts.CommentRange[] | undefined) => {
    for (const range of ranges ?? []) {
      if (seen.has(range.pos)) continue;
      seen.add(range.pos);
      comments.push({ line: source.getLineAndCharacterOfPosition(range.pos).line + 1, text: text.slice(range.pos, range.end) });
    }
  };
  const visit = (node: ts.Node) => {
    take(ts.getLeadingCommentRanges(text, node.pos));
    take(ts.getTrailingCommentRanges(text, node.end));
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  return comments.sort((a, b) => a.line - b.line);
}

/** `#` comments: a `#` at the start of a line or after a space, outside quotes, to the end of the line. */
function hashComments(text: string): Comment[] {
  return text.split("\n").flatMap((line, i) => {
    let quote: string | undefined;
    for (let at = 0; at < line.length; at++) {
      const c = line[at]!;
      if (quote) quote = c === quote ? undefined : quote;
      else if (c === '"' || c === "'") quote = c;
      else if (c === "#" && (at === 0 || /\s/.test(line[at - 1]!))) return [{ line: i + 1, text: line.slice(at) }];
    }
    return [];
  });
}

function cssComments(text: string): Comment[] {
  return [...text.matchAll(/\/\*[\s\S]*?\*\//g)].map((m) => ({ line: text.slice(0, m.index).split("\n").length, text: m[0] }));
}

function commentsOf(path: string, text: string): Comment[] | undefined {
  if (SCRIPT.test(path)) return scriptComments(path, text);
  if (HASH_COMMENTS.test(path)) return hashComments(text);
  if (CSS.test(path)) return cssComments(text);
  return undefined;
}

/** Each comment that tells a benchmarks session or names a commit, as `path:line: what`. */
function historyIn(path: string, text: string): string[] {
  return (commentsOf(path, text) ?? []).flatMap((c) =>
    [...c.text.matchAll(SESSION), ...c.text.matchAll(COMMIT)]
      .sort((a, b) => a.index - b.index)
      .map((m) => `${path}:${c.line + c.text.slice(0, m.index).split("\n").length - 1}: ${m[0]}`),
  );
}

const tracked = execFileSync("git", ["ls-files", "-z"], { cwd: repo, encoding: "utf8" }).split("\0").filter(Boolean);

describe("history in comments", () => {
  it("finds a session number and a commit hash in comments of each kind of file, and not in code or strings", () => {
    const script = [
      "// Measured in session 14 (docs/benchmarks.md).",
      'const label = "session 14 at 1cd95cb";',
      "/**",
      " * Stored by versions from `61ca9e6`.",
      " */",
      "const re = /session 3 # 1cd95cb/;",
      "const t = `${label} session 5`; // read as of 683afe0",
      "// t_f1cef6892836cbc45b93fd335fe0d5ae, session 7d3c1f4e-2b6a-4c1d-9e8f-0a1b2c3d4e5f, 1,000,000 turns",
      "/* measured in a session",
      " * 13 */",
    ].join("\n");
    expect(historyIn("x.ts", script)).toEqual(["x.ts:1: session 14", "x.ts:4: 61ca9e6", "x.ts:7: 683afe0", "x.ts:9: session\n * 13"]);
    expect(historyIn("x.tsx", "const a = <b>{/* sessions 9 */}</b>;")).toEqual(["x.tsx:1: sessions 9"]);
    expect(historyIn("c.yml", 'a: "b # 1cd95cb"\nkey: 1 # as in Session 12\n# at 0d6c8b0\nurl: x.md#cafe123')).toEqual([
      "c.yml:2: Session 12",
      "c.yml:3: 0d6c8b0",
    ]);
    expect(historyIn("Dockerfile", "# session 2\nRUN echo session 2")).toEqual(["Dockerfile:1: session 2"]);
    expect(historyIn("a.css", "a { color: red; } /* since abc1234 */")).toEqual(["a.css:1: abc1234"]);
    // Files without comments of a known kind are not read as comments.
    expect(commentsOf("notes.md", "session 14")).toBeUndefined();
  });

  it("is told by no comment of any tracked source file", () => {
    const sources = tracked.filter((f) => SCRIPT.test(f) || HASH_COMMENTS.test(f) || CSS.test(f));
    // The scan reaches every package, its tests and the benchmarks.
    for (const dir of ["services/memory-core/src/", "services/memory-core/test/", "bench/", "deploy/", "openapi/src/", "testing/"])
      expect(sources.some((f) => f.startsWith(dir))).toBe(true);
    expect(sources).toEqual(expect.arrayContaining(["Dockerfile", "docker-compose.yml", "deploy/Caddyfile", ".ci/run"]));
    const comments = sources.reduce((n, f) => n + commentsOf(f, readFileSync(join(repo, f), "utf8"))!.length, 0);
    expect(comments).toBeGreaterThan(1000);
    expect(sources.flatMap((f) => historyIn(f, readFileSync(join(repo, f), "utf8")))).toEqual([]);
  });

  it("nor by the operator docs: no session numbers outside docs/benchmarks.md", () => {
    const docs = tracked.filter((f) => f.endsWith(".md") && f !== "docs/benchmarks.md");
    expect(docs).toEqual(expect.arrayContaining(["README.md", "docs/deployment.md", "runbooks/operators/scale-out.md"]));
    const found = docs.flatMap((f) => {
      const text = readFileSync(join(repo, f), "utf8");
      return [...text.matchAll(SESSION)].map((m) => `${f}:${text.slice(0, m.index).split("\n").length}: ${m[0]}`);
    });
    expect(found).toEqual([]);
    // The same check finds one where there is one.
    expect([...readFileSync(join(repo, "docs/benchmarks.md"), "utf8").matchAll(SESSION)].length).toBeGreaterThan(0);
  });
});
