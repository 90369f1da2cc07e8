import { readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";

/**
 * The loader's bundle in `dist` (scripts/bundle.mjs) when it may run: present, with its list of sources, and newer
 * than each of them. Undefined otherwise (never bundled, a source edited or checked out since, a source gone): the
 * bin then runs the sources through tsx.
 */
export function freshBundle(dist) {
  try {
    const bundle = resolve(dist, "cli.mjs");
    const built = statSync(bundle).mtimeMs;
    const inputs = JSON.parse(readFileSync(resolve(dist, "inputs.json"), "utf8"));
    if (!Array.isArray(inputs) || inputs.length === 0) return undefined;
    for (const input of inputs) if (statSync(resolve(dist, input)).mtimeMs > built) return undefined;
    return bundle;
  } catch {
    return undefined;
  }
}
