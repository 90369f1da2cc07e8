import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { loadContract, renderReference } from "../src/index.js";

/**
 * Writes docs/contract.md from the contract. With `--check`, writes nothing and exits 1 when the committed
 * reference differs from a fresh render (the test suite makes the same check).
 */
const target = fileURLToPath(new URL("../../docs/contract.md", import.meta.url));
const rendered = renderReference(await loadContract());

if (process.argv.includes("--check")) {
  const committed = await readFile(target, "utf8").catch(() => "");
  if (committed !== rendered) {
    process.stderr.write("docs/contract.md is stale: run `npm run docs:contract`.\n");
    process.exit(1);
  }
  process.stdout.write("docs/contract.md is up to date.\n");
} else {
  await writeFile(target, rendered);
  process.stdout.write("wrote docs/contract.md\n");
}
