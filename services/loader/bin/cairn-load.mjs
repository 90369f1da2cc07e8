#!/usr/bin/env node
// The CLI is TypeScript, run through tsx like the rest of Cairn: no build step between an edit and a run. A hook
// starts a process each time a harness calls it, so the bundle `npm ci` builds (scripts/bundle.mjs) runs instead
// while it is as new as the sources (entry.mjs).
import { fileURLToPath } from "node:url";
import { freshBundle } from "./entry.mjs";

const bundle = freshBundle(fileURLToPath(new URL("../dist", import.meta.url)));
let main;
if (bundle) {
  ({ main } = await import(bundle));
} else {
  const { register } = await import("tsx/esm/api");
  register();
  ({ main } = await import("../src/cli.ts"));
}
process.exitCode = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  cwd: process.cwd(),
  env: process.env,
  stdin: async () => {
    // A person running a hook by hand at a terminal has no JSON to give: do not wait for one.
    if (process.stdin.isTTY) return "";
    const chunks = [];
    for await (const chunk of process.stdin) chunks.push(chunk);
    return Buffer.concat(chunks).toString("utf8");
  },
});
