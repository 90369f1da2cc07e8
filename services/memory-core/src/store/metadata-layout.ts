import { internal } from "../errors.js";
import type { Metadata, Scalar, Where } from "./record-types.js";

/**
 * How a collection's records are laid out in Chroma. Chroma keeps each metadata key of a record as a row of its
 * own, indexed, so an `add` costs per key as well as per record (docs/benchmarks.md, "A store of N turns":
 * "turns' metadata packed"). A packed
 * collection keeps only the keys its filters name as keys of their own and the rest in one JSON string under
 * `fields`; everything above the store sees the record's metadata as one flat object either way. A collection
 * whose text is kept in metadata keeps a record's text under a metadata key rather than as Chroma's document,
 * which Chroma also indexes for full-text search that Cairn does not use (docs/benchmarks.md, "A store of N
 * turns": "a turn's text out of Chroma's full-text index").
 */
export interface MetadataLayout {
  /** The metadata as Chroma is to keep it. */
  stored(metadata: Metadata): Metadata;
  /** The metadata as it was written, from what Chroma keeps. */
  read(stored: Metadata): Metadata;
  /** Refuses a filter on a key Chroma does not keep on its own (a filter there would match nothing). */
  check(where: Where): void;
  /**
   * Whether a record's text is kept in its metadata, under a key of its own (an update, which Chroma merges into
   * the record's keys, leaves it as it was), rather than as Chroma's document.
   */
  readonly textInMetadata: boolean;
  /** `stored` metadata with the record's text, as this layout keeps it in metadata. */
  withText(stored: Metadata, text: string): Metadata;
  /** A record's text from the metadata Chroma keeps; undefined when it is not there (Chroma's document holds it). */
  textOf(stored: Metadata): string | undefined;
}

/**
 * Chroma keeps every string of a record's metadata in SQLite's index of metadata values too (by key, then value),
 * whether or not anything filters on it. A text or a JSON object sorts at a random place in that index, so each
 * record written touches a page of it that no recent write touched: once the index outgrows what stays in memory,
 * every write reads pages from disk (docs/benchmarks.md, "A store of N turns": "stamped strings"). A string that
 * begins with the time it was
 * written sorts after the strings written before it, and the index grows at its end. Fixed width, so that the
 * order of the stamps is the order of the times (base 36 of the milliseconds: nine characters until the year
 * 5000).
 */
const WRITE_STAMP_WIDTH = 9;
const writeStamp = (): string => Date.now().toString(36).padStart(WRITE_STAMP_WIDTH, "0");
/** The member of a packed JSON object that holds its write stamp: written first, so the JSON sorts by it. */
const STAMP_MEMBER = "";

/** `fields` as one JSON string that sorts in the order written (see `writeStamp`). */
export function packFields(fields: Metadata): string {
  return JSON.stringify({ [STAMP_MEMBER]: writeStamp(), ...fields });
}

/** The fields `packFields` packed (or a JSON object without a stamp, which reads alike): not JSON, none. */
export function unpackFields(packed: string): Record<string, unknown> {
  const { [STAMP_MEMBER]: _stamp, ...fields } = parseObject(packed);
  return fields;
}

const PACKED_KEY = "fields";
/** A record's text, after its write stamp. */
const TEXT_KEY = "stamped_text";
/** A record's text kept unstamped under its own key (design.md, "Stored-format changes"): read, never written. */
const UNSTAMPED_TEXT_KEY = "text";

export const FLAT_LAYOUT: MetadataLayout = {
  stored: (metadata) => metadata,
  read: (stored) => stored,
  check: () => undefined,
  textInMetadata: false,
  withText: (stored) => stored,
  textOf: () => undefined,
};

/**
 * Keys outside `filterable` go into `fields`. A record stored flat has every key of its own and no `fields`, and
 * reads as it is; a flat record rewritten here (a correction, a review) keeps its flat keys beside `fields`
 * (Chroma merges an update's keys into the record's), and `fields` holds the newer values. With
 * `textInMetadata`, a record's text is kept under `stamped_text`, after its write stamp; a record whose text is
 * Chroma's document, or unstamped under `text`, reads from there.
 */
export function packedLayout(filterable: readonly string[], options: { textInMetadata?: boolean } = {}): MetadataLayout {
  const own = new Set(filterable);
  const textInMetadata = options.textInMetadata ?? false;
  return {
    textInMetadata,
    withText: (stored, text) => ({ ...stored, [TEXT_KEY]: writeStamp() + text }),
    textOf(stored) {
      const stamped = stored[TEXT_KEY];
      if (typeof stamped === "string") return stamped.slice(WRITE_STAMP_WIDTH);
      const unstamped = stored[UNSTAMPED_TEXT_KEY];
      return typeof unstamped === "string" ? unstamped : undefined;
    },
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
      if (packed) out[PACKED_KEY] = packFields(rest);
      return out;
    },
    read(stored) {
      const out: Metadata = {};
      for (const [key, value] of Object.entries(stored)) {
        if (key === PACKED_KEY || (textInMetadata && (key === TEXT_KEY || key === UNSTAMPED_TEXT_KEY))) continue;
        out[key] = value;
      }
      const packed = stored[PACKED_KEY];
      if (typeof packed === "string")
        for (const [key, value] of Object.entries(unpackFields(packed))) if (isScalar(value)) out[key] = value;
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
