import {
  EMBEDDED_COLLECTIONS,
  RECENCY_STAMP,
  sameStamp,
  type ChromaStore,
  type EmbeddingStamp,
  type Metadata,
  type StoredRecord,
} from "../store/chroma-store.js";
import { feedStream } from "./lexical-catalog.js";
import { TOMBSTONE_FILTER } from "./record-export.js";
import { slotId, type Sequences } from "./sequences.js";
import { tombstoneId } from "./tombstones.js";
import type { IntegrityProblem, IntegrityReport } from "./types.js";

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
 * Reads a whole workspace and checks what memory-core relies on but Chroma cannot enforce: stamps match the
 * embedder, every record has a vector of its stamp's dimension, each turn is reachable through its recency
 * slot, every recency and change-feed slot names a record that exists or was forgotten, summaries belong to
 * sessions that still have turns, forgotten memories are gone. A slot of a write in flight, or of a writer
 * that died between taking its slot and storing its record, shows as dangling too: run it on a quiet store.
 */
export class IntegrityCheck {
  constructor(
    private readonly store: ChromaStore,
    private readonly sequences: Sequences,
  ) {}

  async run(workspace: string): Promise<IntegrityReport> {
    const findings = new Findings();
    const collections: IntegrityReport["collections"] = [];
    const turns = new Map<string, Metadata>();
    const summaries = new Map<string, Metadata>();

    for (const name of EMBEDDED_COLLECTIONS) {
      const inspected = await this.store.inspect(workspace, name);
      if (!inspected) {
        collections.push({ collection: name, count: 0, stamp: null, stamp_matches: true });
        continue;
      }
      const matches = sameStamp(inspected.stamp, this.store.stamp);
      if (!matches) {
        findings.add("stamp_mismatch", name, `stamped ${describe(inspected.stamp)}; this server embeds with ${describe(this.store.stamp)}`);
      }
      let count = 0;
      for await (const page of inspected.records.pages({ size: PAGE, withEmbeddings: true })) {
        for (const record of page) {
          checkVector(findings, name, record, inspected.stamp.dimension);
          // Only what the later checks need: a workspace's metadata whole would weigh on memory at 100k turns.
          const { agent, seq, session_id } = record.metadata;
          (name === "turns" ? turns : summaries).set(record.id, { agent: agent ?? "", seq: seq ?? -1, session_id: session_id ?? "" });
        }
        count += page.length;
      }
      collections.push({ collection: name, count, stamp: inspected.stamp, stamp_matches: matches });
    }

    const recency = await this.store.collection(workspace, "recency");
    collections.push({ collection: "recency", count: await recency.count(), stamp: RECENCY_STAMP, stamp_matches: true });
    const forgotten = new Set((await recency.get({ where: TOMBSTONE_FILTER })).map((t) => t.id.slice(tombstoneId("").length)));
    for (const id of forgotten) if (turns.has(id)) findings.add("forgotten_present", "turns", "a forgotten memory is still stored", id);

    const sessions = new Set([...turns.values()].map((m) => String(m.session_id)));
    for (const [id, metadata] of summaries) {
      if (!sessions.has(String(metadata.session_id))) {
        findings.add("orphan_summary", "summaries", `session ${String(metadata.session_id)} has no turns`, id);
      }
    }

    let slotsChecked = await this.checkReachable(workspace, turns, findings);
    const exists = (collection: Map<string, Metadata>) => (id: string) => collection.has(id) || forgotten.has(id);
    const agents = new Set([...turns.values()].map((m) => String(m.agent)));
    for (const agent of agents) {
      slotsChecked += await this.checkStream(workspace, agent, "turn_id", exists(turns), findings, `recency of ${agent}`);
    }
    slotsChecked += await this.checkStream(workspace, feedStream("turns"), "record_id", exists(turns), findings, "change feed of turns");
    slotsChecked += await this.checkStream(workspace, feedStream("summaries"), "record_id", exists(summaries), findings, "change feed of summaries");

    return {
      workspace,
      healthy: findings.total === 0,
      embedder: this.store.stamp,
      collections,
      tombstones: forgotten.size,
      slots_checked: slotsChecked,
      problem_counts: findings.counts,
      problems: findings.listed,
      problems_truncated: findings.total > findings.listed.length,
    };
  }

  /** Each turn's own recency slot must exist and name it, or query_recent_turns never shows it. */
  private async checkReachable(workspace: string, turns: Map<string, Metadata>, findings: Findings): Promise<number> {
    const recency = await this.store.collection(workspace, "recency");
    const entries = [...turns];
    for (let i = 0; i < entries.length; i += PAGE) {
      const batch = entries.slice(i, i + PAGE);
      const slots = await recency.get({ ids: batch.map(([, m]) => slotId(String(m.agent), Number(m.seq))) });
      const byId = new Map(slots.map((s) => [s.id, s.metadata]));
      for (const [id, m] of batch) {
        const slot = byId.get(slotId(String(m.agent), Number(m.seq)));
        if (slot?.turn_id !== id) findings.add("unreachable_turn", "turns", `its recency slot ${String(m.agent)}#${String(m.seq)} does not name it`, id);
      }
    }
    return entries.length;
  }

  /**
   * Every slot of a sequence must name a record that exists, one that was forgotten, or one the stream itself
   * says was removed later (a summary whose session's turns were all forgotten).
   */
  private async checkStream(
    workspace: string,
    stream: string,
    key: string,
    exists: (id: string) => boolean,
    findings: Findings,
    label: string,
  ): Promise<number> {
    const length = await this.sequences.length(workspace, stream);
    const removed = new Set<string>();
    const missing: Array<{ seq: number; id: string }> = [];
    for (let from = 0; from < length; from += PAGE) {
      const seqs = Array.from({ length: Math.min(PAGE, length - from) }, (_, i) => from + i);
      const slots = await this.sequences.read(workspace, stream, seqs);
      for (const [seq, slot] of slots) {
        const id = String(slot[key]);
        if (slot.op === "remove") removed.add(id);
        else if (!exists(id)) missing.push({ seq, id });
      }
    }
    for (const { seq, id } of missing) {
      if (!removed.has(id)) findings.add("dangling_slot", "recency", `${label} #${seq} names a record that is neither stored nor forgotten`, id);
    }
    return length;
  }
}

function checkVector(findings: Findings, collection: string, record: StoredRecord, dimension: number) {
  if (!record.embedding) findings.add("missing_vector", collection, "the record has no vector", record.id);
  else if (record.embedding.length !== dimension) {
    findings.add("wrong_dimension", collection, `its vector has ${record.embedding.length} dimensions, the stamp says ${dimension}`, record.id);
  }
}

const describe = (stamp: EmbeddingStamp) => `${stamp.model} (${stamp.dimension} dimensions)`;
