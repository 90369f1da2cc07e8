import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Principal } from "../services/memory-core/src/auth/principal.js";
import { MessageService } from "../services/memory-core/src/domain/messages.js";
import { startEmbeddedChroma } from "../services/memory-core/src/embedded/chroma-server.js";
import { silentLogger } from "../services/memory-core/src/logger.js";
import { openStorage } from "../services/memory-core/src/storage.js";
import { ChromaStore } from "../services/memory-core/src/store/chroma-store.js";
import { round, summarize, timed } from "./stats.js";

/**
 * What reading an inbox asks of Chroma as the inbox grows: the lookups (ledger `get`/`present` requests) and the
 * time of an unread count, of `query_inbox` with `unread_only` and `limit: 5` (what a hook asks), and of a first
 * page of 10, for inboxes of N messages of which the newest three are unread; and of the worst case, three unread
 * messages that are the oldest of the inbox (the first pass walks back to them, 200 slots a call).
 *
 *   nice -n 10 npm run bench -- mailbox [--sizes 20,200,1000] [--samples 5] [--json]
 */
export async function benchMailbox(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      sizes: { type: "string", default: "20,200,1000" },
      samples: { type: "string", default: "5" },
      json: { type: "boolean", default: false },
    },
  });
  const sizes = values.sizes.split(",").map(Number);
  const samples = Number(values.samples);
  const base = process.env.CAIRN_BENCH_DIR ?? tmpdir();
  await mkdir(base, { recursive: true });
  const dir = await mkdtemp(join(base, "cairn-bench-mailbox-"));
  const chroma = await startEmbeddedChroma({ path: join(dir, "chroma"), logFile: join(dir, "chroma.log") });
  const store = new ChromaStore(chroma.url, { model: "hash-512", dimension: 512 }, silentLogger);
  const storage = openStorage(store);
  const lookups = { n: 0 };
  const ledger = storage.ledger;
  const get = ledger.get.bind(ledger);
  const present = ledger.present.bind(ledger);
  ledger.get = (w, ids) => (lookups.n++, get(w, ids));
  ledger.present = (w, ids) => (lookups.n++, present(w, ids));
  const messages = new MessageService(storage.mailbox, () => new Set(["alice", "bob"]));
  const rows: Array<Record<string, unknown>> = [];
  try {
    for (const size of sizes) {
      for (const unreadAt of ["newest", "oldest"] as const) {
        const workspace = `bench-mail-${size}-${unreadAt}`;
        const alice: Principal = { workspace, agent: "alice", role: "agent" };
        const bob: Principal = { workspace, agent: "bob", role: "agent" };
        const ids: string[] = [];
        for (let i = 0; i < size; i++) {
          const sent = await messages.send(alice, { to: "bob", subject: `message ${i}`, body: `Body of message ${i}.` });
          ids.push(sent.result.id);
        }
        const unread = unreadAt === "newest" ? new Set(ids.slice(-3)) : new Set(ids.slice(0, 3));
        const toMark = ids.filter((id) => !unread.has(id));
        for (let i = 0; i < toMark.length; i += 100) await messages.ack(bob, { message_ids: toMark.slice(i, i + 100) });
        const measure = async (call: () => Promise<unknown>) => {
          const ms: number[] = [];
          let calls = 0;
          for (let s = 0; s < samples; s++) {
            lookups.n = 0;
            ms.push((await timed(call)).ms);
            calls = lookups.n;
          }
          return { p50_ms: round(summarize(ms).p50), lookups: calls };
        };
        const count = await measure(() => messages.unread(workspace, "bob"));
        const hook = await measure(() => messages.inbox(bob, { unread_only: true, box: "inbox", limit: 5, detail: "brief" }));
        const page = await measure(() => messages.inbox(bob, { unread_only: false, box: "inbox", limit: 10, detail: "brief" }));
        const found = await messages.inbox(bob, { unread_only: true, box: "inbox", limit: 5, detail: "brief" });
        rows.push({
          size,
          unread_at: unreadAt,
          unread_count: count,
          hook_query: { ...hook, found: found.messages.length, next_cursor: found.next_cursor !== null },
          first_page: page,
        });
      }
    }
  } finally {
    store.close();
    await chroma.stop();
    await rm(dir, { recursive: true, force: true });
  }
  if (values.json) {
    process.stdout.write(`${JSON.stringify(rows)}\n`);
    return;
  }
  process.stdout.write(
    `${"inbox".padStart(6)} ${"unread".padEnd(7)} ${"count ms/lookups".padStart(17)} ${"unread_only 5 ms/lookups (found)".padStart(34)} ${"page of 10 ms/lookups".padStart(22)}\n`,
  );
  for (const r of rows) {
    const c = r.unread_count as { p50_ms: number; lookups: number };
    const h = r.hook_query as { p50_ms: number; lookups: number; found: number; next_cursor: boolean };
    const p = r.first_page as { p50_ms: number; lookups: number };
    process.stdout.write(
      `${String(r.size).padStart(6)} ${String(r.unread_at).padEnd(7)} ${`${c.p50_ms} / ${c.lookups}`.padStart(17)} ${`${h.p50_ms} / ${h.lookups} (${h.found}${h.next_cursor ? ", more" : ""})`.padStart(34)} ${`${p.p50_ms} / ${p.lookups}`.padStart(22)}\n`,
    );
  }
}
