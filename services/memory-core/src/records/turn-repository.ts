import type { ChromaStore, Metadata } from "../store/chroma-store.js";
import { storedRecordOf, turnOf, type StoredTurn } from "./stored-turn.js";
import { buildTurnRecord, type TurnWrite } from "./turn-record.js";
import type { Correction, Review } from "./types.js";

/** What a read of turns brings besides their fields: text, vectors, damaged turns (which readers leave out). */
export interface TurnReadOptions {
  withText?: boolean;
  withEmbeddings?: boolean;
  withDamaged?: boolean;
}

/** What a correction changes in a stored turn; the rest of it stays as written. */
export interface TurnAmendment {
  /** Added to its corrections, after those it has. */
  correction?: Correction;
  validUntil?: number;
  supersededBy?: string;
  supersededReason?: string;
  supersedes?: string[];
  review?: { state: Review["state"]; by: string; at: number; reason: string };
}

/** A turn to store: what was written, under its id, with its vector. */
export interface NewTurn {
  id: string;
  embedding: number[];
  write: TurnWrite;
}

/**
 * A workspace's turns in Chroma's `turns` collection, read and written as `StoredTurn`s: the one way up from the
 * collection for the services (the lexical indexes and re-embedding read the collection's records as they are).
 */
export class TurnRepository {
  constructor(private readonly store: ChromaStore) {}

  /** The turns of these ids that are stored, in no particular order. */
  async byIds(workspace: string, ids: readonly string[], options: TurnReadOptions = {}): Promise<StoredTurn[]> {
    const turns = await this.store.collection(workspace, "turns");
    const found = await turns.get({
      ids: [...ids],
      withDocuments: options.withText ?? false,
      withEmbeddings: options.withEmbeddings ?? false,
      withDamaged: options.withDamaged ?? false,
    });
    return found.map(turnOf);
  }

  /** A session's turns (of one agent, when named), found by Chroma's filter: a scan of the collection. */
  async ofSession(workspace: string, sessionId: string, options: TurnReadOptions & { agent?: string } = {}): Promise<StoredTurn[]> {
    const turns = await this.store.collection(workspace, "turns");
    const where = options.agent === undefined ? { session_id: sessionId } : { $and: [{ agent: options.agent }, { session_id: sessionId }] };
    const found = await turns.get({
      where,
      withDocuments: options.withText ?? false,
      withEmbeddings: options.withEmbeddings ?? false,
    });
    return found.map(turnOf);
  }

  /** Stores new turns; an id stored already keeps what it holds (a write racing another: whoever came first). */
  async add(workspace: string, fresh: readonly NewTurn[]): Promise<void> {
    const turns = await this.store.collection(workspace, "turns");
    await turns.add(fresh.map((t) => ({ id: t.id, embedding: t.embedding, ...buildTurnRecord(t.write) })));
  }

  /** Rewrites what a correction changes of a stored turn; its text and vector stay. Answers the turn as it is now. */
  async amend(workspace: string, turn: StoredTurn, amendment: TurnAmendment): Promise<StoredTurn> {
    const [amended] = await this.amendMany(workspace, [{ turn, amendment }]);
    return amended!;
  }

  /** `amend` of several turns in one write to the collection; answers them as they are now, in their order. */
  async amendMany(workspace: string, changes: ReadonlyArray<{ turn: StoredTurn; amendment: TurnAmendment }>): Promise<StoredTurn[]> {
    if (changes.length === 0) return [];
    const records = changes.map(({ turn, amendment }) => {
      const record = storedRecordOf(turn);
      return { ...record, metadata: amendedMetadata(turn, record.metadata, amendment) };
    });
    const turns = await this.store.collection(workspace, "turns");
    await turns.updateMetadata(records.map((r) => ({ id: r.id, metadata: r.metadata })));
    return records.map(turnOf);
  }

  /** Removes turns, text and vectors. */
  async delete(workspace: string, ids: readonly string[]): Promise<void> {
    const turns = await this.store.collection(workspace, "turns");
    await turns.delete(ids);
  }

  async count(workspace: string): Promise<number> {
    return (await this.store.collection(workspace, "turns")).count();
  }

  /** Every turn of the workspace, a page at a time, in the order they were added; damaged ones left out (by the store). */
  async *pages(workspace: string, options: { size: number; withText?: boolean; withEmbeddings?: boolean }): AsyncGenerator<StoredTurn[]> {
    const turns = await this.store.collection(workspace, "turns");
    for await (const page of turns.pages({
      size: options.size,
      withDocuments: options.withText ?? false,
      withEmbeddings: options.withEmbeddings ?? false,
    })) {
      yield page.map(turnOf);
    }
  }
}

function amendedMetadata(turn: StoredTurn, stored: Metadata, amendment: TurnAmendment): Metadata {
  const metadata: Metadata = { ...stored };
  if (amendment.correction) metadata.corrections = JSON.stringify([...turn.corrections, amendment.correction]);
  if (amendment.validUntil !== undefined) metadata.valid_until = amendment.validUntil;
  if (amendment.supersededBy !== undefined) metadata.superseded_by = amendment.supersededBy;
  if (amendment.supersededReason !== undefined) metadata.superseded_reason = amendment.supersededReason;
  if (amendment.supersedes !== undefined) metadata.supersedes = JSON.stringify(amendment.supersedes);
  if (amendment.review) {
    metadata.review_state = amendment.review.state;
    metadata.review_by = amendment.review.by;
    metadata.review_at = amendment.review.at;
    metadata.review_reason = amendment.review.reason;
  }
  return metadata;
}
