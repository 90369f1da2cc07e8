import type { Principal } from "../auth/principal.js";
import { AUDIT_STREAM, stands, type AuditLog, type NewAuditEntry } from "../ledger/audit-log.js";
import { ChangeFeed, FEED_PENDING_MS, feedStream } from "../ledger/change-feed.js";
import type { Ledger, LedgerFields } from "../ledger/ledger.js";
import type { Sequences } from "../ledger/sequences.js";
import { isBatchSlot, itemsOf, type SlotItem } from "../ledger/slot-items.js";
import type { Quarantine } from "../ledger/quarantine.js";
import type { Tombstones } from "../ledger/tombstones.js";
import { EMBEDDED_COLLECTIONS, type CheckedRecord, type EmbeddedCollectionName, type StoredRecords } from "../records/stored-records.js";
import type { EmbeddingStamp, IntegrityProblem, IntegrityReport, RepairReport } from "../records/types.js";
import type { Storage } from "../storage.js";

const PAGE = 500;
const MAX_LISTED = 200;

type Check = IntegrityProblem["check"];

/** Problems found, counted per check; the first ones listed in full. */
class Findings {
  readonly counts: Partial<Record<Check, number>> = {};
  readonly listed: IntegrityProblem[] = [];
  total = 0;

  add(check: Check, collection: string, detail: string, id?: string) {
    this.counts[check] = (this.counts[check] ?? 0) + 1;
    this.total++;
    if (this.listed.length < MAX_LISTED) this.listed.push({ check, collection, detail, ...(id ? { id } : {}) });
  }
}

/**
 * An entry to mark: the change feeds and the audit log are marked entry by entry, since a batch slot holds the
 * entries of several writes (slot-items.ts); an agent's recency slot is flat, its one entry item 0.
 */
interface Target {
  seq: number;
  item: number;
}

/**
 * What `repair_store` would change: slots and entries to retire and audit entries to write, each for a memory.
 * Its `slots_retired` and `slots_restored` count entries: a flat slot is one, so that the figures read alike
 * before and after a write batch's entries share a slot.
 */
interface Mends {
  /** Per stream, the slots (or entries) to mark void. */
  voidSlots: Map<string, Target[]>;
  /** Per stream, void slots (or entries) to put back: their write landed after they were retired. */
  restoreSlots: Map<string, Target[]>;
  /** Stored turns without an `add` (or `restore`) entry that stands. */
  missingAudit: Array<{ memoryId: string; agent: string }>;
  /** Memories touched, with what was done to each, for the repair's own audit entries. */
  touched: Map<string, Set<string>>;
  /** Damaged records to take out of their collection into quarantine (ledger/quarantine.ts), per collection. */
  quarantine: Map<EmbeddedCollectionName, string[]>;
}

interface Diagnosis {
  report: IntegrityReport;
  mends: Mends;
}

/** A turn as the checks need it: a workspace's metadata whole would weigh on memory at 100k turns. */
interface TurnFacts {
  agent: string;
  seq: number;
  sessionId: string;
  writeId: unknown;
}

/**
 * Reads a whole workspace and checks what memory-core relies on but Chroma cannot enforce: stamps match the
 * embedder, every record has a vector of its stamp's dimension, each turn is reachable through its recency
 * slot, every recency and change-feed slot names a record that exists or was forgotten, no slot or feed entry
 * is left by a write that did not land (a racing writer of the same id, or a writer cut off and retried),
 * every stored turn has exactly one audit entry for its writing that stands, summaries belong to sessions that
 * still have turns, forgotten memories are gone, and every turn and summary holds the fields readers rely on
 * (openapi/src/stored-records.ts).
 *
 * `repair` mends what it can without touching a memory: it retires (marks void) the slots and feed entries of
 * writes that did not land and of writers dead for longer than a write can take, writes the missing audit
 * entries and retires doubled ones, moves damaged records into quarantine (whole, in the ledger: their slots
 * then name a record that was quarantined, as a forgotten memory's name one that was forgotten, and a `remove`
 * entry in the change feed takes them out of every replica's indexes), and logs a `repair` entry per memory
 * concerned. A slot of a write in flight shows as dangling for up to that long, and is left alone: run either on
 * a quiet store.
 */
export class IntegrityCheck {
  private readonly stored: StoredRecords;
  private readonly ledger: Ledger;
  private readonly sequences: Sequences;
  private readonly audit: AuditLog;
  private readonly tombstones: Tombstones;
  private readonly quarantine: Quarantine;
  private readonly feed: ChangeFeed;

