/** Turns texts into vectors. One instance per process; implementations batch what they are given. */
export interface Embedder {
  /** Stamped on every collection: a mismatch at start is refused. */
  readonly model: string;
  readonly dimension: number;
  embed(texts: readonly string[]): Promise<number[][]>;
  /** Stops what the embedder runs beside the caller (the local model's thread); embedding fails afterwards. */
  close?(): Promise<void>;
}
