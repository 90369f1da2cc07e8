import fc from "fast-check";

/**
 * fast-check arbitraries generated from the contract's JSON Schemas: valid values from a schema, and invalid
 * ones by mutating a valid value. Covers the subset the contract uses — object (properties, required,
 * additionalProperties, maxProperties), string (minLength, maxLength, pattern, format date-time, enum),
 * integer and number (minimum, maximum), boolean, null, array (items, minItems, maxItems, uniqueItems),
 * oneOf / anyOf, type lists, const, and local `$ref`s (the loaded contract is dereferenced already).
 *
 * Sizes are capped (strings ~48 characters, arrays 4 items, maps 4 keys) so a call stays cheap; the bounds
 * themselves are reached by the mutations (one past maxLength, maximum + 1, ...) and by boundary values.
 */

export type Schema = Record<string, any>;

/** Per-schema replacements: a test supplies known ids, sessions and agents so valid calls hit real records. */
export type Override = (schema: Schema, path: string) => fc.Arbitrary<unknown> | undefined;

const TEXT_CAP = 48;
const ARRAY_CAP = 4;
const MAP_CAP = 4;

/** Text that trips up encoders and normalizers, valid Unicode all of it (lone surrogates are mutations). */
export const ODD_TEXT = [
  "emoji 🪨🧭",
  "RTL \u202e override",
  "zero\u200bwidth",
  "combining e\u0301",
  "\ufeffbom",
  "NUL \u0000 inside",
  "tab\tand\nnewline",
  "quotes \" ' ` and backslash \\",
  "%ZZ %2e%2e/ ?#&=",
  "../../etc/passwd",
  "'; DROP TABLE turns; --",
  '{"$ne": null}',
  "__proto__",
  "日本語のテキスト",
  "𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
];

const codePoints = (s: string) => [...s].length;

function regexOf(pattern: string): RegExp {
  // ajv compiles contract patterns with the `u` flag.
  return new RegExp(pattern, "u");
}

function stringArbitrary(schema: Schema): fc.Arbitrary<string> {
  const min: number = schema.minLength ?? 0;
  const max: number = schema.maxLength ?? 10_000;
  if (schema.format === "date-time") {
    return fc
      .date({ min: new Date("1970-01-01T00:00:00Z"), max: new Date("2200-12-31T23:59:59Z"), noInvalidDate: true })
      .map((d) => d.toISOString());
  }
  const inLength = (s: string) => codePoints(s) >= min && codePoints(s) <= max;
  const cap = Math.max(min, Math.min(max, TEXT_CAP));
  if (typeof schema.pattern === "string") {
    const re = regexOf(schema.pattern);
    if (schema.pattern.startsWith("^") && schema.pattern.endsWith("$")) {
      // An anchored pattern describes the whole string: generate from it.
      const matching = fc.stringMatching(new RegExp(schema.pattern)).filter((s) => inLength(s) && re.test(s));
      // The longest value, when the pattern allows it.
      const longest = "a".repeat(max);
      if (max > 4096 || !re.test(longest)) return matching;
      return fc.oneof({ weight: 9, arbitrary: matching }, { weight: 1, arbitrary: fc.constant(longest) });
    }
    // An unanchored pattern (`\S`: not blank) constrains free text: generate text, then make it match.
    return freeText(min, cap, max)
      .map((s) => (re.test(s) ? s : `x${s}`))
      .filter((s) => inLength(s) && re.test(s));
  }
  return freeText(min, cap, max).filter(inLength);
}

function freeText(min: number, cap: number, max: number): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.string({ minLength: min, maxLength: cap, unit: "grapheme" }) },
    { weight: 2, arbitrary: fc.constantFrom(...ODD_TEXT) },
    { weight: 1, arbitrary: fc.constant("b".repeat(Math.max(min, Math.min(max, 512)))) },
  );
}

function numberArbitrary(schema: Schema, integer: boolean): fc.Arbitrary<number> {
  const min = typeof schema.minimum === "number" ? schema.minimum : -1_000_000;
  const max = typeof schema.maximum === "number" ? schema.maximum : 1_000_000;
  const boundaries = fc.constantFrom(min, max);
  const any = integer ? fc.integer({ min, max }) : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
  return fc.oneof({ weight: 4, arbitrary: any }, { weight: 1, arbitrary: boundaries });
}

