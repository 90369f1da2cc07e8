import type { Bm25Hit } from "./bm25-index.js";

export interface Ranked<T> {
  /** Document number: among equal scores the older record ranks first. */
  n: number;
  hit: Bm25Hit<T>;
}

/** Whether `a` ranks below `b`. */
const below = <T>(a: Ranked<T>, b: Ranked<T>) => a.hit.score < b.hit.score || (a.hit.score === b.hit.score && a.n > b.n);

/** The best `capacity` hits seen so far: a min-heap on rank, so the weakest is the one to evict. */
export class BoundedHeap<T> {
  private readonly items: Array<Ranked<T>> = [];

  constructor(private readonly capacity: number) {}

  /** Scores below this cannot enter (−∞ until the heap is full). */
  get floor(): number {
    return this.items.length < this.capacity ? Number.NEGATIVE_INFINITY : this.items[0]!.hit.score;
  }

  wouldTake(score: number, n: number): boolean {
    if (this.items.length < this.capacity) return true;
    const weakest = this.items[0]!;
    return score > weakest.hit.score || (score === weakest.hit.score && n < weakest.n);
  }

  push(item: Ranked<T>): void {
    if (this.items.length < this.capacity) {
      this.items.push(item);
      this.siftUp(this.items.length - 1);
    } else {
      this.items[0] = item;
      this.siftDown(0);
    }
  }

  drain(): Array<Bm25Hit<T>> {
    // Best first: higher score, then the lower document number (the same order as `below`, reversed).
    return this.items.sort((a, b) => b.hit.score - a.hit.score || a.n - b.n).map((r) => r.hit);
  }

  private siftUp(i: number): void {
    const items = this.items;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!below(items[i]!, items[parent]!)) return;
      const item = items[i]!;
      items[i] = items[parent]!;
      items[parent] = item;
      i = parent;
    }
  }

  private siftDown(i: number): void {
    const items = this.items;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let weakest = i;
      if (left < items.length && below(items[left]!, items[weakest]!)) weakest = left;
      if (right < items.length && below(items[right]!, items[weakest]!)) weakest = right;
      if (weakest === i) return;
      const item = items[i]!;
      items[i] = items[weakest]!;
      items[weakest] = item;
      i = weakest;
    }
  }
}
