import { randomUUID } from "node:crypto";
import type { OperationOutput } from "@cairn/openapi";
import type { Principal } from "../auth/principal.js";
import type { Embedder } from "../embeddings/embedder.js";
import { CairnError, internal } from "../errors.js";
import { provisionalAuditAppend, replacementEntry } from "../ledger/audit-log.js";
import { feedAppend } from "../ledger/change-feed.js";
import { GroupCommit } from "../ledger/group-commit.js";
import type { StoredTurn } from "../records/stored-turn.js";
import { OPEN_VALIDITY, turnDocument } from "../records/turn-record.js";
import type { AddMemoryRequest } from "../records/types.js";
import type { Storage } from "../storage.js";
import { gone, type Corrections } from "./corrections.js";
import { recencyAppend } from "../ledger/sequences.js";
import { addResult, replayOrConflict, resolveTurn, type AddMemoryOutcome, type TurnIds } from "./turn-writes.js";

export type AddMemoriesResult = OperationOutput<"add_memories">;

/** Turns per batch of `add_memory` calls: as many as one `add_memories` call may send. */
const MAX_JOINED = 500;
/**
 * How long a batch of `add_memory` calls that follows another waits for the writers the last one answered (see
 * GroupCommit): longer than their round trip back on a busy machine, short beside a batch's own time.
 */
const GATHER_MS = 30;

/** A turn to write, and who writes it: the items of one batch share a workspace. */
interface WriteItem {
  principal: Principal;
  request: AddMemoryRequest;
}

/** What became of an item: stored or replayed, or its own refusal (a 4xx). */
type ItemOutcome = AddMemoryOutcome | CairnError;

interface PendingWrite {
  item: WriteItem;
  resolve: (outcome: AddMemoryOutcome) => void;
  reject: (error: unknown) => void;
}

/** A turn of the batch that passed its checks. */
interface Resolved {
  index: number;
  principal: Principal;
  input: AddMemoryRequest;
  ids: TurnIds;
  keyGiven: boolean;
}

/** A turn of the batch that is new: it takes slots and is stored. */
interface Fresh extends Resolved {
  writeId: string;
  replaced: StoredTurn[];
}

/**
 * How turns are written: `add_memories`' items, and the `add_memory` calls that come together, in a few Chroma
 * requests for the whole batch instead of several per turn.
 *
 * Each item is judged in the batch's order exactly as `add_memory` would judge it had the items before it been
 * written one by one: what the store held before the batch is read in three lookups sent together (tombstones
 * and keyed markers; the turns under every id and content id; the memories named in `supersedes`), and what the
 * earlier items of the batch will store is kept beside it, so a key repeated in the batch replays (or conflicts
 * with) its first use. An item that fails its checks stores nothing and the others go on. The new turns are then
 * embedded in one call, take their slots (each its agent's recency slot, in batch order, a change-feed entry
 * and a provisional audit entry, under a write id of its own) in as few ledger batches as fit, leave their
 * keyed markers in one `add`, and are stored in one `add` and read back in one `get`: a turn another writer
 * stored first under the same id answers as that writer's (a replay or a conflict), like any write.
 *
 * `add_memory` writes the same way, in batches of the calls that come together: a call that comes while its
 * workspace's batch is in flight waits for it and goes with the others that waited, each under its own token
 * and answered on its own (its turn, a replay, or its own refusal). Chroma applies writes one at a time, and a
 * batch pays the few requests a single turn would, so concurrent writers share them instead of queueing behind
 * each other's. A call alone does not wait. What fails a batch (Chroma failing or unreachable) fails each call
 * in it as it would have failed alone, and each retries with its key. A batch that follows another waits a
 * moment for the writers the last one answered, so that writers who write turn after turn go together.
 */
export class BulkWrites {
  /** `add_memory` calls, written a batch at a time per workspace (see above). */
  private readonly joined = new GroupCommit<PendingWrite>(MAX_JOINED, (workspace, batch) => this.writeJoined(workspace, batch), GATHER_MS);
  /** Turns being stored by a batch on this replica, by `<workspace>/<id>`: a batch that names one waits for it. */
  private readonly inFlight = new Map<string, Promise<StoredTurn>>();

  constructor(
    private readonly storage: Pick<Storage, "turns" | "sequences" | "markers" | "audit">,
    private readonly embedder: Embedder,
    private readonly corrections: Corrections,
  ) {}