function typeArbitrary(schema: Schema, type: string, path: string, override: Override | undefined): fc.Arbitrary<unknown> {
  switch (type) {
    case "string":
      return stringArbitrary(schema);
    case "integer":
      return numberArbitrary(schema, true);
    case "number":
      return numberArbitrary(schema, false);
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    case "array": {
      const items = schema.items ? arbitraryFor(schema.items, `${path}/items`, override) : fc.jsonValue();
      const minLength: number = schema.minItems ?? 0;
      const maxLength = Math.max(minLength, Math.min(schema.maxItems ?? ARRAY_CAP, ARRAY_CAP));
      return schema.uniqueItems
        ? fc.uniqueArray(items, { minLength, maxLength, selector: (v) => JSON.stringify(v) })
        : fc.array(items, { minLength, maxLength });
    }
    case "object":
      return objectArbitrary(schema, path, override);
    default:
      throw new Error(`schema-arbitrary: unsupported type ${type} at ${path}`);
  }
}

function objectArbitrary(schema: Schema, path: string, override: Override | undefined): fc.Arbitrary<unknown> {
  const properties: Record<string, Schema> = schema.properties ?? {};
  const required: string[] = schema.required ?? [];
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, sub] of Object.entries(properties)) model[name] = arbitraryFor(sub, `${path}/${name}`, override);
  const known = fc.record(model, { requiredKeys: required });
  const extra = schema.additionalProperties;
  if (extra && typeof extra === "object" && Object.keys(properties).length === 0) {
    const maxKeys = Math.min(schema.maxProperties ?? MAP_CAP, MAP_CAP);
    return fc.dictionary(
      fc.string({ minLength: 1, maxLength: 12 }).filter((k) => k !== "__proto__"),
      arbitraryFor(extra, `${path}/*`, override),
      {
        maxKeys,
      },
    );
  }
  return known;
}

