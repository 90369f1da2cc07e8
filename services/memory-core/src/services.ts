import { DEFAULT_REVIEW_PER_CALL } from "./config.js";
import { AdminService } from "./admin/admin-service.js";
import { IntegrityCheck } from "./admin/integrity.js";
import { RecordExport } from "./admin/record-export.js";
import { RecordImport } from "./admin/record-import.js";
import { Reembedding } from "./records/reembedding.js";
import { BulkWrites } from "./domain/bulk-writes.js";
import { CorrectionService } from "./domain/correction-service.js";
import { MessageService } from "./domain/messages.js";
import { Corrections } from "./domain/corrections.js";
import { QueryService } from "./domain/query-service.js";
import { RecencyIndex } from "./domain/recency.js";
import { SessionTurns } from "./domain/session-turns.js";
import { TeamStatus } from "./domain/team-status.js";
import { WriteService } from "./domain/write-service.js";
import type { Embedder } from "./embeddings/embedder.js";
import { LexicalIndexes, type SnapshotOptions } from "./lexical/indexes.js";
import type { Logger } from "./logger.js";
import { HybridRetrieval } from "./retrieval/hybrid-retrieval.js";
import { DEFAULT_TUNING, type RetrievalTuning } from "./retrieval/retrieval-tuning.js";
import type { Storage } from "./storage.js";

/** The memory domain by concern, each for one principal's scope per call: what the operations' handlers call. */
export interface Services {
  writes: WriteService;
  queries: QueryService;
  corrections: CorrectionService;
  admin: AdminService;
  messages: MessageService;
}

export interface ServiceOptions {
  now?: () => number;
  tuning?: RetrievalTuning;
  log?: Logger;
  snapshots?: SnapshotOptions;
  /** The agents of a workspace that import history (importer tokens): not teammates in query_team_status. */
  importers?: (workspace: string) => ReadonlySet<string>;
  /** The agents of a workspace a message can be sent to (its tokens' agents). */
  members?: (workspace: string) => ReadonlySet<string>;
  /** The most memories one `review_matching` call reviews (Config.reviewPerCall). */
  reviewPerCall?: number;
}

/** The services and the lexical indexes they share; the indexes' ranking thread stops with `close`. */
export interface ComposedServices extends Services {
  lexical: LexicalIndexes;
  close(): Promise<void>;
}

/** Builds every part once, over one storage and one embedder, and hands each service the parts it uses. */
export function composeServices(storage: Storage, embedder: Embedder, options: ServiceOptions = {}): ComposedServices {
  const now = options.now ?? Date.now;
  const tuning = options.tuning ?? DEFAULT_TUNING;
  const lexical = new LexicalIndexes(storage, tuning, {
    now,
    ...(options.log ? { log: options.log } : {}),
    ...(options.snapshots ? { snapshots: options.snapshots } : {}),
  });
  const sessions = new SessionTurns(storage.turns, lexical);
  const recency = new RecencyIndex(storage.turns, storage.sequences, sessions);
  const corrections = new Corrections(storage, now);
  const retrieval = new HybridRetrieval(storage.indexed, embedder, lexical, tuning);
  const messages = new MessageService(storage.mailbox, options.members ?? (() => new Set()), now);
  const team = new TeamStatus(lexical, recency, options.importers ?? (() => new Set()), (workspace, agent) =>
    messages.unread(workspace, agent),
  );
  const bulk = new BulkWrites(storage, embedder, corrections);
  return {
    writes: new WriteService(storage, embedder, bulk, retrieval, now, options.log),
    queries: new QueryService(storage, { recency, sessions, retrieval, corrections, team }, now),
    corrections: new CorrectionService(storage, corrections, lexical, options.reviewPerCall ?? DEFAULT_REVIEW_PER_CALL),
    admin: new AdminService(
      storage,
      {
        exports: new RecordExport(storage),
        imports: new RecordImport(storage, embedder),
        integrity: new IntegrityCheck(storage, now),
        reembedding: new Reembedding(storage.store, embedder),
      },
      now,
    ),
    messages,
    lexical,
    close: () => lexical.close(),
  };
}
