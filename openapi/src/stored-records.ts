/**
 * What every reader of a stored record relies on in its metadata (an `ExportedRecord`'s, as memory-core stores it):
 * checked by memory-core where Chroma's metadata becomes a record (its store's `get`) and before `import_records`
 * writes one, and by `cairn restore` before it sends anything. Chroma keeps whatever it is given: a tampered backup,
 * an import or a hand-edited record can hold a time no date has, a count that is text, or a packed `fields` that is
 * not JSON (whose keys then read as missing). Such a record is damaged: memory-core's readers leave it out,
 * `get_memory` names it, and `verify_store` reports it for `repair_store` to quarantine, rather than one record
 * failing every read of its workspace.
 */

/** A record's metadata: scalars by key. */
type Metadata = Record<string, string | number | boolean>;

/** `valid_until` of a memory that still holds: Chroma cannot filter on a missing key, so "open" is a date (the last a Date holds). */
export const OPEN_VALIDITY = 8_640_000_000_000_000;

/** The earliest and latest instants a stored time may name: the years an RFC 3339 date-time spells (0000-9999). */
export const EARLIEST_TIME = Date.parse("0000-01-01T00:00:00.000Z");
export const LATEST_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** One field of a record that fails its check: the field's name and what is wrong with it. */
export interface Damage {
  field: string;
  problem: string;
}

type Check = (value: unknown) => string | undefined;

const shown = (value: unknown): string => {
  const text = typeof value === "string" ? JSON.stringify(value) : String(value);
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
};

const time: Check = (v) =>
  typeof v === "number" && Number.isInteger(v) && v >= EARLIEST_TIME && v <= LATEST_TIME
    ? undefined
    : `is ${shown(v)}, not a time in milliseconds between the years 0000 and 9999`;
/** `valid_until` holds a time, or the far date that means "still holds". */
const validity: Check = (v) => (v === OPEN_VALIDITY ? undefined : time(v));
const count: Check = (v) =>
  typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? undefined : `is ${shown(v)}, not a count (an integer from 0)`;
const text: Check = (v) => (typeof v === "string" && v.length > 0 ? undefined : `is ${shown(v)}, not a non-empty string`);
const boolean: Check = (v) => (typeof v === "boolean" ? undefined : `is ${shown(v)}, not true or false`);
/** A JSON list whose every item passes `item`: readers take the items as they are (a `null` check would fail them). */
const jsonList =
  (item: (value: unknown) => boolean, items: string): Check =>
  (v) => {
    if (typeof v !== "string") return `is ${shown(v)}, not a JSON list`;
    let parsed: unknown;
    try {
      parsed = JSON.parse(v);
    } catch {
      return `is ${shown(v)}, not JSON`;
    }
    if (!Array.isArray(parsed)) return `is ${shown(v)}, not a JSON list`;
    return parsed.every(item) ? undefined : `is ${shown(v)}, not a JSON list of ${items}`;
  };
const strings = jsonList((x) => typeof x === "string", "strings");
/** A code citation (`code`): a JSON object whose `paths` list names each path as a string. */
const citation: Check = (v) => {
  if (typeof v !== "string") return `is ${shown(v)}, not a JSON object`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(v);
  } catch {
    return `is ${shown(v)}, not JSON`;
  }
  const paths = typeof parsed === "object" && parsed !== null ? (parsed as { paths?: unknown }).paths : undefined;
  return Array.isArray(paths) &&
    paths.every((p) => typeof p === "object" && p !== null && typeof (p as { path?: unknown }).path === "string")
    ? undefined
    : `is ${shown(v)}, not a code citation with a list of paths`;
};
const objects = jsonList((x) => typeof x === "object" && x !== null && !Array.isArray(x), "objects");

interface Rule {
  /** The id's prefix, which names the kind (`t_` a turn, `s_` a summary). */
  prefix: string;
  required: Record<string, Check>;
  /** Fields every writer stores and a record to be written must hold, though a reader has a default for them. */
  written: Record<string, Check>;
  optional: Record<string, Check>;
}