  /** `add_memories`: the items in their order, each stored, replayed or refused on its own. */
  async write(principal: Principal, requests: readonly AddMemoryRequest[]): Promise<AddMemoriesResult> {
    const outcomes = await this.writeItems(
      principal.workspace,
      requests.map((request) => ({ principal, request })),
    );
    const results = outcomes.map((o) =>
      o instanceof CairnError
        ? { error: { code: o.code, message: o.detail, ...(o.hint ? { hint: o.hint } : {}) } }
        : { id: o.result.id, replayed: o.result.replayed },
    );
    const stored = outcomes.filter((o) => !(o instanceof CairnError) && o.created).length;
    const failed = outcomes.filter((o) => o instanceof CairnError).length;
    return { results, stored, replayed: results.length - stored - failed, failed };
  }

  /** `add_memory`'s turn, in the workspace's next batch (see above). */
  writeOne(principal: Principal, request: AddMemoryRequest): Promise<AddMemoryOutcome> {
    return new Promise((resolve, reject) => this.joined.add(principal.workspace, [{ item: { principal, request }, resolve, reject }]));
  }

  /** A batch of `add_memory` calls: each answered with its own outcome, or its own refusal. */
  private async writeJoined(workspace: string, batch: PendingWrite[]): Promise<void> {
    const outcomes = await this.writeItems(
      workspace,
      batch.map((p) => p.item),
    );
    outcomes.forEach((outcome, i) => (outcome instanceof CairnError ? batch[i]!.reject(outcome) : batch[i]!.resolve(outcome)));
  }