  constructor(
    storage: Pick<Storage, "records" | "ledger" | "sequences" | "audit" | "tombstones" | "quarantine" | "feed">,
    private readonly now: () => number = Date.now,
  ) {
    ({
      records: this.stored,
      ledger: this.ledger,
      sequences: this.sequences,
      audit: this.audit,
      tombstones: this.tombstones,
      quarantine: this.quarantine,
      feed: this.feed,
    } = storage);
  }

  async run(workspace: string): Promise<IntegrityReport> {
    return (await this.diagnose(workspace)).report;
  }

  async repair(principal: Principal, apply: boolean): Promise<RepairReport> {
    const { report, mends } = await this.diagnose(principal.workspace);
    const slotsRetired = [...mends.voidSlots.values()].reduce((n, targets) => n + targets.length, 0);
    const slotsRestored = [...mends.restoreSlots.values()].reduce((n, targets) => n + targets.length, 0);
    const quarantined = [...mends.quarantine.values()].reduce((n, ids) => n + ids.length, 0);
    const planned = {
      slots_retired: slotsRetired,
      slots_restored: slotsRestored,
      audit_entries_written: mends.missingAudit.length,
      records_quarantined: quarantined,
      memories: mends.touched.size,
    };
    if (apply && mends.touched.size + slotsRetired + slotsRestored + quarantined > 0) {
      for (const [collection, ids] of mends.quarantine) await this.quarantineRecords(principal, collection, ids);
      for (const [stream, targets] of mends.voidSlots) await this.sequences.markItems(principal.workspace, stream, targets, true);
      for (const [stream, targets] of mends.restoreSlots) await this.sequences.markItems(principal.workspace, stream, targets, false);
      const entries: NewAuditEntry[] = mends.missingAudit.map(({ memoryId, agent }) => ({
        action: "add",
        actor: agent,
        memoryId,
        reason: "written by repair_store: the entry of this write was lost",
      }));
      for (const [memoryId, what] of mends.touched) {
        entries.push({ action: "repair", actor: principal.agent, memoryId, reason: [...what].sort().join("; ") });
      }
      for (let i = 0; i < entries.length; i += PAGE) await this.audit.appendMany(principal.workspace, entries.slice(i, i + PAGE));
    }
    return { workspace: principal.workspace, applied: apply, before: report, ...planned };
  }

  /**
   * Damaged records into quarantine, a page at a time: kept whole in the ledger first, then announced removed in
   * the change feed (every replica's indexes drop them), then taken out of their collection.
   */
  private async quarantineRecords(principal: Principal, collection: EmbeddedCollectionName, ids: readonly string[]): Promise<void> {
    const { workspace } = principal;
    for (let i = 0; i < ids.length; i += PAGE) {
      const damaged = await this.stored.damaged(workspace, collection, ids.slice(i, i + PAGE));
      if (damaged.length === 0) continue;
      await this.quarantine.keep(workspace, collection, damaged, principal.agent, this.now());
      await this.feed.appendMany(
        workspace,
        collection,
        damaged.map((r) => ({ record_id: r.id, op: "remove" })),
      );
      await this.stored.delete(
        workspace,
        collection,
        damaged.map((r) => r.id),
      );
    }
  }

