import type { Worker } from "node:worker_threads";
import { spawnModuleWorker } from "../worker-thread.js";
import type { AnalyzedDocument, LexicalHit, LexicalQuery, RankedDocument, RankingOptions, RankingStats } from "./ranking.js";
import type { SnapshotStretch } from "./snapshot.js";

export type RankingRequest =
  | { type: "create"; ranking: number; options: RankingOptions }
  | { type: "drop"; ranking: number }
  | { type: "put"; ranking: number; documents: Array<RankedDocument | AnalyzedDocument> }
  | { type: "remove"; ranking: number; id: string }
  | { type: "query"; ranking: number; call: number; query: LexicalQuery }
  | { type: "stats"; ranking: number; call: number }
  | { type: "prepare"; ranking: number; call: number }
  | { type: "dump"; ranking: number; call: number; from: number; limit: number }
  | { type: "heap"; call: number };

export type RankingReply =
  | { call: number; hits: LexicalHit[] }
  | { call: number; stats: RankingStats | undefined }
  | { call: number; heapUsedBytes: number }
  | { call: number; prepared: true }
  | { call: number; dump: SnapshotStretch }
  | { call: number; failure: string };

/** One collection's lexical ranking, held by the ranking thread; changes apply in the order they are made. */
export interface RankingHandle {
  /** False once the thread holding the ranking has stopped: its owner builds it again. */
  readonly alive: boolean;
  put(document: RankedDocument | AnalyzedDocument): void;
  remove(id: string): void;
  /**
   * A stretch of its records as a snapshot's lines (Ranking.dump, snapshot.ts's `snapshotLines`), made on the
   * ranking thread, after every change made before the call.
   */
  dump(from: number, limit: number): Promise<SnapshotStretch>;
  /** Answered after every change made before the call. */
  query(query: LexicalQuery): Promise<LexicalHit[]>;
  /** Its sizes, after every change made before the call (for /metrics); undefined once dropped. */
  stats(): Promise<RankingStats | undefined>;
  /**
   * Answered after every change made before the call, once the ranking has allocated what a query over its
   * records needs: a load's records reach the thread faster than it indexes them, and the first query after
   * it would otherwise wait for them and then pay for that allocation.
   */
  prepare(): Promise<void>;
  drop(): void;
}

/** The ranking thread stopped: the query is answered again once its index is rebuilt. */
export class RankingThreadStopped extends Error {
  constructor() {
    super("the lexical ranking thread stopped");
  }
}

/**
 * Where this process's lexical rankings run: one worker thread for all of them. BM25 scoring holds a thread
 * for a millisecond or more at 100k records; on a thread of its own it overlaps the dense side's Chroma query
 * instead of delaying it and every other request. The thread starts with the first ranking, never keeps the
 * process alive while idle, and is started again by the next ranking created after it stops.
 */
export class RankingHost {
  private thread: RankingThread | undefined;
  private nextRanking = 1;

  constructor(private readonly onStopped: (error: unknown) => void = () => undefined) {}

  create(options: RankingOptions): RankingHandle {
    if (!this.thread?.running) this.thread = new RankingThread(this.onStopped);
    const thread = this.thread;
    const ranking = this.nextRanking++;
    thread.send({ type: "create", ranking, options });
    return {
      get alive() {
        return thread.running;
      },
      put: (document) => thread.put(ranking, document),
      remove: (id) => thread.send({ type: "remove", ranking, id }),
      query: (query) => thread.query(ranking, query),
      dump: async (from, limit) => {
        const reply = await thread.ask({ type: "dump", ranking, from, limit });
        if (!("dump" in reply)) throw new Error("the ranking thread sent no dump");
        return reply.dump;
      },
      stats: () => thread.ask({ type: "stats", ranking }).then((reply) => ("stats" in reply ? reply.stats : undefined)),
      prepare: () => thread.ask({ type: "prepare", ranking }).then(() => undefined),
      drop: () => thread.send({ type: "drop", ranking }),
    };
  }

  /** The V8 heap the ranking thread uses (all its rankings together); undefined while no thread runs. */
  async heapUsedBytes(): Promise<number | undefined> {
    if (!this.thread?.running) return undefined;
    const reply = await this.thread.ask({ type: "heap" }).catch(() => undefined);
    return reply && "heapUsedBytes" in reply ? reply.heapUsedBytes : undefined;
  }

  async close(): Promise<void> {
    await this.thread?.stop();
    this.thread = undefined;
  }
}

class RankingThread {
  private readonly worker: Worker;
  private readonly calls = new Map<number, { resolve: (reply: RankingReply) => void; reject: (error: Error) => void }>();
  private queue: RankingRequest[] = [];
  private nextCall = 1;
  running = true;

  constructor(onStopped: (error: unknown) => void) {
    this.worker = spawnModuleWorker(import.meta.url, "ranking-worker");
    this.worker.unref();
    this.worker.on("message", (reply: RankingReply) => this.settle(reply));
    this.worker.on("error", (error) => {
      this.running = false;
      onStopped(error);
    });
    this.worker.on("exit", () => {
      this.running = false;
      for (const { reject } of this.calls.values()) reject(new RankingThreadStopped());
      this.calls.clear();
    });
  }

  /** Queued; requests made in one turn of the event loop go over in one message. */
  send(request: RankingRequest): void {
    if (!this.running) return;
    this.queue.push(request);
    if (this.queue.length === 1) queueMicrotask(() => this.flush());
  }

  put(ranking: number, document: RankedDocument | AnalyzedDocument): void {
    const last = this.queue.at(-1);
    if (last?.type === "put" && last.ranking === ranking) last.documents.push(document);
    else this.send({ type: "put", ranking, documents: [document] });
  }

  query(ranking: number, query: LexicalQuery): Promise<LexicalHit[]> {
    return this.ask({ type: "query", ranking, query }).then((reply) => ("hits" in reply ? reply.hits : []));
  }

  /** A request the thread answers; its failure rejects. */
  ask(request: DistributiveOmit<Extract<RankingRequest, { call: number }>, "call">): Promise<RankingReply> {
    if (!this.running) return Promise.reject(new RankingThreadStopped());
    const call = this.nextCall++;
    const answer = new Promise<RankingReply>((resolve, reject) => this.calls.set(call, { resolve, reject }));
    // Only an awaited answer keeps the process alive.
    if (this.calls.size === 1) this.worker.ref();
    this.send({ ...request, call } as RankingRequest);
    this.flush(); // at once: the thread starts scoring while this one goes on with the dense side
    return answer;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.worker.terminate();
  }

  private flush(): void {
    if (this.queue.length === 0 || !this.running) return;
    this.worker.postMessage(this.queue);
    this.queue = [];
  }

  private settle(reply: RankingReply): void {
    const call = this.calls.get(reply.call);
    if (!call) return;
    this.calls.delete(reply.call);
    if (this.calls.size === 0) this.worker.unref();
    if ("failure" in reply) call.reject(new Error(`lexical ranking failed: ${reply.failure}`));
    else call.resolve(reply);
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
