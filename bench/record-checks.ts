import { parseArgs } from "node:util";
import { damageOf } from "@cairn/openapi";
import { buildTurnRecord } from "../services/memory-core/src/records/turn-record.js";
import { packedLayout } from "../services/memory-core/src/store/metadata-layout.js";
import { TURN_FILTER_KEYS } from "../services/memory-core/src/store/chroma-store.js";
import { corpus } from "./corpus.js";
import { round } from "./stats.js";

/**
 * What checking a record costs where Chroma's metadata becomes a record (the store's `get`): `damageOf` over
 * turns as memory-core stores them, beside what the same `get` already does to each (unpacking its `fields` JSON
 * with the turns' layout). Microseconds per record, the best of `--rounds` passes over `--records` turns, and the
 * check's share of the two.
 *
 *   npm run bench -- record-checks [--records 20000] [--rounds 5] [--json]
 */
export function benchRecordChecks(argv: string[]): void {
  const { values } = parseArgs({
    args: argv,
    options: { records: { type: "string", default: "20000" }, rounds: { type: "string", default: "5" }, json: { type: "boolean" } },
  });
  const n = Number(values.records);
  const rounds = Number(values.rounds);
  const layout = packedLayout(TURN_FILTER_KEYS, { textInMetadata: true });
  const stored = corpus(n, { agents: 8, sessions: Math.max(1, Math.floor(n / 20)) }).map((t, i) => {
    const { document, metadata } = buildTurnRecord({
      input: {
        session_id: t.session_id,
        prompt: t.prompt,
        thought: t.thought,
        response: t.response,
        tags: ["bench", `area-${i % 50}`],
        refs: [`src/file-${i % 200}.ts`],
      },
      agent: t.agent,
      idempotencyKey: `k${i}`,
      recordedAt: 1_764_000_000_000 + i * 1000,
      source: "agent",
      seq: i,
      writeId: `w${i}`,
    });
    return layout.withText(layout.stored(metadata), document);
  });
  const best = (pass: () => number) => {
    let min = Infinity;
    let sink = 0;
    for (let r = 0; r < rounds; r++) {
      const started = performance.now();
      sink += pass();
      min = Math.min(min, performance.now() - started);
    }
    if (sink < 0) throw new Error("unreachable");
    return (min * 1000) / n;
  };
  const read = stored.map((m) => layout.read(m));
  const unpackUs = best(() => stored.reduce((k, m) => k + Object.keys(layout.read(m)).length, 0));
  const checkUs = best(() => read.reduce((k, m) => k + damageOf("turns", m).length, 0));
  const result = {
    records: n,
    unpack_us_per_record: round(unpackUs, 3),
    check_us_per_record: round(checkUs, 3),
    check_share_of_unpack_and_check: round(checkUs / (unpackUs + checkUs), 3),
    damaged_found: read.reduce((k, m) => k + (damageOf("turns", m).length > 0 ? 1 : 0), 0),
  };
  if (values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
  else {
    process.stdout.write(
      `${n} turns as stored: unpack ${result.unpack_us_per_record} µs/record, check ${result.check_us_per_record} µs/record ` +
        `(the check is ${round(result.check_share_of_unpack_and_check * 100, 1)}% of the two); damaged found: ${result.damaged_found}\n`,
    );
  }
}
