export { CONTRACT_PATH, ContractError, loadContract } from "./contract.js";
export type { Contract, HttpMethod, JsonSchema, Operation, ParameterSpec, ToolAnnotations } from "./contract.js";
export { compileInputValidators, compileSchema } from "./validation.js";
export type { FieldError, InputValidator, ValidationResult } from "./validation.js";
export type { components, operations, paths } from "./generated/schema.js";
export { renderReference } from "./reference.js";
export { checkRoutes, checkToolCalls, extractRoutes, extractToolCalls } from "./doc-calls.js";
export type { DocProblem, DocRoute, DocToolCall } from "./doc-calls.js";