/** A valid value of the schema. */
export function arbitraryFor(schema: Schema, path = "", override?: Override): fc.Arbitrary<unknown> {
  const replaced = override?.(schema, path);
  if (replaced) return replaced;
  if ("const" in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  if (Array.isArray(schema.oneOf))
    return fc.oneof(...schema.oneOf.map((s: Schema, i: number) => arbitraryFor(s, `${path}/oneOf/${i}`, override)));
  if (Array.isArray(schema.anyOf))
    return fc.oneof(...schema.anyOf.map((s: Schema, i: number) => arbitraryFor(s, `${path}/anyOf/${i}`, override)));
  if (typeof schema.$ref === "string")
    throw new Error(`schema-arbitrary: unresolved $ref ${schema.$ref} at ${path} (dereference the contract first)`);
  if (Array.isArray(schema.type)) return fc.oneof(...schema.type.map((t: string) => typeArbitrary(schema, t, path, override)));
  if (typeof schema.type === "string") return typeArbitrary(schema, schema.type, path, override);
  // No type: anything JSON.
  return fc.jsonValue({ maxDepth: 2 });
}

// ---------------------------------------------------------------------------------------------------------
// Invalid values: a valid input, then one mutation that the schema forbids.

export type Mutation =
  | { kind: "drop_required"; field: string }
  | { kind: "wrong_type"; field: string; value: unknown }
  | { kind: "out_of_range"; field: string; value: number }
  | { kind: "too_long"; field: string; value: string }
  | { kind: "too_short"; field: string; value: string }
  | { kind: "pattern"; field: string; value: string }
  | { kind: "bad_enum"; field: string; value: string }
  | { kind: "unknown_field"; field: string; value: unknown }
  | { kind: "deep_nesting"; field: string; depth: number }
  | { kind: "lone_surrogate"; field: string; value: string }
  | { kind: "too_many_items"; field: string; length: number }
  | { kind: "duplicate_items"; field: string };

const WRONG_TYPES: unknown[] = [42, -1.5, true, null, "a string", [], ["x"], {}, { $ne: null }];
// `__proto__` is left to an example-based test: the MCP SDK drops such a key before the server sees it.
const UNKNOWN_FIELDS = ["priority", "$where", "constructor", "toString", "workspace", "agent_id", "ünïcödé", "x".repeat(300)];

function nested(depth: number): unknown {
  let value: unknown = "bottom";
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { n: value };
  return value;
}

/** Candidate mutations of one object-schema input; each makes the input invalid against `schema`. */
export function mutationsFor(schema: Schema, maxDepth: number): fc.Arbitrary<Mutation> {
  const properties: Record<string, Schema> = schema.properties ?? {};
  const required: string[] = schema.required ?? [];
  const names = Object.keys(properties);
  const candidates: Array<fc.Arbitrary<Mutation>> = [
    fc.record({
      kind: fc.constant("unknown_field" as const),
      field: fc.constantFrom(...UNKNOWN_FIELDS),
      value: fc.constantFrom(...WRONG_TYPES, "x"),
    }),
  ];
  if (required.length > 0) candidates.push(fc.record({ kind: fc.constant("drop_required" as const), field: fc.constantFrom(...required) }));
  if (names.length > 0) {
    candidates.push(
      fc.record({ kind: fc.constant("wrong_type" as const), field: fc.constantFrom(...names), value: fc.constantFrom(...WRONG_TYPES) }),
      fc.record({
        kind: fc.constant("deep_nesting" as const),
        field: fc.constantFrom(...names),
        depth: fc.integer({ min: 2, max: maxDepth }),
      }),
    );
  }
  for (const [name, sub] of Object.entries(properties)) {
    const types = Array.isArray(sub.type) ? sub.type : [sub.type];
    if ((types.includes("integer") || types.includes("number")) && (sub.minimum !== undefined || sub.maximum !== undefined)) {
      const values: number[] = [];
      if (typeof sub.minimum === "number") values.push(sub.minimum - 1, sub.minimum - 1_000_000, -(2 ** 53));
      if (typeof sub.maximum === "number") values.push(sub.maximum + 1, 2 ** 53, 1e308);
      if (types.includes("integer")) values.push(((sub.minimum ?? 0) + (sub.maximum ?? 2)) / 2 + 0.5);
      candidates.push(
        fc.record({ kind: fc.constant("out_of_range" as const), field: fc.constant(name), value: fc.constantFrom(...values) }),
      );
    }
    if (types.includes("string") && !sub.enum && sub.format !== "date-time") {
      if (typeof sub.maxLength === "number" && sub.maxLength <= 40_000) {
        candidates.push(
          fc.record({
            kind: fc.constant("too_long" as const),
            field: fc.constant(name),
            value: fc.constant("y".repeat(sub.maxLength + 1)),
          }),
        );
      }
      if (typeof sub.minLength === "number" && sub.minLength > 0) {
        candidates.push(fc.record({ kind: fc.constant("too_short" as const), field: fc.constant(name), value: fc.constant("") }));
      }
      if (typeof sub.pattern === "string") {
        candidates.push(
          fc.record({
            kind: fc.constant("pattern" as const),
            field: fc.constant(name),
            value: fc.constantFrom(" ", "   \n\t", "$ne", "has spaces", "../x", "t_nothex", "%ZZ", "\u202e", "a,b", ".", "…"),
          }),
        );
      }
      candidates.push(
        fc.record({
          kind: fc.constant("lone_surrogate" as const),
          field: fc.constant(name),
          value: fc.constantFrom("\ud800", "a\udfffb", "\udc00\ud800"),
        }),
      );
    }
    if (types.includes("string") && (Array.isArray(sub.enum) || sub.format === "date-time")) {
      candidates.push(
        fc.record({
          kind: fc.constant("bad_enum" as const),
          field: fc.constant(name),
          value: fc.constantFrom("", "FULL", "rumour", "yesterday", "2026-13-45T25:61:00Z", "0", "null", "summary "),
        }),
      );
    }
    if (types.includes("array") && typeof sub.maxItems === "number" && sub.maxItems <= 600) {
      candidates.push(
        fc.record({ kind: fc.constant("too_many_items" as const), field: fc.constant(name), length: fc.constant(sub.maxItems + 1) }),
      );
    }
    if (types.includes("array") && sub.uniqueItems) {
      candidates.push(fc.record({ kind: fc.constant("duplicate_items" as const), field: fc.constant(name) }));
    }
  }
  return fc.oneof(...candidates);
}

/** Sets an own enumerable property, also one named `__proto__`. */
function put(target: Record<string, unknown>, key: string, value: unknown) {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

export function applyMutation(valid: Record<string, unknown>, mutation: Mutation, schema: Schema): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(valid)) put(input, k, v);
  const property: Schema = schema.properties?.[mutation.field] ?? {};
  switch (mutation.kind) {
    case "drop_required":
      delete input[mutation.field];
      break;
    case "wrong_type":
    case "out_of_range":
    case "too_long":
    case "too_short":
    case "pattern":
    case "bad_enum":
    case "unknown_field":
    case "lone_surrogate":
      put(input, mutation.field, mutation.value);
      break;
    case "deep_nesting":
      put(input, mutation.field, nested(mutation.depth));
      break;
    case "too_many_items": {
      const sample =
        Array.isArray(valid[mutation.field]) && (valid[mutation.field] as unknown[]).length > 0
          ? (valid[mutation.field] as unknown[])[0]
          : "item";
      put(
        input,
        mutation.field,
        Array.from({ length: mutation.length }, (_, i) => (typeof sample === "string" ? `${sample.slice(0, 20)}${i}` : sample)),
      );
      break;
    }
    case "duplicate_items": {
      const items = Array.isArray(valid[mutation.field]) ? (valid[mutation.field] as unknown[]) : [];
      const first = items[0] ?? (property.items?.pattern ? undefined : "dup");
      put(input, mutation.field, first === undefined ? items : [first, first]);
      break;
    }
  }
  return input;
}
