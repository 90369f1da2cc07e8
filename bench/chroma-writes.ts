import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { startEmbeddedChroma } from "../services/memory-core/src/embedded/chroma-server.js";
import { RECENCY_VECTOR } from "../services/memory-core/src/ledger/ledger.js";
import { silentLogger } from "../services/memory-core/src/logger.js";
import { buildTurnRecord } from "../services/memory-core/src/records/turn-record.js";
import { AdminClient, ChromaClient } from "chromadb";
import {
  ChromaStore,
  TURN_FILTER_KEYS,
  type LedgerCollectionName,
  type NewRecord,
} from "../services/memory-core/src/store/chroma-store.js";
import { packedLayout, packFields } from "../services/memory-core/src/store/metadata-layout.js";
import { summarize } from "./stats.js";

/**
 * What a write request costs Chroma, through memory-core's store: `add`s of ledger-shaped records (the constant
 * vector, fields in one key) of a few sizes, three `add`s sent at once to three ledger collections (what a write
 * batch sends for its agents' slots, feed entries and audit entries) against one `add` of the same records, and
 * `add`s of turns as memory-core stores them (512 dimensions, the metadata of a turn with tags, refs and a check:
 * the keys filters name on their own, the rest packed into one, the text under a key of its own) against every key
 * on its own with the text as Chroma's document (the flat layout) and packed with the text as the document. And
 * what a change to one ledger record per batch would cost: a bulk batch's ledger entries one record each against
 * its slots with the feed and audit entries as a few records holding many items; a record of 500 items written,
 * and written and read back.
 * Over a fresh embedded Chroma, each measured `--samples` times, one after another.
 *
 * Then a ledger collection as memory-core creates it against one with Chroma's defaults, grown side by side to
 * `--ledger-records` each by `add`s of 500 keyed-marker-shaped records that alternate between them: `now`, the
 * smallest graph and no document (store/chroma-store.ts); `before`, Chroma's default graph and an empty document.
 * The p50 of the `add`s in the second half of the growth, those that write the collection's index back (every
 * 1,000 records) and the others apart, and the time each took to grow.
 *
 *   npm run bench -- chroma-writes [--samples 100] [--ledger-records 100000] [--json]
 */
