import { internal } from "../errors.js";
import type { Metadata, Scalar, Where } from "./chroma-store.js";

/**
 * How a collection's records are laid out in Chroma. Chroma keeps each metadata key of a record as a row of its
 * own, indexed, so an `add` costs per key as well as per record (docs/benchmarks.md, session 14). A packed
 * collection keeps only the keys its filters name as keys of their own and the rest in one JSON string under
 * `fields`; everything above the store sees the record's metadata as one flat object either way. A collection
 * with a `textKey` keeps a record's text under that metadata key rather than as Chroma's document, which Chroma
 * also indexes for full-text search that Cairn does not use (docs/benchmarks.md, session 15).
 */
export interface MetadataLayout {
  /** The metadata as Chroma is to keep it. */
  stored(metadata: Metadata): Metadata;
  /** The metadata as it was written, from what Chroma keeps. */
  read(stored: Metadata): Metadata;
  /** Refuses a filter on a key Chroma does not keep on its own (a filter there would match nothing). */
  check(where: Where): void;
  /**
   * The metadata key that holds a record's text, kept on its own (an update, which Chroma merges into the
   * record's keys, leaves it as it was); none when the text is Chroma's document.
   */
  readonly textKey?: string;
}

const PACKED_KEY = "fields";

export const FLAT_LAYOUT: MetadataLayout = {
  stored: (metadata) => metadata,
  read: (stored) => stored,
  check: () => undefined,
};

/**
 * Keys outside `filterable` go into `fields`. Records stored before a collection was packed have every key of
 * their own and no `fields`, and read as they are; one rewritten since (a correction, a review) has its old keys
 * beside `fields` (Chroma merges an update's keys into the record's), and `fields` holds the newer values.
 * Records stored before a collection had a `textKey` keep their text as Chroma's document, and read so.
 */
export function packedLayout(filterable: readonly string[], options: { textKey?: string } = {}): MetadataLayout {
  const own = new Set(filterable);
  const { textKey } = options;
  return {
    ...(textKey ? { textKey } : {}),
    stored(metadata) {
      const out: Metadata = {};
      const rest: Metadata = {};
      let packed = false;
      for (const [key, value] of Object.entries(metadata)) {
        if (own.has(key)) out[key] = value;
        else {
          rest[key] = value;
          packed = true;
        }
      }
      if (packed) out[PACKED_KEY] = JSON.stringify(rest);
      return out;
    },
    read(stored) {
      const out: Metadata = {};
      for (const [key, value] of Object.entries(stored)) if (key !== PACKED_KEY && key !== textKey) out[key] = value;
      const packed = stored[PACKED_KEY];
      if (typeof packed === "string") for (const [key, value] of Object.entries(parseObject(packed))) if (isScalar(value)) out[key] = value;
      return out;
    },
    check(where) {
      for (const key of keysOf(where)) {
        if (!own.has(key)) throw internal();
      }
    },
  };
}

function parseObject(text: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(text) as unknown;
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const isScalar = (value: unknown): value is Scalar => typeof value === "string" || typeof value === "number" || typeof value === "boolean";

/** The metadata keys a filter names, through `$and` and `$or`. */
function* keysOf(where: Where): Generator<string> {
  for (const [key, value] of Object.entries(where)) {
    if (key === "$and" || key === "$or") {
      for (const clause of value as Where[]) yield* keysOf(clause);
    } else yield key;
  }
}
