import { randomUUID } from "node:crypto";
import type { OperationOutput } from "@cairn/openapi";
import type { Principal } from "../auth/principal.js";
import type { Embedder } from "../embeddings/embedder.js";
import { CairnError, internal } from "../errors.js";
import { provisionalAuditAppend, type AuditLog } from "../ledger/audit-log.js";
import { feedAppend } from "../ledger/change-feed.js";
import type { KeyedMarkers } from "../ledger/keyed-markers.js";
import type { Sequences } from "../ledger/sequences.js";
import { buildTurnRecord, OPEN_VALIDITY, turnDocument } from "../records/turn-record.js";
import type { AddMemoryRequest } from "../records/types.js";
import type { ChromaStore, StoredRecord } from "../store/chroma-store.js";
import { gone, type Corrections } from "./corrections.js";
import { recencyAppend } from "./recency.js";
import { replayOrConflict, resolveTurn, type TurnIds } from "./turn-writes.js";

export type AddMemoriesResult = OperationOutput<"add_memories">;
type ItemResult = AddMemoriesResult["results"][number];

/** A turn of the batch that passed its checks. */
interface Resolved {
  index: number;
  input: AddMemoryRequest;
  ids: TurnIds;
  keyGiven: boolean;
}

/** A turn of the batch that is new: it takes slots and is stored. */
interface Fresh extends Resolved {
  writeId: string;
  replaced: StoredRecord[];
}

/**
 * `add_memories`: many turns stored as `add_memory` stores each (memory-service.ts storeTurn), in a few
 * Chroma requests for the whole batch instead of several per turn.
 *
 * Each item is judged in the batch's order exactly as `add_memory` would judge it had the items before it been
 * written one by one: what the store held before the batch is read in three lookups (tombstones and keyed
 * markers; the turns under every id and content id; the memories named in `supersedes`), and what the earlier
 * items of the batch will store is kept beside it, so a key repeated in the batch replays (or conflicts with)
 * its first use. An item that fails its checks stores nothing and the others go on. The new turns are then
 * embedded in one call, take their slots (each its agent's recency slot, in batch order, a change-feed entry
 * and a provisional audit entry, under a write id of its own) in as few ledger batches as fit, leave their
 * keyed markers in one `add`, and are stored in one `add` and read back in one `get`: a turn another writer
 * stored first under the same id answers as that writer's (a replay or a conflict), like any write.
 */
export class BulkWrites {
  constructor(
    private readonly store: ChromaStore,
    private readonly embedder: Embedder,
    private readonly sequences: Sequences,
    private readonly markers: KeyedMarkers,
    private readonly corrections: Corrections,
    private readonly audit: AuditLog,
    /** memory-service's writes in flight on this replica, by `<workspace>/<id>`: shared, so each waits for the other. */
    private readonly inFlight: Map<string, Promise<StoredRecord>>,
  ) {}

