import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * No source file of a service or of the contract package casts a value through `unknown` (or `any`): `x as unknown
 * as T` tells the compiler to stop checking, so a wrong type goes unnoticed until it fails at run time. A value
 * from outside is checked for its shape (a type guard), and a library whose types are wrong or missing is given
 * the right ones once, next to where it is used. Generated files and tests are not sources here.
 */
const repo = fileURLToPath(new URL("../../../", import.meta.url));

const SOURCE = /^(services\/[^/]+\/src|openapi\/src)\/.*\.(ts|tsx)$/;
const NOT_SOURCE = /(^|\/)generated\/|\.test\.tsx?$|\.d\.ts$/;

/** `T` of `x as T` or `<T>x`, and `x`, for either kind of assertion. */
function assertion(node: ts.Node): { type: ts.TypeNode; operand: ts.Expression } | undefined {
  if (ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) return { type: node.type, operand: node.expression };
  return undefined;
}

const throughType = (type: ts.TypeNode) => type.kind === ts.SyntaxKind.UnknownKeyword || type.kind === ts.SyntaxKind.AnyKeyword;

/** Each cast of a file whose operand is itself cast to `unknown` or `any`, as `path:line: text`; and how many casts it read. */
function castsThroughUnknown(path: string, text: string): { found: string[]; casts: number } {
  const kind = path.endsWith("x") ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, kind);
  const found: string[] = [];
  let casts = 0;
  const visit = (node: ts.Node) => {
    const outer = assertion(node);
    if (outer) {
      casts++;
      let operand: ts.Expression = outer.operand;
      while (ts.isParenthesizedExpression(operand)) operand = operand.expression;
      const inner = assertion(operand);
      if (inner && throughType(inner.type)) {
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        found.push(`${path}:${line}: ${node.getText(source).replace(/\s+/g, " ")}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { found, casts };
}

const tracked = execFileSync("git", ["ls-files", "-z"], { cwd: repo, encoding: "utf8" }).split("\0").filter(Boolean);

describe("casts through unknown", () => {
  it("are found in every spelling, and a single cast, a comment or a string is not one", () => {
    const planted = [
      "const a = value as unknown as Record<string, unknown>;",
      "const b = (value as unknown) as string[];",
      "const c = <Config>(<unknown>value);",
      "const d = value as any as number;",
      "const e = value as",
      "  unknown as Thing;",
      "const f = value as unknown;",
      "const g = value as string;",
      "// value as unknown as string",
      'const h = "value as unknown as string";',
    ].join("\n");
    expect(castsThroughUnknown("x.ts", planted)).toEqual({
      found: [
        "x.ts:1: value as unknown as Record<string, unknown>",
        "x.ts:2: (value as unknown) as string[]",
        "x.ts:3: <Config>(<unknown>value)",
        "x.ts:4: value as any as number",
        "x.ts:5: value as unknown as Thing",
      ],
      casts: 12,
    });
    expect(castsThroughUnknown("x.tsx", "const a = <b>{(x as unknown as B).c}</b>;").found).toEqual(["x.tsx:1: x as unknown as B"]);
  });

  it("are in no source file of a service or of the contract package", () => {
    const sources = tracked.filter((f) => SOURCE.test(f) && !NOT_SOURCE.test(f));
    // The scan reaches every service, the console's pages and the contract package, and leaves generated files out.
    for (const dir of [
      "services/memory-core/src/",
      "services/ops-cli/src/",
      "services/summarizer/src/",
      "services/console/src/ui/",
      "openapi/src/",
    ])
      expect(sources.some((f) => f.startsWith(dir))).toBe(true);
    expect(tracked.some((f) => f.startsWith("openapi/src/generated/"))).toBe(true);
    expect(sources.some((f) => f.includes("/generated/"))).toBe(false);
    const scanned = sources.map((f) => castsThroughUnknown(f, readFileSync(join(repo, f), "utf8")));
    // It reads the casts there are: plenty, all of them single.
    expect(scanned.reduce((n, s) => n + s.casts, 0)).toBeGreaterThan(100);
    expect(scanned.flatMap((s) => s.found)).toEqual([]);
  });
});
