import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";

/**
 * A worker thread running the module `name` beside `base` (an `import.meta.url`): `name.ts` when run from
 * TypeScript sources (tsx, vitest), `name.js` when built. From sources the thread registers tsx's loader itself
 * before importing the module: a worker does not inherit the loader of the thread that starts it.
 */
export function spawnModuleWorker(base: string, name: string): Worker {
  const fromSource = base.endsWith(".ts");
  const entry = new URL(`./${name}.${fromSource ? "ts" : "js"}`, base);
  if (!fromSource) return new Worker(entry);
  const tsxApi = pathToFileURL(join(dirname(createRequire(base).resolve("tsx/package.json")), "dist/esm/api/index.mjs"));
  const boot = `const { register } = await import(${JSON.stringify(tsxApi.href)}); register(); await import(${JSON.stringify(entry.href)});`;
  return new Worker(new URL(`data:text/javascript,${encodeURIComponent(boot)}`));
}
