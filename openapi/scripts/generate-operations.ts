import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { loadContract } from "../src/contract.js";
import { renderOperationTables } from "../src/operation-tables.js";

/** Writes src/generated/operations.ts; the contract test renders it again and compares. */
const target = fileURLToPath(new URL("../src/generated/operations.ts", import.meta.url));
await writeFile(target, renderOperationTables(await loadContract()));
process.stdout.write("wrote src/generated/operations.ts\n");
