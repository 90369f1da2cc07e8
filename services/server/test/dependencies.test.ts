import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const repo = fileURLToPath(new URL("../../../", import.meta.url));
const services = readdirSync(join(repo, "services"));
const manifest = (dir: string) =>
  JSON.parse(readFileSync(join(repo, dir, "package.json"), "utf8")) as { name: string; dependencies?: Record<string, string> };
const packages = new Map(
  [...services.map((s) => `services/${s}`), "openapi"].map((dir) => [
    manifest(dir).name,
    { dir, deps: Object.keys(manifest(dir).dependencies ?? {}).filter((d) => d.startsWith("@cairn/")) },
  ]),
);

function sources(dir: string): string[] {
  return readdirSync(join(repo, dir), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => join(repo, dir, f));
}

describe("dependencies between the workspace's packages", () => {
  it("point one way: no package reaches itself through its dependencies", () => {
    const reaches = (from: string, seen = new Set<string>()): Set<string> => {
      for (const dep of packages.get(from)?.deps ?? []) if (!seen.has(dep)) reaches(dep, seen.add(dep));
      return seen;
    };
    const cycles = [...packages.keys()].filter((name) => reaches(name).has(name));
    expect(cycles).toEqual([]);
    // The composition root depends on both services; the summarizer on memory-core, never the other way.
    expect(packages.get("@cairn/server")!.deps.sort()).toEqual(["@cairn/console", "@cairn/memory-core", "@cairn/summarizer"]);
    expect(packages.get("@cairn/summarizer")!.deps).toContain("@cairn/memory-core");
    expect(reaches("@cairn/memory-core").has("@cairn/summarizer")).toBe(false);
  });

  it("are declared: a package's sources import only the workspace packages its manifest names, never another's files", () => {
    const undeclared: string[] = [];
    for (const [name, { dir, deps }] of packages) {
      for (const file of sources(join(dir, "src"))) {
        const text = readFileSync(file, "utf8");
        for (const [, spec] of text.matchAll(/from "([^"]+)"/g)) {
          const where = relative(repo, file);
          const pkg = spec!.split("/").slice(0, 2).join("/");
          if (spec!.startsWith("@cairn/") && !deps.includes(pkg) && pkg !== name) undeclared.push(`${where} imports ${spec}`);
          if (spec!.startsWith(".") && !join(file, "..", spec!).startsWith(join(repo, dir)))
            undeclared.push(`${where} reaches into ${spec}`);
        }
      }
    }
    expect(undeclared).toEqual([]);
    expect(packages.size).toBeGreaterThanOrEqual(6);
  });

  it("keep the store inside memory-core: the summarizer is handed a port, not Chroma", async () => {
    const core = await import("@cairn/memory-core");
    for (const internal of [
      "ChromaStore",
      "Sequences",
      "RECENCY_VECTOR",
      "feedStream",
      "openStorage",
      "composeServices",
      "TurnRepository",
      "WriteService",
    ])
      expect(core).not.toHaveProperty(internal);
    expect(core).toHaveProperty("openSummarizerPort");
    expect(core).toHaveProperty("startStack");
    for (const file of sources("services/summarizer/src"))
      expect(readFileSync(file, "utf8")).not.toMatch(/ChromaStore|RecordCollection|chromadb/);
  });
});