  private async diagnose(workspace: string): Promise<Diagnosis> {
    const findings = new Findings();
    const mends: Mends = { voidSlots: new Map(), restoreSlots: new Map(), missingAudit: [], touched: new Map(), quarantine: new Map() };
    const touch = (memoryId: string, what: string) => {
      const set = mends.touched.get(memoryId) ?? new Set<string>();
      set.add(what);
      mends.touched.set(memoryId, set);
    };
    const listIn =
      (map: Map<string, Target[]>) =>
      (stream: string, seq: number, item = 0) => {
        const list = map.get(stream) ?? [];
        list.push({ seq, item });
        map.set(stream, list);
      };
    const retire = listIn(mends.voidSlots);
    const restore = listIn(mends.restoreSlots);
    // A retired slot of the write that a stored turn holds was retired while that write was still in flight (it
    // outlasted the time a write may take): it must come back, or the turn stays hidden from readers.
    // `item` is the entry's place in a feed or audit slot; an agent's slot is flat (item 0).
    const landedLate = (stream: string, recordId: unknown, seq: number, slot: LedgerFields, item = 0) => {
      const turn = turns.get(String(recordId ?? ""));
      if (!turn || turn.writeId !== slot.write_id) return;
      restore(stream, seq, item);
      touch(String(recordId), "put back slots of its write, retired while it was in flight");
    };
    const collections: IntegrityReport["collections"] = [];
    const turns = new Map<string, TurnFacts>();
    const summaries = new Map<string, string>();
    /** Damaged records: they exist (their slots are no dangling slots) but nothing else is checked of them. */
    const damaged = new Map<string, unknown>();

    for (const name of EMBEDDED_COLLECTIONS) {
      const inspected = await this.stored.check(workspace, name);
      if (!inspected) {
        collections.push({ collection: name, count: 0, stamp: null, stamp_matches: true });
        continue;
      }
      const matches = inspected.stampMatches;
      if (!matches) {
        findings.add(
          "stamp_mismatch",
          name,
          `stamped ${describe(inspected.stamp)}; this server embeds with ${describe(this.stored.stamp)}`,
        );
      }
      let count = 0;
      for await (const page of inspected.pages(PAGE)) {
        for (const record of page) {
          checkVector(findings, name, record, inspected.stamp.dimension);
          if (record.damage !== undefined) {
            findings.add("damaged_record", name, record.damage, record.id);
            damaged.set(record.id, record.writeId);
            const list = mends.quarantine.get(name) ?? [];
            list.push(record.id);
            mends.quarantine.set(name, list);
            if (name === "turns") touch(record.id, `quarantined: ${record.damage}`);
            continue;
          }
          if (name === "turns") {
            turns.set(record.id, { agent: record.agent, seq: record.seq, sessionId: record.sessionId, writeId: record.writeId });
          } else summaries.set(record.id, record.sessionId);
        }
        count += page.length;
      }
      collections.push({ collection: name, count, stamp: inspected.stamp, stamp_matches: matches });
    }

    for (const { collection, count, stamp } of await this.ledger.counts(workspace)) {
      collections.push({ collection, count, stamp, stamp_matches: true });
    }
    const tombstones = await this.tombstones.all(workspace);
    const forgotten = new Set(tombstones.map((t) => t.memoryId));
    for (const id of forgotten) if (turns.has(id)) findings.add("forgotten_present", "turns", "a forgotten memory is still stored", id);
    const quarantined = await this.quarantine.all(workspace);
    // Records whose slots and feed entries stand though they are not (or not soundly) stored: forgotten,
    // quarantined, or damaged and about to be.
    const accounted = new Set([...forgotten, ...quarantined.map((q) => q.recordId), ...damaged.keys()]);

    const sessions = new Set([...turns.values()].map((t) => t.sessionId));
    for (const [id, sessionId] of summaries) {
      if (!sessions.has(sessionId)) findings.add("orphan_summary", "summaries", `session ${sessionId} has no turns`, id);
    }

    let slotsChecked = await this.checkReachable(workspace, turns, findings);
    const dead = (slot: LedgerFields) => this.now() - Number(slot.recorded_at) >= FEED_PENDING_MS;

    // Each agent's sequence: a slot names a turn stored under it, a forgotten one, or a write that did not land.
    const lostWrites = new Set<unknown>();
    const agents = new Set([...turns.values()].map((t) => t.agent));
    for (const agent of agents) {
      const label = `recency of ${agent}`;
      slotsChecked += await this.eachSlot(
        workspace,
        agent,
        (seq, slot) => {
          const id = String(slot.turn_id);
          const turn = turns.get(id);
          if (turn && turn.seq === seq) return;
          if (!turn && accounted.has(id)) return;
          if (turn) {
            lostWrites.add(slot.write_id);
            findings.add(
              "orphan_slot",
              "ledger-slots",
              `${label} #${seq} is left by a write that did not land; the turn is at #${turn.seq}`,
              id,
            );
            retire(agent, seq);
            touch(id, "retired a recency slot of a write that did not land");
          } else {
            findings.add("dangling_slot", "ledger-slots", `${label} #${seq} names a record that is neither stored nor forgotten`, id);
            if (dead(slot)) {
              lostWrites.add(slot.write_id);
              retire(agent, seq);
            }
          }
        },
        (seq, slot) => landedLate(agent, slot.turn_id, seq, slot),
      );
    }

    // The audit log: each stored turn has one `add` (or `restore`) entry that stands.
    const written = new Map<string, number>();
    const slots: Array<{ seq: number; at: string; entry: SlotItem }> = [];
    const retiredEntries: Array<{ seq: number; entry: SlotItem }> = [];
    slotsChecked += await this.eachItem(
      workspace,
      AUDIT_STREAM,
      (seq, entry, at) => void slots.push({ seq, at, entry }),
      (seq, entry) => void retiredEntries.push({ seq, entry }),
    );
    // The write id each memory holds, from what was read above: the turns collection may await re-embedding.
    const writeOf = new Map<string, unknown>([...turns].map(([id, t]) => [id, t.writeId]));
    for (const t of tombstones) writeOf.set(t.memoryId, t.metadata.write_id);
    for (const q of quarantined) if (!writeOf.has(q.recordId)) writeOf.set(q.recordId, q.writeId);
    for (const [id, writeId] of damaged) writeOf.set(id, writeId);
    // A provisional add entry for a turn stored by another write can never stand: its write did not land,
    // whichever of its slots it managed to take.
    for (const { entry } of slots) {
      const id = String(entry.memory_id);
      if (entry.provisional === true && turns.has(id) && writeOf.get(id) !== entry.write_id) lostWrites.add(entry.write_id);
    }
    // The change feeds: an entry names a record that exists, was forgotten, or is removed later in the stream.
    for (const [collection, exists] of [
      ["turns", (id: string) => turns.has(id) || accounted.has(id)],
      ["summaries", (id: string) => summaries.has(id) || accounted.has(id)],
    ] as const) {
      const stream = feedStream(collection);
      const label = `change feed of ${collection}`;
      const removed = new Set<string>();
      const missing: Array<{ seq: number; at: string; id: string; entry: SlotItem }> = [];
      const leftBy = (seq: number, at: string, id: string, entry: SlotItem) => {
        findings.add("duplicate_feed_entry", "ledger-feed", `${label} ${at} is left by a write that did not land`, id);
        lostWrites.add(entry.write_id);
        retire(stream, seq, entry.item);
        if (turns.has(id)) touch(id, "retired a change-feed entry of a write that did not land");
      };
      // A stored turn's entries before its own write's are left by earlier attempts that did not land, though
      // nothing else of theirs may have reached Chroma (the ledger's collections are written one by one); a
      // correction's entries come after it.
      const ownEntryAt = new Map<string, number>();
      const earlier: Array<{ seq: number; at: string; id: string; entry: SlotItem }> = [];
      slotsChecked += await this.eachItem(
        workspace,
        stream,
        (seq, entry, at) => {
          const id = String(entry.record_id);
          const turn = collection === "turns" ? turns.get(id) : undefined;
          if (entry.op === "remove") removed.add(id);
          else if (collection === "turns" && lostWrites.has(entry.write_id) && entry.write_id !== turn?.writeId) leftBy(seq, at, id, entry);
          else if (turn && entry.write_id === turn.writeId) {
            if (!ownEntryAt.has(id)) ownEntryAt.set(id, seq);
          } else if (turn && !ownEntryAt.has(id)) earlier.push({ seq, at, id, entry });
          else if (!exists(id)) missing.push({ seq, at, id, entry });
        },
        (seq, entry) => {
          if (collection === "turns" && entry.op === "put") landedLate(stream, entry.record_id, seq, entry, entry.item);
        },
      );
      for (const { seq, at, id, entry } of earlier) if (seq < (ownEntryAt.get(id) ?? -1)) leftBy(seq, at, id, entry);
      for (const { seq, at, id, entry } of missing) {
        if (removed.has(id)) continue;
        findings.add("dangling_slot", "ledger-feed", `${label} ${at} names a record that is neither stored nor forgotten`, id);
        // An entry's time is its slot's, so a batch's entries die together.
        if (dead(entry)) retire(stream, seq, entry.item);
      }
    }

    for (const { seq, at, entry } of slots) {
      const id = String(entry.memory_id);
      if (entry.action !== "add" && entry.action !== "restore") continue;
      if (!stands(entry, writeOf)) {
        // A provisional entry of a write that did not land never counts; it is retired with the write's slots.
        if (lostWrites.has(entry.write_id)) {
          retire(AUDIT_STREAM, seq, entry.item);
        }
        continue;
      }
      const count = (written.get(id) ?? 0) + 1;
      written.set(id, count);
      if (count > 1 && turns.has(id)) {
        findings.add("doubled_audit_entry", "ledger-audit", `audit entry ${at} records the writing of this memory again`, id);
        retire(AUDIT_STREAM, seq, entry.item);
        touch(id, "retired a doubled audit entry");
      }
    }
    // A provisional entry retired while its write was in flight, for a turn that has no other: it comes back.
    for (const { seq, entry } of retiredEntries) {
      const id = String(entry.memory_id);
      if (entry.provisional !== true || written.has(id) || turns.get(id)?.writeId !== entry.write_id) continue;
      landedLate(AUDIT_STREAM, id, seq, entry, entry.item);
      written.set(id, 1);
    }
    for (const [id, turn] of turns) {
      if (written.has(id)) continue;
      findings.add("missing_audit_entry", "ledger-audit", "no audit entry records the writing of this memory", id);
      mends.missingAudit.push({ memoryId: id, agent: turn.agent });
      touch(id, "wrote the missing audit entry");
    }

    const report: IntegrityReport = {
      workspace,
      healthy: findings.total === 0,
      embedder: this.stored.stamp,
      collections,
      tombstones: forgotten.size,
      slots_checked: slotsChecked,
      problem_counts: findings.counts,
      problems: findings.listed,
      problems_truncated: findings.total > findings.listed.length,
    };
    return { report, mends };
  }

