/**
 * The best `capacity` entries offered so far, kept as positions into the caller's arrays: higher score first,
 * and among equal scores the lower document number (the older record). A min-heap on that order, so the
 * weakest is the one to evict; typed arrays, so offering an entry allocates nothing.
 */
export class BoundedHeap {
  private readonly heap: Int32Array;
  private size = 0;

  constructor(
    private readonly capacity: number,
    private readonly scores: Float64Array,
    private readonly numbers: ArrayLike<number>,
  ) {
    this.heap = new Int32Array(Math.max(0, capacity));
  }

  /** Whether the entry at `position` would enter. */
  wouldTake(position: number): boolean {
    if (this.size < this.capacity) return true;
    return this.capacity > 0 && this.below(this.heap[0]!, position);
  }

  /** Adds the entry at `position`, evicting the weakest when full; call only when `wouldTake` said yes. */
  push(position: number): void {
    if (this.size < this.capacity) {
      this.heap[this.size] = position;
      this.siftUp(this.size++);
    } else {
      this.heap[0] = position;
      this.siftDown(0);
    }
  }

  /** Whether it holds `capacity` entries: from then on an entry enters only by evicting the weakest. */
  get full(): boolean {
    return this.size === this.capacity;
  }

  /** The lowest score held once full; −∞ before, when any entry would enter. */
  floor(): number {
    return this.capacity > 0 && this.size === this.capacity ? this.scores[this.heap[0]!]! : Number.NEGATIVE_INFINITY;
  }

  /** The positions held, in no order. */
  held(): Int32Array {
    return this.heap.subarray(0, this.size);
  }

  /** The positions held, best first. */
  drain(): number[] {
    const held = Array.from(this.heap.subarray(0, this.size));
    const { scores, numbers } = this;
    return held.sort((a, b) => scores[b]! - scores[a]! || numbers[a]! - numbers[b]!);
  }

  /** Whether the entry at `a` ranks below the one at `b`. */
  private below(a: number, b: number): boolean {
    const sa = this.scores[a]!;
    const sb = this.scores[b]!;
    return sa < sb || (sa === sb && this.numbers[a]! > this.numbers[b]!);
  }

  private siftUp(i: number): void {
    const heap = this.heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.below(heap[i]!, heap[parent]!)) return;
      const item = heap[i]!;
      heap[i] = heap[parent]!;
      heap[parent] = item;
      i = parent;
    }
  }

  private siftDown(i: number): void {
    const heap = this.heap;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let weakest = i;
      if (left < this.size && this.below(heap[left]!, heap[weakest]!)) weakest = left;
      if (right < this.size && this.below(heap[right]!, heap[weakest]!)) weakest = right;
      if (weakest === i) return;
      const item = heap[i]!;
      heap[i] = heap[weakest]!;
      heap[weakest] = item;
      i = weakest;
    }
  }
}
