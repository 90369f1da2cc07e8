import type { DefaultedInputs } from "./generated/operations.js";
import type { operations } from "./generated/schema.js";

/** Every operation of the contract, by its id (also its MCP tool name). */
export type OperationId = keyof operations;

type JsonContent<T> = T extends { content: { "application/json": infer Body } } ? Body : never;
/** An absent part of a request (`never` or `undefined` in the generated types) contributes no fields. */
type Fields<T> = [NonNullable<T>] extends [never] ? unknown : NonNullable<T>;
type Flatten<T> = { [K in keyof T]: T[K] };

type Parameters<K extends OperationId> = Fields<operations[K]["parameters"]["path"]> & Fields<operations[K]["parameters"]["query"]>;
type Body<K extends OperationId> = operations[K] extends { requestBody?: infer R } ? Fields<JsonContent<NonNullable<R>>> : unknown;
type AllFields<K extends OperationId> = Parameters<K> & Body<K>;

/**
 * What a caller sends: path and query parameters and the body's fields as one object, the shape both
 * transports carry (headers that mirror a body field, such as `Idempotency-Key`, are left to the body).
 * Fields with a default may be left out.
 */
export type OperationRequest<K extends OperationId> = Flatten<
  Omit<AllFields<K>, DefaultedInputs[K]> & Partial<Pick<AllFields<K>, DefaultedInputs[K] & keyof AllFields<K>>>
>;

/** What a handler receives: the request validated against the contract, every default filled in. */
export type OperationInput<K extends OperationId> = Flatten<
  Omit<AllFields<K>, DefaultedInputs[K]> & Required<Pick<AllFields<K>, DefaultedInputs[K] & keyof AllFields<K>>>
>;

type SuccessStatus<K extends OperationId> = Extract<keyof operations[K]["responses"], 200 | 201 | 202>;

/** What an operation answers on success: a status the contract lists for it, with that status's body. */
export type OperationResult<K extends OperationId> = {
  [S in SuccessStatus<K>]: { status: S; body: JsonContent<operations[K]["responses"][S]> };
}[SuccessStatus<K>];

/** The body of an operation's success response. */
export type OperationOutput<K extends OperationId> = OperationResult<K>["body"];
