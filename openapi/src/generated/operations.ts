// Generated from memory-core.yaml by `npm run generate -w @cairn/openapi`; do not edit.

/** Per operation, the input fields the contract gives a default (present once validated). */
export interface DefaultedInputs {
  ack_messages: never;
  add_memories: never;
  add_memory: never;
  assess_change: "within_days";
  export_records: "include_embeddings" | "limit";
  forget_memory: never;
  get_audit_log: "limit";
  get_caller: never;
  get_memory: never;
  get_session: "detail" | "limit";
  get_store_status: never;
  import_records: never;
  mark_outdated: never;
  query_inbox: "box" | "detail" | "limit" | "unread_only";
  query_raw_memories: "detail" | "evidence" | "include_superseded" | "limit" | "mode";
  query_recent_turns: "detail" | "limit";
  query_review_queue: "detail" | "limit";
  query_summaries: "limit" | "mode";
  query_team_status: "limit";
  reembed_records: "limit";
  repair_store: "apply";
  review_matching: "dry_run";
  review_memory: never;
  send_message: never;
  summarize_session: "force";
  supersede_memory: never;
  verify_store: never;
}

/** Per operation, how REST carries it; input fields in neither list travel in the JSON body. */
export const operationRoutes = {
  ack_messages: { method: "post", path: "/v1/messages/ack", pathFields: [], queryFields: [] },
  add_memories: { method: "post", path: "/v1/memories/batch", pathFields: [], queryFields: [] },
  add_memory: { method: "post", path: "/v1/memories", pathFields: [], queryFields: [] },
  assess_change: { method: "post", path: "/v1/changes/assessment", pathFields: [], queryFields: [] },
  export_records: { method: "get", path: "/v1/admin/records", pathFields: [], queryFields: ["collection","limit","after","include_embeddings"] },
  forget_memory: { method: "post", path: "/v1/memories/{memory_id}/forget", pathFields: ["memory_id"], queryFields: [] },
  get_audit_log: { method: "get", path: "/v1/audit", pathFields: [], queryFields: ["memory_id","agent","since","until","limit","after"] },
  get_caller: { method: "get", path: "/v1/caller", pathFields: [], queryFields: [] },
  get_memory: { method: "get", path: "/v1/memories/{memory_id}", pathFields: ["memory_id"], queryFields: [] },
  get_session: { method: "get", path: "/v1/sessions/{session_id}", pathFields: ["session_id"], queryFields: ["limit","after","detail"] },
  get_store_status: { method: "get", path: "/v1/admin/status", pathFields: [], queryFields: [] },
  import_records: { method: "post", path: "/v1/admin/records", pathFields: [], queryFields: [] },
  mark_outdated: { method: "post", path: "/v1/memories/{memory_id}/outdated", pathFields: ["memory_id"], queryFields: [] },
  query_inbox: { method: "get", path: "/v1/messages", pathFields: [], queryFields: ["unread_only","box","agent","limit","cursor","detail"] },
  query_raw_memories: { method: "post", path: "/v1/memories/query", pathFields: [], queryFields: [] },
  query_recent_turns: { method: "get", path: "/v1/memories/recent", pathFields: [], queryFields: ["agent","session_id","limit","before","detail"] },
  query_review_queue: { method: "get", path: "/v1/review", pathFields: [], queryFields: ["limit","after","source","agent","session_id","since","until","detail"] },
  query_summaries: { method: "post", path: "/v1/summaries/query", pathFields: [], queryFields: [] },
  query_team_status: { method: "get", path: "/v1/team", pathFields: [], queryFields: ["limit"] },
  reembed_records: { method: "post", path: "/v1/admin/reembed", pathFields: [], queryFields: [] },
  repair_store: { method: "post", path: "/v1/admin/repair", pathFields: [], queryFields: [] },
  review_matching: { method: "post", path: "/v1/review/matching", pathFields: [], queryFields: [] },
  review_memory: { method: "post", path: "/v1/memories/{memory_id}/review", pathFields: ["memory_id"], queryFields: [] },
  send_message: { method: "post", path: "/v1/messages", pathFields: [], queryFields: [] },
  summarize_session: { method: "post", path: "/v1/sessions/{session_id}/summarize", pathFields: ["session_id"], queryFields: [] },
  supersede_memory: { method: "post", path: "/v1/memories/{memory_id}/supersede", pathFields: ["memory_id"], queryFields: [] },
  verify_store: { method: "get", path: "/v1/admin/verify", pathFields: [], queryFields: [] },
} as const;
