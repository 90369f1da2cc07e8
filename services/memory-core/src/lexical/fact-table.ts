import type { FactValue, Facts } from "../records/filters.js";

const ABSENT = 0;
const NUMBER = 1;
const INTERNED = 2;

/**
 * One metadata field of every record, by record number: a number in a Float64Array, anything else as a code
 * into the field's distinct values (an agent, a session, a kind recur across thousands of records: each is
 * held once). A record costs a few bytes per field, where a metadata object per record cost hundreds.
 */
class Column {
  tags = new Uint8Array(0);
  numbers: Float64Array | undefined;
  codes: Uint32Array | undefined;
  readonly values: FactValue[] = [];
  private readonly codeOf = new Map<FactValue, number>();

  set(n: number, value: FactValue | undefined): void {
    if (value === undefined) {
      if (n < this.tags.length) this.tags[n] = ABSENT;
      return;
    }
    this.tags = grown(this.tags, n, (size) => new Uint8Array(size));
    if (typeof value === "number") {
      this.numbers = grown(this.numbers ?? new Float64Array(0), n, (size) => new Float64Array(size));
      this.numbers[n] = value;
      this.tags[n] = NUMBER;
      return;
    }
    let code = this.codeOf.get(value);
    if (code === undefined) {
      code = this.values.length;
      this.values.push(value);
      this.codeOf.set(value, code);
    }
    this.codes = grown(this.codes ?? new Uint32Array(0), n, (size) => new Uint32Array(size));
    this.codes[n] = code;
    this.tags[n] = INTERNED;
  }

  get(n: number): FactValue | undefined {
    const tag = n < this.tags.length ? this.tags[n] : ABSENT;
    if (tag === NUMBER) return this.numbers![n];
    if (tag === INTERNED) return this.values[this.codes![n]!];
    return undefined;
  }

  /** The code of record `n`'s value when it is not a number (equal values, equal codes); -1 otherwise. */
  code(n: number): number {
    return n < this.tags.length && this.tags[n] === INTERNED ? this.codes![n]! : -1;
  }
}

/**
 * The scalar metadata of a collection's records, column by column, by record number (numbers are never
 * reused: a replaced record gets a new one). What a query filters on and what turn context orders by are read
 * from here; nothing else of a record is kept.
 */
export class FactTable {
  private readonly columns = new Map<string, Column>();

  set(n: number, facts: Facts): void {
    for (const [field, value] of Object.entries(facts)) {
      let column = this.columns.get(field);
      if (!column) {
        column = new Column();
        this.columns.set(field, column);
      }
      column.set(n, value);
    }
  }

  /** Forgets record `n`'s values (its number is not used again). */
  clear(n: number): void {
    for (const column of this.columns.values()) column.set(n, undefined);
  }

  get(n: number, field: string): FactValue | undefined {
    return this.columns.get(field)?.get(n);
  }

  /** A reader of one field, for a loop over many records. */
  reader(field: string): (n: number) => FactValue | undefined {
    const column = this.columns.get(field);
    return column ? (n) => column.get(n) : () => undefined;
  }

  /** See Column.code. */
  code(n: number, field: string): number {
    return this.columns.get(field)?.code(n) ?? -1;
  }

  /** Record `n`'s metadata as an object. */
  metadata(n: number): Facts {
    const out: Facts = {};
    for (const [field, column] of this.columns) {
      const value = column.get(n);
      if (value !== undefined) out[field] = value;
    }
    return out;
  }
}

/** The table, or a copy half as long again (and at least 1024 long), so that index `n` fits. */
function grown<T extends ArrayLike<number> & { set(array: ArrayLike<number>): void }>(table: T, n: number, make: (length: number) => T): T {
  if (n < table.length) return table;
  const larger = make(Math.max(n + 1, 1024, table.length + (table.length >> 1)));
  larger.set(table);
  return larger;
}
