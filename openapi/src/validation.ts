import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { CONTRACT_PATTERNS } from "./code-paths.js";
import type { Contract, JsonSchema } from "./contract.js";
import type { OperationId, OperationInput } from "./operation-types.js";

// ajv-formats ships CommonJS: Node's default import is its module object, typed with the plugin on `.default`.
// The module object is the plugin itself and carries itself as `.default`, so `.default` is the plugin under a
// bundler's interop too.
const addFormats = addFormatsModule.default;

export interface FieldError {
  /** Where in the input, e.g. `tags/0` or `prompt`; empty for the input as a whole. */
  path: string;
  message: string;
}

export type ValidationResult<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] };

export type InputValidator<T = Record<string, unknown>> = (input: unknown) => ValidationResult<T>;

/**
 * The contract's rule for text meant to carry meaning (a prompt, a reason, a query): at least one character a
 * reader can see — not only spaces, control characters (NUL...) or invisible ones (zero-width, BOM, bidi marks).
 * memory-core.yaml spells it once, as the anchor `visible-text`; this is that pattern, for the messages below.
 */
export const VISIBLE_TEXT = "[^\\s\\p{Cc}\\p{Cf}\\p{Default_Ignorable_Code_Point}]";

/**
 * One validator per operation, compiled from the contract's input schemas. Validation fills the contract's
 * defaults into a copy of the input, so handlers see exactly what the contract promises.
 */
export function compileInputValidators(contract: Contract): Map<string, InputValidator> {
  const ajv = new Ajv2020({ allErrors: true, useDefaults: true, strict: true, strictRequired: false });
  addFormats(ajv);
  const validators = new Map<string, InputValidator>();
  for (const op of contract.operations) {
    validators.set(op.operationId, toValidator(ajv.compile(op.inputSchema as JsonSchema)));
  }
  return validators;
}

/**
 * The validators by operation, each letting through what the generated types say that operation takes.
 * This is where the contract's schemas meet its generated types: both come from memory-core.yaml, and the
 * contract test regenerates the types and compares, so a validated input has the type it is given here.
 */
export class OperationValidators {
  private readonly validators: Map<string, InputValidator>;

  constructor(contract: Contract) {
    this.validators = compileInputValidators(contract);
  }

  validate<K extends OperationId>(operationId: K, input: unknown): ValidationResult<OperationInput<K>> {
    const validator = this.validators.get(operationId) as InputValidator<OperationInput<K>> | undefined;
    if (!validator) throw new Error(`no operation ${operationId} in the contract`);
    return validator(input);
  }
}

/** Validates values against one schema of the contract (used to check responses in tests). */
export function compileSchema(schema: JsonSchema): (value: unknown) => ValidationResult<unknown> {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false });
  addFormats(ajv);
  const validate = ajv.compile(schema);
  return (value) => {
    if (!validate(value)) return { ok: false, errors: describeErrors(validate.errors) };
    const malformed =
      typeof value === "object" && value !== null && !Array.isArray(value) ? illFormedText(value as Record<string, unknown>) : [];
    return malformed.length === 0 ? { ok: true, value } : { ok: false, errors: malformed };
  };
}

function toValidator(validate: ValidateFunction): InputValidator {
  return (input) => {
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      return { ok: false, errors: [{ path: "", message: "must be a JSON object" }] };
    }
    const copy = structuredClone(input) as Record<string, unknown>;
    if (!validate(copy)) return { ok: false, errors: describeErrors(validate.errors) };
    const malformed = illFormedText(copy);
    return malformed.length === 0 ? { ok: true, value: copy } : { ok: false, errors: malformed };
  };
}

/**
 * Every string of an input, each field name too, must be well-formed Unicode: a lone UTF-16 surrogate cannot be
 * stored as UTF-8, so it is refused rather than stored as something else. Checked here, for every field of every
 * operation, after the schema (which bounds the input's size; the body's nesting is bounded before it is parsed).
 */
function illFormedText(input: Record<string, unknown>): FieldError[] {
  const errors: FieldError[] = [];
  const visit = (value: unknown, path: string) => {
    if (typeof value === "string") {
      if (!value.isWellFormed()) errors.push({ path, message: "must be well-formed Unicode (it holds a lone surrogate)" });
    } else if (Array.isArray(value)) {
      value.forEach((item, index) => visit(item, path ? `${path}/${index}` : String(index)));
    } else if (typeof value === "object" && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        const at = path ? `${path}/${key}` : key;
        if (!key.isWellFormed()) errors.push({ path: at, message: "must be a well-formed Unicode name (it holds a lone surrogate)" });
        visit(item, at);
      }
    }
  };
  visit(input, "");
  return errors;
}

function describeErrors(errors: ErrorObject[] | null | undefined): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const error of errors ?? []) {
    const described = describe(error);
    const key = `${described.path}|${described.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(described);
    }
  }
  return out;
}

/** What a field spelled with one of the contract's patterns must be, in words a caller can act on. */
const PATTERN_MESSAGES = new Map<unknown, string>([
  [
    VISIBLE_TEXT,
    "must contain a character a reader can see (not only spaces, control or invisible characters such as NUL or zero-width ones)",
  ],
  [
    CONTRACT_PATTERNS.path,
    "must be a path relative to the repository's top, `/`-separated, with no empty, `.` or `..` segment and no backslash or control character (a folder ends with `/`)",
  ],
  [CONTRACT_PATTERNS.branch, "must be a git branch name: no spaces, no leading `-`, none of ~ ^ : ? * [ \\"],
  [CONTRACT_PATTERNS.repository, "must be a repository's name such as `acme/api` (letters, digits and . _ ~ / - only; never a URL)"],
]);

function describe(error: ErrorObject): FieldError {
  const base = error.instancePath.replace(/^\//, "");
  const join = (name: string) => (base ? `${base}/${name}` : name);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return { path: join(String(params.missingProperty)), message: "is required" };
    case "additionalProperties":
      return { path: join(String(params.additionalProperty)), message: "is not a field of this operation" };
    case "pattern":
      return { path: base, message: PATTERN_MESSAGES.get(params.pattern) ?? `must match ${String(params.pattern)}` };
    case "maxLength":
      return { path: base, message: `must be at most ${params.limit} characters` };
    case "maxItems":
      return { path: base, message: `must have at most ${params.limit} items` };
    default:
      return { path: base, message: error.message ?? "is not valid" };
  }
}
