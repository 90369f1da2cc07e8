import { AuditLog } from "./ledger/audit-log.js";
import { ChangeFeed } from "./ledger/change-feed.js";
import { KeyedMarkers } from "./ledger/keyed-markers.js";
import { Ledger } from "./ledger/ledger.js";
import { Mailbox } from "./ledger/mailbox.js";
import { Quarantine } from "./ledger/quarantine.js";
import { Sequences } from "./ledger/sequences.js";
import { SessionLeases } from "./ledger/session-leases.js";
import { Tombstones } from "./ledger/tombstones.js";
import { Verifications } from "./ledger/verifications.js";
import { IndexedCollections } from "./records/indexed-collections.js";
import { StoredRecords } from "./records/stored-records.js";
import { SummaryRepository } from "./records/summary-repository.js";
import { TurnRepository } from "./records/turn-repository.js";
import type { ChromaStore } from "./store/chroma-store.js";

/**
 * The storage port: the one Chroma and every kind of record kept in it, each behind the object that reads and
 * writes it, built once per process and handed to the services. One `Sequences` holds every stream's length
 * hints and group commit, so that the writes, corrections, imports and repairs of a process take slots from
 * one queue and never from two caches that disagree.
 */
export interface Storage {
  /** Chroma itself: the records' collections (see store/chroma-store.ts). */
  readonly store: ChromaStore;
  readonly turns: TurnRepository;
  readonly summaries: SummaryRepository;
  /** The embedded collections as the derived indexes read them. */
  readonly indexed: IndexedCollections;
  /** The embedded collections as stored, for backups. */
  readonly records: StoredRecords;
  readonly ledger: Ledger;
  readonly sequences: Sequences;
  readonly feed: ChangeFeed;
  readonly audit: AuditLog;
  readonly tombstones: Tombstones;
  readonly quarantine: Quarantine;
  readonly markers: KeyedMarkers;
  readonly verifications: Verifications;
  /** Messages between a workspace's agents and their read marks (see ledger/mailbox.ts). */
  readonly mailbox: Mailbox;
  /** A summarizer's leases of sessions, held under its own name (see ledger/session-leases.ts). */
  sessionLeases(options: { ttlMs: number; holder: string; now?: () => number }): SessionLeases;
}

export function openStorage(store: ChromaStore, now: () => number = Date.now): Storage {
  const ledger = new Ledger(store);
  const sequences = new Sequences(ledger, now);
  const tombstones = new Tombstones(ledger);
  const quarantine = new Quarantine(ledger);
  const records = new StoredRecords(store);
  return {
    store,
    turns: new TurnRepository(store),
    summaries: new SummaryRepository(store),
    indexed: new IndexedCollections(store),
    records,
    ledger,
    sequences,
    feed: new ChangeFeed(sequences),
    audit: new AuditLog(records, sequences, tombstones, quarantine),
    tombstones,
    quarantine,
    markers: new KeyedMarkers(ledger),
    verifications: new Verifications(ledger),
    mailbox: new Mailbox(ledger, sequences, now),
    sessionLeases: ({ ttlMs, holder, now: clock }) => new SessionLeases(ledger, ttlMs, holder, clock ?? now),
  };
}