const TURN: Rule = {
  prefix: "t_",
  required: { agent: text, session_id: text, recorded_at: time, prompt_chars: count, thought_chars: count },
  // A turn without them would match no search at all: Chroma cannot filter on a missing key.
  written: { valid_from: time, valid_until: validity },
  optional: {
    kind: text,
    seq: count,
    occurred_at: time,
    review_at: time,
    trusted: boolean,
    tags: strings,
    refs: strings,
    code: citation,
    cited_paths: text,
    checks: objects,
    supersedes: strings,
    corrections: objects,
  },
};

const SUMMARY: Rule = {
  prefix: "s_",
  written: {},
  required: { session_id: text, first_turn_at: time, last_turn_at: time, generated_at: time },
  optional: {
    covered_through: time,
    turn_count: count,
    agents: strings,
    decisions: objects,
    dropped: objects,
    open_questions: strings,
    next_steps: strings,
  },
};

const TOMBSTONE: Rule = { prefix: "t_", required: { forgotten_at: time, forgotten_by: text }, written: {}, optional: {} };

/** Any string, the empty one too (a message's subject). */
const anyText: Check = (v) => (typeof v === "string" ? undefined : `is ${shown(v)}, not a string`);
/** What a record of `messages` is: a message, or a read mark. */
const mailKind: Check = (v) => (v === "message" || v === "read" ? undefined : `is ${shown(v)}, not "message" or "read"`);
/** An agent's name as tokens name agents (the contract's `AgentName`); `team` is one too. */
const agentName: Check = (v) =>
  typeof v === "string" && /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(v) ? undefined : `is ${shown(v)}, not an agent's name`;
const messageId: Check = (v) => (typeof v === "string" && /^m_[0-9a-f]{32}$/.test(v) ? undefined : `is ${shown(v)}, not a message id`);

/** A message of the mailbox as `export_records` lists it: its body is the document. */
const MESSAGE: Rule = {
  prefix: "m_",
  required: { kind: mailKind, from: agentName, to: agentName, subject: anyText, digest: text, sent_at: time },
  written: {},
  optional: { memory_ids: anyText, session_ids: strings },
};

/** An agent's read mark of a message. */
const READ_MARK: Rule = { prefix: "m_", required: { kind: mailKind, reader: agentName, message_id: messageId }, written: {}, optional: {} };

const RULES = { turns: TURN, summaries: SUMMARY, tombstones: TOMBSTONE, messages: MESSAGE } as const;
export type ValidatedCollection = keyof typeof RULES;

/** The rule a record is checked by: its collection's, and in `messages` its kind's. */
const ruleOf = (collection: ValidatedCollection, metadata: Metadata): Rule =>
  collection === "messages" && metadata.kind === "read" ? READ_MARK : RULES[collection];

/** The fields of a record's metadata that fail their checks, in a stable order; none for a sound record. */
export function damageOf(collection: ValidatedCollection, metadata: Metadata, purpose: "read" | "write" = "read"): Damage[] {
  const rule = ruleOf(collection, metadata);
  const found: Damage[] = [];
  const required = purpose === "write" ? { ...rule.required, ...rule.written } : rule.required;
  const optional = purpose === "write" ? rule.optional : { ...rule.written, ...rule.optional };
  for (const [field, check] of Object.entries(required)) {
    const value = metadata[field];
    const problem = value === undefined ? "is missing" : check(value);
    if (problem) found.push({ field, problem });
  }
  for (const [field, check] of Object.entries(optional)) {
    const value = metadata[field];
    const problem = value === undefined ? undefined : check(value);
    if (problem) found.push({ field, problem });
  }
  return found;
}

/** Whether an id names a record of this collection by its prefix (`t_` a turn or a tombstone, `s_` a summary, `m_` mail). */
export const hasPrefixOf = (collection: ValidatedCollection, id: string): boolean => id.startsWith(RULES[collection].prefix);

/** The prefix an id of this collection starts with. */
export const prefixOf = (collection: ValidatedCollection): string => RULES[collection].prefix;

/** The damage of a record in a sentence: its fields and what is wrong with each. */
export const describeDamage = (damage: readonly Damage[]): string => damage.map((d) => `${d.field} ${d.problem}`).join("; ");