  /** Each turn's own recency slot must exist and name it, or query_recent_turns never shows it. */
  private async checkReachable(workspace: string, turns: Map<string, TurnFacts>, findings: Findings): Promise<number> {
    const entries = [...turns];
    for (let i = 0; i < entries.length; i += PAGE) {
      const batch = entries.slice(i, i + PAGE);
      const slots = await this.sequences.readAcross(
        workspace,
        batch.map(([, t]) => ({ stream: t.agent, seq: t.seq })),
      );
      for (const [k, [id, t]] of batch.entries()) {
        const slot = slots[k];
        if (slot?.turn_id !== id) findings.add("unreachable_turn", "turns", `its recency slot ${t.agent}#${t.seq} does not name it`, id);
        else if (slot.void === true) findings.add("unreachable_turn", "turns", `its recency slot ${t.agent}#${t.seq} was retired`, id);
      }
    }
    return entries.length;
  }

  /** Every slot of a stream that is not retired, in order (the retired ones to `retired`); answers how many were read. */
  private async eachSlot(
    workspace: string,
    stream: string,
    visit: (seq: number, slot: LedgerFields) => void,
    retired: (seq: number, slot: LedgerFields) => void = () => undefined,
  ): Promise<number> {
    const length = await this.sequences.length(workspace, stream);
    for (let from = 0; from < length; from += PAGE) {
      const seqs = Array.from({ length: Math.min(PAGE, length - from) }, (_, i) => from + i);
      const slots = await this.sequences.read(workspace, stream, seqs);
      for (const seq of seqs) {
        const slot = slots.get(seq);
        if (slot && slot.void !== true) visit(seq, slot);
        else if (slot) retired(seq, slot);
      }
    }
    return length;
  }

