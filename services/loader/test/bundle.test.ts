import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain ES module of the bin, without types
import { freshBundle } from "../bin/entry.mjs";

const fresh = freshBundle as (dist: string) => string | undefined;
const BUNDLE_SCRIPT = fileURLToPath(new URL("../scripts/bundle.mjs", import.meta.url));
const SOURCE_CLI = fileURLToPath(new URL("../src/cli.ts", import.meta.url));

function node(args: string[], stdin = ""): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = execFile(process.execPath, args, (error, stdout, stderr) =>
      done({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin!.on("error", () => {});
    child.stdin!.end(stdin);
  });
}

/** Runs the CLI's `main` from a module (the bundle, or the sources through tsx) as the bin does, in a child process. */
const runMain = (module: string, args: string[], tsx: boolean) =>
  node([
    ...(tsx ? ["--import", "tsx"] : []),
    "--input-type=module",
    "-e",
    `const { main } = await import(${JSON.stringify(module)});
     const io = { stdout: process.stdout, stderr: process.stderr, cwd: process.cwd(), env: {}, stdin: async () => "" };
     process.exitCode = await main(${JSON.stringify(args)}, io);`,
  ]);

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "cairn-bundle-"));
});
afterAll(() => rm(scratch, { recursive: true, force: true }));

describe("the loader's bundle", () => {
  it("is built from the sources with the list of them, and answers as the sources do", async () => {
    const dist = join(scratch, "built");
    const built = await node([BUNDLE_SCRIPT, dist]);
    expect(built).toMatchObject({ code: 0, stderr: "" });
    const inputs = JSON.parse(await readFile(join(dist, "inputs.json"), "utf8")) as string[];
    expect(inputs.map((input) => resolve(dist, input))).toContain(SOURCE_CLI);
    expect(fresh(dist)).toBe(join(dist, "cli.mjs"));
    for (const args of [["--help"], ["--hook", "nonsense"], ["--budget-bytes", "x"]]) {
      const [bundled, sources] = await Promise.all([runMain(join(dist, "cli.mjs"), args, false), runMain(SOURCE_CLI, args, true)]);
      expect([args, bundled]).toEqual([args, sources]);
    }
    // --help says something: the comparison above is not of two empty answers.
    expect((await runMain(join(dist, "cli.mjs"), ["--help"], false)).stdout).toContain("cairn-load");
  });

  it("runs only while it is newer than every source it was built from", async () => {
    const dist = join(scratch, "made");
    await node([BUNDLE_SCRIPT, dist]).then((r) => expect(r.code).toBe(0));
    const source = join(scratch, "source.ts");
    await writeFile(source, "export {};\n");
    await writeFile(join(dist, "inputs.json"), JSON.stringify(["../source.ts"]));
    const bundle = join(dist, "cli.mjs");
    const builtAt = (await stat(bundle)).mtime;
    const at = (seconds: number) => new Date(builtAt.getTime() + seconds * 1000);

    await utimes(source, at(-60), at(-60));
    expect(fresh(dist)).toBe(bundle);
    // A source edited (or checked out) after the bundle was built: the sources run.
    await utimes(source, at(60), at(60));
    expect(fresh(dist)).toBeUndefined();
    await utimes(source, at(-60), at(-60));
    expect(fresh(dist)).toBe(bundle);
    // A source gone, no list, an empty list, no bundle: the sources run.
    await writeFile(join(dist, "inputs.json"), JSON.stringify(["../gone.ts"]));
    expect(fresh(dist)).toBeUndefined();
    await writeFile(join(dist, "inputs.json"), "[]");
    expect(fresh(dist)).toBeUndefined();
    await rm(join(dist, "inputs.json"));
    expect(fresh(dist)).toBeUndefined();
    expect(fresh(join(scratch, "never-built"))).toBeUndefined();
  });
});
