import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { AdminClient, ChromaClient, type Collection } from "chromadb";
import { startEmbeddedChroma } from "../services/memory-core/src/embedded/chroma-server.js";

/**
 * How often Chroma refuses a change to a collection ("database is locked") while other writes commit, and how
 * many tries a change takes: what memory-core's count of tries for a collection's write-back interval
 * (`SET_WRITE_BACK_ATTEMPTS` in store/chroma-store.ts) rests on. Over a fresh embedded Chroma, `--writers` loops
 * add records of 8 to collections of another database the whole time, while `--changes` changes of each kind are
 * made one after another to one collection: its configuration (the write-back interval), its metadata (what a
 * re-embedding's swap marks), and its name and metadata together (the swap itself). Then the configuration
 * changes again, each tried until Chroma takes it, waiting `--pause` ms times the tries so far between tries, as
 * memory-core does. A kind Chroma never refuses here needs no tries of its own.
 *
 *   npm run bench -- chroma-changes [--changes 100] [--writers 4] [--pause 50] [--json]
 */
export async function benchChromaChanges(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      changes: { type: "string", default: "100" },
      writers: { type: "string", default: "4" },
      pause: { type: "string", default: "50" },
      json: { type: "boolean", default: false },
    },
  });
  const changes = Number(values.changes);
  const writers = Number(values.writers);
  const pause = Number(values.pause);
  if (!Number.isInteger(changes) || changes < 1) throw new Error("--changes is a whole number, at least 1");
  if (!Number.isInteger(writers) || writers < 0 || writers > 64) throw new Error("--writers is a whole number from 0 to 64");
  if (!Number.isInteger(pause) || pause < 0 || pause > 10_000) throw new Error("--pause is a whole number of ms up to 10000");
  const dir = await mkdtemp(join(tmpdir(), "cairn-bench-chroma-changes-"));
  const chroma = await startEmbeddedChroma({ path: join(dir, "chroma"), logFile: join(dir, "chroma.log") });
  const connection = { host: chroma.url.hostname, port: Number(chroma.url.port), ssl: false };
  let writing = true;
  let adds = 0;
  const loops: Array<Promise<void>> = [];
  try {
    const admin = new AdminClient(connection);
    for (const name of ["writes", "changes"]) await admin.createDatabase({ name, tenant: "default_tenant" });
    const client = (database: string) => new ChromaClient({ ...connection, tenant: "default_tenant", database });
    const open = (database: string, name: string) =>
      client(database).getOrCreateCollection({ name, embeddingFunction: null } as never) as Promise<Collection>;
    for (let w = 0; w < writers; w++) {
      const collection = await open("writes", `writes-${w}`);
      loops.push(
        (async () => {
          for (let n = 0; writing; n++) {
            const ids = Array.from({ length: 8 }, (_, k) => `${w}-${n}-${k}`);
            await collection.add({ ids, embeddings: ids.map((_, k) => [1, k / 8, 0.5]) });
            adds += 1;
          }
        })(),
      );
    }
    const target = await open("changes", "target");
    const kinds: Record<string, (i: number) => Promise<void>> = {
      configuration: (i) => target.modify({ configuration: { hnsw: { sync_threshold: i % 2 ? 100 : 1000 } } }),
      metadata: (i) => target.modify({ metadata: { change: i } }),
      "name and metadata": (i) => target.modify({ name: `target-${i % 2}`, metadata: { change: i } }),
    };
    const refused: Record<string, number> = {};
    for (const [kind, change] of Object.entries(kinds)) {
      refused[kind] = 0;
      for (let i = 0; i < changes; i++) {
        try {
          await change(i);
        } catch (error) {
          if (!String(error).includes("database is locked")) throw error;
          refused[kind]! += 1;
        }
      }
    }
    /** Changes by the tries they took. */
    const tries: Record<number, number> = {};
    for (let i = 0; i < changes; i++) {
      for (let attempt = 1; ; attempt++) {
        try {
          await kinds.configuration!(i);
          tries[attempt] = (tries[attempt] ?? 0) + 1;
          break;
        } catch (error) {
          if (!String(error).includes("database is locked") || attempt >= 100) throw error;
          await new Promise((resolve) => setTimeout(resolve, pause * attempt));
        }
      }
    }
    writing = false;
    await Promise.all(loops);
    const share = (kind: string) => Math.round((1000 * refused[kind]!) / changes) / 10;
    const most = Math.max(...Object.keys(tries).map(Number));
    if (!values.json) {
      console.log(`${writers} writers added ${adds} times of 8 records while ${changes} changes of each kind were made`);
      for (const kind of Object.keys(kinds)) console.log(`  ${kind}: ${refused[kind]} refused (${share(kind)}%)`);
      console.log(
        `configuration changes tried again after ${pause} ms × tries so far, by tries taken: ${JSON.stringify(tries)} (most ${most})`,
      );
    }
    console.log(
      JSON.stringify({
        writers,
        changes,
        adds,
        refused_configuration_pct: share("configuration"),
        refused_metadata_pct: share("metadata"),
        refused_name_and_metadata_pct: share("name and metadata"),
        pause_ms: pause,
        tries,
        most_tries: most,
      }),
    );
  } finally {
    writing = false;
    await Promise.allSettled(loops);
    await chroma.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
