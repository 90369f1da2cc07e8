#!/usr/bin/env node
// Bundles the loader's CLI into one ES module (dist/cli.mjs), so that a hook starts without compiling TypeScript:
// a harness runs a hook as a new process at every prompt, edit or stop, and compiling the loader's sources through
// tsx costs most of that process's time. Run by `npm ci` / `npm install` (the root package's `prepare`). The bin
// (bin/cairn-load.mjs) runs the bundle only while it is newer than every source it was built from
// (dist/inputs.json), and the sources through tsx otherwise, so an edit is never run stale. A failed bundle is not
// an error: the bin runs the sources.
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const loader = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const out = resolve(process.argv[2] ?? resolve(loader, "dist"));

try {
  const { build } = await import("esbuild");
  await mkdir(out, { recursive: true });
  const result = await build({
    absWorkingDir: loader,
    entryPoints: [resolve(loader, "src/cli.ts")],
    outfile: resolve(out, "cli.mjs"),
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    metafile: true,
    logLevel: "warning",
    // A bundled CommonJS dependency may call require(): give the module one.
    banner: { js: "import { createRequire as __cairnRequire } from 'node:module'; const require = __cairnRequire(import.meta.url);" },
  });
  // The sources the bundle holds, but installed packages (they change only with an install, which bundles again).
  const inputs = Object.keys(result.metafile.inputs)
    .filter((input) => !input.split(/[\\/]/).includes("node_modules"))
    .map((input) => relative(out, resolve(loader, input)));
  await writeFile(resolve(out, "inputs.json"), `${JSON.stringify(inputs)}\n`);
} catch (error) {
  process.stderr.write(
    `cairn-load: not bundled (${error instanceof Error ? error.message : String(error)}); hooks run the sources through tsx\n`,
  );
}