  /** The batch's items judged and stored as described above; anything but an item's own refusal fails the batch. */
  private async writeItems(workspace: string, items: readonly WriteItem[]): Promise<ItemOutcome[]> {
    const outcomes: ItemOutcome[] = new Array<ItemOutcome>(items.length);
    const fail = (index: number, error: unknown) => {
      outcomes[index] = itemError(error);
    };
    const answer = (index: number, outcome: () => AddMemoryOutcome) => {
      try {
        outcomes[index] = outcome();
      } catch (error) {
        fail(index, error);
      }
    };

    const resolved: Resolved[] = [];
    items.forEach(({ principal, request }, index) => {
      try {
        resolved.push({ index, principal, ...resolveTurn(principal, request) });
      } catch (error) {
        fail(index, error);
      }
    });
    // A write of one of these ids in flight on this replica ends first, so that the lookups below find it.
    await Promise.all(resolved.map((r) => this.inFlight.get(`${workspace}/${r.ids.id}`)?.catch(() => undefined)));

    const keyed = (r: Resolved) => r.ids.id !== r.ids.contentId;
    // The lookups go together; only a turn that a keyed marker names, and that is not among the turns asked
    // for already (a retry without its key), takes one more.
    const { turns, markers } = this.storage;
    const asked = new Set(resolved.flatMap((r) => [r.ids.id, r.ids.contentId]));
    const [{ forgotten, keyedTurns }, inStore, replacing] = await Promise.all([
      markers.beforeWrites(
        workspace,
        resolved.map((r) => r.ids.id),
        resolved.filter((r) => !keyed(r)).map((r) => r.ids.contentId),
      ),
      // Damaged records too: a write of an id one holds is answered as such, not stored over it.
      turns.byIds(workspace, [...asked], { withDamaged: true }).then((found) => new Map(found.map((t) => [t.id, t]))),
      this.replacedMemories(workspace, resolved),
    ]);
    const named = [...new Set(keyedTurns.values())].filter((id) => !asked.has(id));
    for (const t of await turns.byIds(workspace, named, { withDamaged: true })) inStore.set(t.id, t);

    // In the batch's order, as add_memory would judge each after the ones before it.
    const fresh: Fresh[] = [];
    const inBatch = new Map<string, Fresh>();
    const batchMarkers = new Map<string, string>();
    const repeats: Array<{ item: Resolved; of: Fresh }> = [];
    const found = (id: string): StoredTurn | Fresh | undefined => inStore.get(id) ?? inBatch.get(id);
    const repeat = (item: Resolved, of: StoredTurn | Fresh) => {
      if (isFresh(of)) repeats.push({ item, of });
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
        for (const record of replaced) this.corrections.assertMayCorrect(item.principal, record);
        const existing = found(id);
        if (existing) {
          repeat(item, existing);
          continue;
        }
        // A turn of the same text stored without a key is this write retried with a key only if the rest matches too.
        const byContent = keyed(item) ? found(contentId) : undefined;
        if (byContent && (isFresh(byContent) ? byContent.ids.hash : byContent.payloadSha256) === hash) {
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

    const stored = await this.storeFresh(workspace, fresh);
    for (const turn of fresh) {
      const record = stored.get(turn.ids.id)!;
      if (record.writeId === turn.writeId) outcomes[turn.index] = { created: true, result: addResult(record, false) };
      else answer(turn.index, () => replayOrConflict(record, turn.ids.hash, turn.keyGiven));
    }
    await this.supersede(workspace, fresh, stored);
    for (const { item, of } of repeats) answer(item.index, () => replayOrConflict(stored.get(of.ids.id)!, item.ids.hash, item.keyGiven));
    return outcomes;
  }

  /** Every memory the batch names in `supersedes`, as stored, or why it cannot be replaced. */
  private async replacedMemories(workspace: string, items: readonly Resolved[]): Promise<Map<string, StoredTurn | CairnError>> {
    const named = [...new Set(items.flatMap((r) => r.input.supersedes ?? []))];
    const replacing = new Map<string, StoredTurn | CairnError>();
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
  private async storeFresh(workspace: string, fresh: readonly Fresh[]): Promise<Map<string, StoredTurn>> {
    if (fresh.length === 0) return new Map();
    const settle = new Map<string, { resolve: (r: StoredTurn) => void; reject: (e: unknown) => void }>();
    const flights = fresh.map((turn) => {
      const key = `${workspace}/${turn.ids.id}`;
      const flight = new Promise<StoredTurn>((resolve, reject) => settle.set(turn.ids.id, { resolve, reject }));
      flight.catch(() => undefined); // awaited by whoever joins it
      this.inFlight.set(key, flight);
      return { key, flight };
    });
    try {
      const vectors = await this.embedder.embed(fresh.map((t) => turnDocument(t.input)));
      if (vectors.length !== fresh.length) throw internal();
      // As for one write, the slots come before the turns, and the audit entries with them, provisional.
      const [slots] = await Promise.all([
        this.storage.sequences.appendGroups(
          workspace,
          fresh.map((t) => ({
            writeId: t.writeId,
            requests: [
              recencyAppend(t.principal.agent, t.ids.id),
              feedAppend("turns", { record_id: t.ids.id, op: "put", session_id: t.input.session_id }),
              provisionalAuditAppend({ action: "add", actor: t.principal.agent, memoryId: t.ids.id }),
            ],
          })),
        ),
        this.storage.markers.leaveMany(
          workspace,
          fresh.filter((t) => t.ids.id !== t.ids.contentId).map((t) => ({ contentId: t.ids.contentId, turnId: t.ids.id })),
        ),
      ]);
      const { turns } = this.storage;
      await turns.add(
        workspace,
        fresh.map((t, i) => {
          const { seq, recordedAt } = slots[i]![0]!;
          return {
            id: t.ids.id,
            embedding: vectors[i]!,
            write: {
              input: t.input,
              agent: t.principal.agent,
              idempotencyKey: t.ids.key,
              recordedAt,
              seq,
              writeId: t.writeId,
              source: t.input.source ?? "agent",
            },
          };
        }),
      );
      const stored = new Map(
        (
          await turns.byIds(
            workspace,
            fresh.map((t) => t.ids.id),
            { withDamaged: true },
          )
        ).map((t) => [t.id, t]),
      );
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
  private async supersede(workspace: string, fresh: readonly Fresh[], stored: Map<string, StoredTurn>): Promise<void> {
    const done = new Set<string>();
    for (const turn of fresh) {
      if (stored.get(turn.ids.id)?.writeId !== turn.writeId) continue;
      for (const record of turn.replaced) {
        if (done.has(record.id) || record.validUntil < OPEN_VALIDITY) continue;
        done.add(record.id);
        const reason = `superseded by ${turn.ids.id}`;
        const { linked } = await this.corrections.supersede(turn.principal, record, turn.ids.id, reason);
        await this.storage.audit.appendMany(workspace, [
          { action: "supersede", actor: turn.principal.agent, memoryId: record.id, reason },
          ...(linked ? [replacementEntry(turn.principal.agent, linked, record.id, reason)] : []),
        ]);
      }
    }
  }
}

/** An item's own refusal (a 4xx): the item fails and the batch goes on. Anything else fails the batch. */
function itemError(error: unknown): CairnError {
  if (error instanceof CairnError && error.status < 500) return error;
  throw error;
}

/** A turn of this batch, not yet stored. */
const isFresh = (turn: StoredTurn | Fresh): turn is Fresh => "ids" in turn;
