import type { OperationId, OperationInput, OperationResult } from "@cairn/openapi";
import type { Principal } from "../auth/principal.js";
import type { SessionSummarizer } from "../domain/session-summarizer.js";
import { summarizerUnavailable } from "../errors.js";
import type { Services } from "../services.js";

export interface OperationContext extends Services {
  principal: Principal;
  /** Absent when this server runs without a summarizer. */
  summarizer?: SessionSummarizer;
}

/** Receives input already validated against the contract, defaults filled; answers a status the contract lists. */
export type Handler<K extends OperationId> = (input: OperationInput<K>, context: OperationContext) => Promise<OperationResult<K>>;

/** One handler per contract operation: a missing, extra or mistyped one fails to compile. */
export type Handlers = { readonly [K in OperationId]: Handler<K> };

const ok = async <T>(body: Promise<T>) => ({ status: 200 as const, body: await body });

export const handlers: Handlers = {
  add_memory: async (input, { principal, writes }) => {
    const outcome = await writes.addMemory(principal, input);
    return outcome.created ? { status: 201, body: outcome.result } : { status: 200, body: outcome.result };
  },
  add_memories: (input, { principal, writes }) => ok(writes.addMemories(principal, input.memories)),
  query_recent_turns: (input, { principal, queries }) => ok(queries.recentTurns(principal, input)),
  query_raw_memories: (input, { principal, queries }) => ok(queries.queryMemories(principal, input)),
  query_team_status: (input, { principal, queries }) => ok(queries.teamStatus(principal, input)),
  assess_change: (input, { principal, queries }) => ok(queries.assessChange(principal, input)),
  query_summaries: (input, { principal, queries }) => ok(queries.querySummaries(principal, input)),
  get_session: (input, { principal, queries }) => ok(queries.getSession(principal, input)),
  send_message: async (input, { principal, messages }) => {
    const outcome = await messages.send(principal, input);
    return outcome.created ? { status: 201, body: outcome.result } : { status: 200, body: outcome.result };
  },
  query_inbox: (input, { principal, messages }) => ok(messages.inbox(principal, input)),
  ack_messages: (input, { principal, messages }) => ok(messages.ack(principal, input)),
  get_caller: (_input, { principal }) =>
    ok(Promise.resolve({ workspace: principal.workspace, agent: principal.agent, role: principal.role })),
  get_memory: (input, { principal, queries }) => ok(queries.getMemory(principal, input.memory_id)),
  supersede_memory: (input, { principal, corrections }) => ok(corrections.supersedeMemory(principal, input)),
  mark_outdated: (input, { principal, corrections }) => ok(corrections.markOutdated(principal, input)),
  review_memory: (input, { principal, corrections }) => ok(corrections.reviewMemory(principal, input)),
  query_review_queue: (input, { principal, corrections }) => ok(corrections.reviewQueue(principal, input)),
  review_matching: (input, { principal, corrections }) => ok(corrections.reviewMatching(principal, input)),
  forget_memory: (input, { principal, corrections }) => ok(corrections.forgetMemory(principal, input.memory_id, input.reason)),
  get_audit_log: (input, { principal, corrections }) => ok(corrections.auditLog(principal, input)),
  summarize_session: (input, { principal, summarizer }) => {
    if (!summarizer) throw summarizerUnavailable();
    return ok(summarizer.summarizeSession(principal.workspace, input.session_id, { force: input.force }));
  },
  export_records: (input, { principal, admin }) => ok(admin.exportRecords(principal, input)),
  import_records: (input, { principal, admin }) => ok(admin.importRecords(principal, input)),
  get_store_status: (_input, { principal, admin }) => ok(admin.storeStatus(principal)),
  verify_store: (_input, { principal, admin }) => ok(admin.verifyStore(principal)),
  repair_store: (input, { principal, admin }) => ok(admin.repairStore(principal, input.apply)),
  reembed_records: (input, { principal, admin }) => ok(admin.reembed(principal, input.limit)),
};

/** Whether an id names an operation this server implements (the executor checks the contract agrees). */
export function isOperationId(operationId: string): operationId is OperationId {
  return Object.hasOwn(handlers, operationId);
}
