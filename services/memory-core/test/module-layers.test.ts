import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * memory-core's modules in layers: each imports only from layers below its own (or its own folder), so that
 * dependencies point one way and no two modules need each other. The storage rooms (store/, records/, ledger/)
 * are the only modules that touch Chroma's records, apart from the composition roots that open it.
 */

const SRC = join(import.meta.dirname, "..", "src");

/** Lowest first. A folder is one entry; a file at the top of src/ is named with its extension. */
const LAYERS: readonly (readonly string[])[] = [
  ["text.ts"],
  ["errors.ts", "logger.ts", "worker-thread.ts"],
  ["input-depth.ts", "config.ts", "net", "auth", "shutdown.ts"],
  ["store", "embeddings"],
  ["records"],
  ["ledger"],
  ["storage.ts"],
  ["lexical"],
  ["retrieval", "metrics.ts"],
  // Peers: neither imports the other.
  ["domain", "admin"],
  ["services.ts"],
  ["operations"],
  ["mcp"],
  ["http"],
  ["embedded", "memory-watch.ts"],
  ["runtime.ts"],
  ["start-errors.ts"],
  ["stack.ts", "stdio.ts"],
  ["banner.ts"],
  ["index.ts"],
];

/** The storage rooms, and the composition roots that open Chroma for them. */
const STORE_USERS = new Set(["store", "records", "ledger", "storage.ts", "runtime.ts"]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|mjs)$/.test(entry.name) ? [relative(SRC, path)] : [];
  });
}

/** Each module's relative imports, as paths under src/ (TypeScript's own scanner reads them, type-only ones too). */
function importGraph(root: string, files: readonly string[]): Map<string, string[]> {
  return new Map(
    files.map((file) => {
      const found = ts.preProcessFile(readFileSync(join(root, file), "utf8"), true, true).importedFiles;
      const local = found.filter((f) => f.fileName.startsWith("."));
      return [file, local.map((f) => normalize(join(dirname(file), f.fileName)).replace(/\.js$/, ".ts"))];
    }),
  );
}

const unitOf = (file: string) => (file.includes("/") ? file.slice(0, file.indexOf("/")) : file);

function layerOf(file: string): number {
  const unit = unitOf(file);
  const layer = LAYERS.findIndex((units) => units.includes(unit));
  if (layer < 0) throw new Error(`${file} is in no layer: add its folder or file to LAYERS`);
  return layer;
}

/** Imports that do not point down: into a layer at or above the importer's, other than its own folder. */
function upwardImports(graph: Map<string, string[]>): string[] {
  const found: string[] = [];
  for (const [file, imports] of graph) {
    for (const target of imports) {
      if (unitOf(target) === unitOf(file) && file.includes("/")) continue;
      if (layerOf(target) >= layerOf(file)) found.push(`${file} -> ${target}`);
    }
  }
  return found.sort();
}

/** Groups of modules that import each other, directly or around a circle (Tarjan's strongly connected components). */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      for (let w = stack.pop()!; ; w = stack.pop()!) {
        onStack.delete(w);
        group.push(w);
        if (w === v) break;
      }
      if (group.length > 1) found.push(group.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

const reachesStore = (graph: Map<string, string[]>) =>
  [...graph]
    .filter(([file, imports]) => !STORE_USERS.has(unitOf(file)) && imports.some((t) => unitOf(t) === "store"))
    .map(([file]) => file)
    .sort();

describe("memory-core's module layers", () => {
  const graph = importGraph(SRC, sourceFiles(SRC));

  it("reads every module's imports", () => {
    expect(graph.size).toBeGreaterThan(80);
    expect(graph.get("runtime.ts")).toContain("storage.ts");
    expect(graph.get("services.ts")).toContain("domain/query-service.ts");
  });

  it("every import points to a lower layer or within its own folder, and no modules import each other", () => {
    expect(upwardImports(graph)).toEqual([]);
    expect(circles(graph)).toEqual([]);
  });

  it("finds an upward import and a circle when there is one", () => {
    // The same checks over a graph with a back-arrow (ledger importing domain) and a circle.
    const planted = new Map(graph);
    planted.set("ledger/sequences.ts", [...(graph.get("ledger/sequences.ts") ?? []), "domain/recency.ts"]);
    expect(upwardImports(planted)).toEqual(["ledger/sequences.ts -> domain/recency.ts"]);
    expect(circles(planted).some((group) => group.includes("ledger/sequences.ts") && group.includes("domain/recency.ts"))).toBe(true);
  });

  it("only the storage rooms and the composition roots reach the store", () => {
    expect(reachesStore(graph)).toEqual([]);
    // The same check finds a service that imports the store, over the same graph with one planted.
    const planted = new Map(graph);
    planted.set("domain/query-service.ts", [...(graph.get("domain/query-service.ts") ?? []), "store/chroma-store.ts"]);
    expect(reachesStore(planted)).toEqual(["domain/query-service.ts"]);
    expect(graph.get("ledger/ledger.ts")).toContain("store/chroma-store.ts");
  });
});