  async write(principal: Principal, requests: readonly AddMemoryRequest[]): Promise<AddMemoriesResult> {
    const workspace = principal.workspace;
    const results: ItemResult[] = new Array<ItemResult>(requests.length);
    const fail = (index: number, error: unknown) => {
      const e = itemError(error);
      results[index] = { error: { code: e.code, message: e.detail, ...(e.hint ? { hint: e.hint } : {}) } };
    };
    const answer = (index: number, outcome: () => { result: { id: string; replayed: boolean } }) => {
      try {
        const { id, replayed } = outcome().result;
        results[index] = { id, replayed };
      } catch (error) {
        fail(index, error);
      }
    };

    const resolved: Resolved[] = [];
    requests.forEach((request, index) => {
      try {
        resolved.push({ index, ...resolveTurn(principal, request) });
      } catch (error) {
        fail(index, error);
      }
    });
    // A write of one of these ids in flight on this replica ends first, so that the lookups below find it.
    await Promise.all(resolved.map((r) => this.inFlight.get(`${workspace}/${r.ids.id}`)?.catch(() => undefined)));

    const keyed = (r: Resolved) => r.ids.id !== r.ids.contentId;
    const { forgotten, keyedTurns } = await this.markers.beforeWrites(
      workspace,
      resolved.map((r) => r.ids.id),
      resolved.filter((r) => !keyed(r)).map((r) => r.ids.contentId),
    );
    const turns = await this.store.collection(workspace, "turns");
    const lookFor = new Set([...resolved.flatMap((r) => [r.ids.id, r.ids.contentId]), ...keyedTurns.values()]);
    const inStore = new Map((await turns.get({ ids: [...lookFor] })).map((t) => [t.id, t]));
    const replacing = await this.replacedMemories(workspace, resolved);

    // In the batch's order, as add_memory would judge each after the ones before it.
    const fresh: Fresh[] = [];
    const inBatch = new Map<string, Fresh>();
    const batchMarkers = new Map<string, string>();
    const repeats: Array<{ item: Resolved; of: Fresh }> = [];
    const found = (id: string): StoredRecord | Fresh | undefined => inStore.get(id) ?? inBatch.get(id);
    const repeat = (item: Resolved, of: StoredRecord | Fresh) => {
      if ("writeId" in of) repeats.push({ item, of });
      else answer(item.index, () => replayOrConflict(of, item.ids.hash, item.keyGiven));
    };
    for (const item of resolved) {
      try {
        const { id, contentId, hash } = item.ids;
        if (forgotten.has(id)) throw gone(id);
        if (!keyed(item)) {
          // The same content written earlier with a key: this is its retry without one.
          const alias = keyedTurns.get(contentId) ?? batchMarkers.get(contentId);
          if (alias !== undefined) {
            const original = found(alias);
            if (original) {
              repeat(item, original);
              continue;
            }
            if (await this.corrections.tombstone(workspace, alias)) throw gone(alias);
          }
        }
        const replaced = (item.input.supersedes ?? []).map((old) => {
          const record = replacing.get(old)!;
          if (record instanceof CairnError) throw record;
          return record;
        });
        for (const record of replaced) this.corrections.assertMayCorrect(principal, record);
        const existing = found(id);
        if (existing) {
          repeat(item, existing);
          continue;
        }
        // A turn of the same text stored without a key is this write retried with a key only if the rest matches too.
        const byContent = keyed(item) ? found(contentId) : undefined;
        if (byContent && ("writeId" in byContent ? byContent.ids.hash : byContent.metadata.payload_sha256) === hash) {
          repeat(item, byContent);
          continue;
        }
        const turn: Fresh = { ...item, writeId: randomUUID(), replaced };
        fresh.push(turn);
        inBatch.set(id, turn);
        if (keyed(item) && !batchMarkers.has(contentId)) batchMarkers.set(contentId, id);
      } catch (error) {
        fail(item.index, error);
      }
    }

    const stored = await this.storeFresh(principal, fresh);
    for (const turn of fresh) {
      const record = stored.get(turn.ids.id)!;
      if (record.metadata.write_id === turn.writeId) results[turn.index] = { id: record.id, replayed: false };
      else answer(turn.index, () => replayOrConflict(record, turn.ids.hash, turn.keyGiven));
    }
    await this.supersede(principal, fresh, stored);
    for (const { item, of } of repeats) answer(item.index, () => replayOrConflict(stored.get(of.ids.id)!, item.ids.hash, item.keyGiven));

    const created = new Set(fresh.filter((t) => stored.get(t.ids.id)!.metadata.write_id === t.writeId).map((t) => t.index));
    const failed = results.filter((r) => "error" in r).length;
    return { results, stored: created.size, replayed: results.length - created.size - failed, failed };
  }

  /** Every memory the batch names in `supersedes`, as stored, or why it cannot be replaced. */
  private async replacedMemories(workspace: string, items: readonly Resolved[]): Promise<Map<string, StoredRecord | CairnError>> {
    const named = [...new Set(items.flatMap((r) => r.input.supersedes ?? []))];
    const replacing = new Map<string, StoredRecord | CairnError>();
    await Promise.all(
      named.map((id) =>
        this.corrections.existing(workspace, id).then(
          (record) => replacing.set(id, record),
          (error: unknown) => replacing.set(id, itemError(error)),
        ),
      ),
    );
    return replacing;
  }