  /**
   * Every entry of a change feed or the audit log that is not retired, in order (the retired ones to `retired`),
   * with where it is for a finding to name: `#<seq>` for a flat slot, `#<seq>.<item>` for an entry of a batch
   * slot. Answers how many slots were read, as `slots_checked` counts positions of every stream alike.
   */
  private async eachItem(
    workspace: string,
    stream: string,
    visit: (seq: number, entry: SlotItem, at: string) => void,
    retired: (seq: number, entry: SlotItem) => void = () => undefined,
  ): Promise<number> {
    const visitSlot = (seq: number, slot: LedgerFields) => {
      const batch = isBatchSlot(slot);
      for (const entry of itemsOf(slot)) {
        if (entry.void === true) retired(seq, entry);
        else visit(seq, entry, batch ? `#${seq}.${entry.item}` : `#${seq}`);
      }
    };
    return this.eachSlot(workspace, stream, visitSlot, visitSlot);
  }
}

function checkVector(findings: Findings, collection: string, record: CheckedRecord, dimension: number) {
  if (record.dimensions === undefined) findings.add("missing_vector", collection, "the record has no vector", record.id);
  else if (record.dimensions !== dimension) {
    findings.add("wrong_dimension", collection, `its vector has ${record.dimensions} dimensions, the stamp says ${dimension}`, record.id);
  }
}

const describe = (stamp: EmbeddingStamp) => `${stamp.model} (${stamp.dimension} dimensions)`;