export async function benchChromaWrites(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      samples: { type: "string", default: "100" },
      "ledger-records": { type: "string", default: "100000" },
      json: { type: "boolean", default: false },
    },
  });
  const samples = Number(values.samples);
  if (!Number.isInteger(samples) || samples < 1) throw new Error("--samples is a whole number, at least 1");
  const ledgerGrowth = Number(values["ledger-records"]);
  if (!Number.isInteger(ledgerGrowth) || ledgerGrowth < 1000) throw new Error("--ledger-records is a whole number, at least 1000");
  const dir = await mkdtemp(join(tmpdir(), "cairn-bench-chroma-writes-"));
  const chroma = await startEmbeddedChroma({ path: join(dir, "chroma"), logFile: join(dir, "chroma.log") });
  const store = new ChromaStore(chroma.url, { model: "hash-512", dimension: 512 }, silentLogger);
  try {
    const workspace = "bench";
    const ledger = (name: LedgerCollectionName) => store.collection(workspace, name);
    const [slots, feed, audit] = await Promise.all([ledger("ledger-slots"), ledger("ledger-feed"), ledger("ledger-audit")]);
    const turns = await store.collection(workspace, "turns");
    let next = 0;
    const feedFields = (seq: number) => ({ record_id: `turn-${seq}`, op: "put", session_id: "session-1", write_id: crypto.randomUUID() });
    const ledgerRecords = (n: number): NewRecord[] =>
      Array.from({ length: n }, () => {
        const seq = next++;
        const fields = { ...feedFields(seq), stream: "@turns", seq, recorded_at: Date.now() };
        return { id: `bench:${seq}`, embedding: RECENCY_VECTOR, document: "", metadata: { fields: JSON.stringify(fields) } };
      });
    /** `slots` records holding `items` feed-shaped items each, as one slot of a batch's entries would. */
    const itemRecords = (slots: number, items: number): NewRecord[] =>
      Array.from({ length: slots }, () => {
        const seq = next++;
        const fields = {
          items: Array.from({ length: items }, (_, i) => feedFields(seq * 1000 + i)),
          stream: "@turns",
          seq,
          recorded_at: Date.now(),
        };
        return { id: `bench:${seq}`, embedding: RECENCY_VECTOR, document: "", metadata: { fields: JSON.stringify(fields) } };
      });
    // Flat turns go to the workspace's summaries collection: embedded like turns, its metadata kept key by key.
    const flatTurns = await store.collection(workspace, "summaries");
    const text = "We tried the retry loop with backoff, measured it, and kept the simpler version. ".repeat(12);
    const turnRecords = (n: number): NewRecord[] =>
      Array.from({ length: n }, () => {
        const seq = next++;
        const record = buildTurnRecord({
          input: {
            session_id: `session-${seq % 50}`,
            prompt: `Step ${seq}: make the retry loop survive a restart.`,
            thought: `${seq} ${text}`,
            response: `Kept the simpler version; next step ${seq + 1}.`,
            tags: ["retry", "backoff"],
            refs: ["src/net/retry.ts"],
            checks: [{ name: "unit", command: "npm test", status: "passed", commit: "abc1234" }],
          },
          agent: `agent-${seq % 20}`,
          idempotencyKey: `key-${seq}`,
          recordedAt: Date.now(),
          source: "agent",
          seq,
          writeId: crypto.randomUUID(),
        });
        return { id: `turn:${seq}`, embedding: Array.from({ length: 512 }, (_, i) => Math.sin(seq + i)), ...record };
      });
    // Turns packed, with the text as Chroma's document (which Chroma indexes for full-text search): through
    // Chroma's own client, in a database of their own.
    const url = new URL(chroma.url);
    const connection = { host: url.hostname, port: Number(url.port), ssl: false };
    const packedWithDocument = packedLayout(TURN_FILTER_KEYS);
    await new AdminClient(connection).createDatabase({ name: "bench-documents", tenant: "default_tenant" });
    const documentTurns = await new ChromaClient({ ...connection, database: "bench-documents" }).getOrCreateCollection({
      name: "turns-as-documents",
      embeddingFunction: null,
      configuration: { hnsw: { space: "cosine" } },
    });
    const addAsDocuments = (records: NewRecord[]) =>
      documentTurns.add({
        ids: records.map((r) => r.id),
        embeddings: records.map((r) => r.embedding),
        documents: records.map((r) => r.document),
        metadatas: records.map((r) => packedWithDocument.stored(r.metadata)),
      });
    const time = async (run: () => Promise<unknown>) => {
      const ms: number[] = [];
      for (let i = 0; i < samples; i++) {
        const started = performance.now();
        await run();
        ms.push(performance.now() - started);
      }
      return Math.round(summarize(ms).p50 * 10) / 10;
    };

    const report = {
      samples,
      ledger_add_1_p50_ms: await time(() => slots.add(ledgerRecords(1))),
      ledger_add_16_p50_ms: await time(() => slots.add(ledgerRecords(16))),
      ledger_add_48_p50_ms: await time(() => slots.add(ledgerRecords(48))),
      ledger_three_adds_of_16_p50_ms: await time(() => Promise.all([slots, feed, audit].map((c) => c.add(ledgerRecords(16))))),
      // A bulk batch of 500 turns: each turn's slot, feed entry and audit entry in three collections at once, one
      // record each, against its 500 slots and the feed and audit entries as slots of 125 items, in one `add`.
      ledger_bulk_500_three_adds_p50_ms: await time(() => Promise.all([slots, feed, audit].map((c) => c.add(ledgerRecords(500))))),
      ledger_bulk_500_one_add_of_item_slots_p50_ms: await time(() => slots.add([...ledgerRecords(500), ...itemRecords(8, 125)])),
      // One slot of 500 items, and the read of one back: what the size of a slot costs.
      ledger_add_slot_of_500_items_p50_ms: await time(() => slots.add(itemRecords(1, 500))),
      ledger_add_and_get_slot_of_500_items_p50_ms: await time(async () => {
        const [record] = itemRecords(1, 500);
        await slots.add([record!]);
        await slots.get({ ids: [record!.id] });
      }),
      turns_add_1_p50_ms: await time(() => turns.add(turnRecords(1))),
      turns_add_16_p50_ms: await time(() => turns.add(turnRecords(16))),
      turns_add_16_flat_p50_ms: await time(() => flatTurns.add(turnRecords(16))),
      turns_add_16_text_as_document_p50_ms: await time(() => addAsDocuments(turnRecords(16))),
      turns_add_500_p50_ms: await time(() => turns.add(turnRecords(500))),
      turns_add_500_flat_p50_ms: await time(() => flatTurns.add(turnRecords(500))),
      turns_add_500_text_as_document_p50_ms: await time(() => addAsDocuments(turnRecords(500))),
    };

    // A ledger collection as the store creates it (in a workspace of its own), and one with Chroma's defaults.
    const markersNow = await store.collection("bench-ledger", "ledger-keyed");
    await new AdminClient(connection).createDatabase({ name: "bench-ledger-before", tenant: "default_tenant" });
    const markersBefore = await new ChromaClient({ ...connection, database: "bench-ledger-before" }).getOrCreateCollection({
      name: "ledger-keyed",
      embeddingFunction: null,
      configuration: { hnsw: { space: "cosine" } },
    });
    const markerRecords = (n: number): NewRecord[] =>
      Array.from({ length: n }, () => {
        const seq = next++;
        // Keyed markers' ids are hashes: they land all over Chroma's index of ids.
        const id = `keyed:${((seq * 2654435761) % 2 ** 32).toString(16).padStart(8, "0")}${seq.toString(16)}`;
        return { id, embedding: RECENCY_VECTOR, document: "", metadata: { fields: packFields({ turn_id: `turn-${seq}` }) } };
      });
    const growth = {
      now: { ms: 0, adds: [] as number[], writeBacks: [] as number[] },
      before: { ms: 0, adds: [] as number[], writeBacks: [] as number[] },
    };
    const grow = async (side: keyof typeof growth, count: number, add: (records: NewRecord[]) => Promise<unknown>) => {
      const started = performance.now();
      await add(markerRecords(500));
      const ms = performance.now() - started;
      const g = growth[side];
      g.ms += ms;
      // The second half only; an add that takes the collection to a multiple of 1,000 writes its index back.
      if (count >= ledgerGrowth / 2) ((count + 500) % 1000 === 0 ? g.writeBacks : g.adds).push(ms);
    };
    for (let count = 0; count < ledgerGrowth; count += 500) {
      await grow("now", count, (records) => markersNow.add(records));
      await grow("before", count, (records) =>
        markersBefore.add({
          ids: records.map((r) => r.id),
          embeddings: records.map((r) => r.embedding),
          documents: records.map((r) => r.document),
          metadatas: records.map((r) => r.metadata),
        }),
      );
    }
    const p50 = (ms: number[]) => Math.round(summarize(ms).p50 * 10) / 10;
    const markers = {
      ledger_records: ledgerGrowth,
      ledger_now_grow_s: Math.round(growth.now.ms / 100) / 10,
      ledger_before_grow_s: Math.round(growth.before.ms / 100) / 10,
      ledger_now_add_500_p50_ms: p50(growth.now.adds),
      ledger_before_add_500_p50_ms: p50(growth.before.adds),
      ledger_now_write_back_add_500_p50_ms: p50(growth.now.writeBacks),
      ledger_before_write_back_add_500_p50_ms: p50(growth.before.writeBacks),
    };

    const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
    const out = {
      ...report,
      ...markers,
      ledger_before_over_now_grow_ratio: ratio(markers.ledger_before_grow_s, markers.ledger_now_grow_s),
      three_adds_over_one_ratio: ratio(report.ledger_three_adds_of_16_p50_ms, report.ledger_add_48_p50_ms),
      bulk_three_adds_over_one_ratio: ratio(report.ledger_bulk_500_three_adds_p50_ms, report.ledger_bulk_500_one_add_of_item_slots_p50_ms),
      turns_flat_over_packed_16_ratio: ratio(report.turns_add_16_flat_p50_ms, report.turns_add_16_p50_ms),
      turns_flat_over_packed_500_ratio: ratio(report.turns_add_500_flat_p50_ms, report.turns_add_500_p50_ms),
      turns_document_over_text_key_16_ratio: ratio(report.turns_add_16_text_as_document_p50_ms, report.turns_add_16_p50_ms),
      turns_document_over_text_key_500_ratio: ratio(report.turns_add_500_text_as_document_p50_ms, report.turns_add_500_p50_ms),
    };
    if (!values.json) {
      process.stderr.write(
        `three adds of 16 ledger records: ${report.ledger_three_adds_of_16_p50_ms} ms; one add of 48: ${report.ledger_add_48_p50_ms} ms (${out.three_adds_over_one_ratio}x)\n` +
          `a bulk batch's ledger entries as three adds of 500: ${report.ledger_bulk_500_three_adds_p50_ms} ms; as one add with item slots: ${report.ledger_bulk_500_one_add_of_item_slots_p50_ms} ms (${out.bulk_three_adds_over_one_ratio}x)\n` +
          `500 turns with their metadata packed: ${report.turns_add_500_p50_ms} ms; every key on its own: ${report.turns_add_500_flat_p50_ms} ms (${out.turns_flat_over_packed_500_ratio}x)\n` +
          `500 turns with the text as a metadata key: ${report.turns_add_500_p50_ms} ms; as Chroma's document: ${report.turns_add_500_text_as_document_p50_ms} ms (${out.turns_document_over_text_key_500_ratio}x)\n` +
          `keyed markers grown to ${ledgerGrowth}, as created now: ${markers.ledger_now_grow_s} s (adds of 500 ${markers.ledger_now_add_500_p50_ms} ms, writing back ${markers.ledger_now_write_back_add_500_p50_ms} ms); before: ${markers.ledger_before_grow_s} s (${markers.ledger_before_add_500_p50_ms} ms, ${markers.ledger_before_write_back_add_500_p50_ms} ms) (${out.ledger_before_over_now_grow_ratio}x)\n`,
      );
    }
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } finally {
    store.close();
    await chroma.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