  /** Stores the new turns (see above); answers with the record that holds each id afterwards. */
  private async storeFresh(principal: Principal, fresh: readonly Fresh[]): Promise<Map<string, StoredRecord>> {
    if (fresh.length === 0) return new Map();
    const workspace = principal.workspace;
    const settle = new Map<string, { resolve: (r: StoredRecord) => void; reject: (e: unknown) => void }>();
    const flights = fresh.map((turn) => {
      const key = `${workspace}/${turn.ids.id}`;
      const flight = new Promise<StoredRecord>((resolve, reject) => settle.set(turn.ids.id, { resolve, reject }));
      flight.catch(() => undefined); // awaited by whoever joins it
      this.inFlight.set(key, flight);
      return { key, flight };
    });
    try {
      const vectors = await this.embedder.embed(fresh.map((t) => turnDocument(t.input)));
      if (vectors.length !== fresh.length) throw internal();
      // As for one write, the slots come before the turns, and the audit entries with them, provisional.
      const [slots] = await Promise.all([
        this.sequences.appendGroups(
          workspace,
          fresh.map((t) => ({
            writeId: t.writeId,
            requests: [
              recencyAppend(principal.agent, t.ids.id),
              feedAppend("turns", { record_id: t.ids.id, op: "put", session_id: t.input.session_id }),
              provisionalAuditAppend({ action: "add", actor: principal.agent, memoryId: t.ids.id }),
            ],
          })),
        ),
        this.markers.leaveMany(
          workspace,
          fresh.filter((t) => t.ids.id !== t.ids.contentId).map((t) => ({ contentId: t.ids.contentId, turnId: t.ids.id })),
        ),
      ]);
      const turns = await this.store.collection(workspace, "turns");
      await turns.add(
        fresh.map((t, i) => {
          const { seq, recordedAt } = slots[i]![0]!;
          const record = buildTurnRecord({
            input: t.input,
            agent: principal.agent,
            idempotencyKey: t.ids.key,
            recordedAt,
            seq,
            writeId: t.writeId,
            source: t.input.source ?? "agent",
          });
          return { id: t.ids.id, embedding: vectors[i]!, ...record };
        }),
      );
      const stored = new Map((await turns.get({ ids: fresh.map((t) => t.ids.id) })).map((t) => [t.id, t]));
      for (const turn of fresh) {
        const record = stored.get(turn.ids.id);
        if (!record) throw internal();
        settle.get(turn.ids.id)!.resolve(record);
      }
      return stored;
    } catch (error) {
      for (const s of settle.values()) s.reject(error);
      throw error;
    } finally {
      for (const { key, flight } of flights) if (this.inFlight.get(key) === flight) this.inFlight.delete(key);
    }
  }

  /** The memories the stored turns replace, marked superseded by them, each once, as add_memory marks them. */
  private async supersede(principal: Principal, fresh: readonly Fresh[], stored: Map<string, StoredRecord>): Promise<void> {
    const done = new Set<string>();
    for (const turn of fresh) {
      if (stored.get(turn.ids.id)?.metadata.write_id !== turn.writeId) continue;
      for (const record of turn.replaced) {
        if (done.has(record.id) || Number(record.metadata.valid_until) < OPEN_VALIDITY) continue;
        done.add(record.id);
        const reason = `superseded by ${turn.ids.id}`;
        await this.corrections.supersede(principal, record, turn.ids.id, reason);
        await this.audit.append(principal.workspace, { action: "supersede", actor: principal.agent, memoryId: record.id, reason });
      }
    }
  }
}

/** An item's own refusal (a 4xx): the item fails and the batch goes on. Anything else fails the batch. */
function itemError(error: unknown): CairnError {
  if (error instanceof CairnError && error.status < 500) return error;
  throw error;
}
