import { ApiError, type OperationId, type OperationOutput, type OperationRequest, type RestClient } from "@cairn/openapi";
import { CliError } from "../io.js";
import type { AddMemoryRequest } from "./draft.js";
import { redactStrings } from "./redact.js";

/**
 * The importers' only way to memory-core: every string of every request (texts, refs, titles, reasons, keys)
 * goes through `redact` on its way out, whatever derived it, so a reason or a key built from a commit subject
 * cannot carry a secret past the redaction the drafts had. The importers take this, never a RestClient.
 */
export class RedactingClient {
  constructor(private readonly client: RestClient) {}

  call<K extends OperationId>(operationId: K, input: OperationRequest<K>): Promise<OperationOutput<K>> {
    return this.client.call(operationId, redactStrings(input));
  }
}

/** What became of one memory sent: stored now, there already (a replay), or there already with other content. */
export type Written = { id: string; outcome: "stored" | "replayed" } | { id: undefined; outcome: "conflict" };

export interface WriteTotals {
  stored: number;
  replayed: number;
  conflicts: number;
}

/** The contract's `maxItems` of `add_memories`: the most turns one bulk request may carry. */
export const BULK_ITEMS = 500;
/** What one bulk request's body may hold, under memory-core's 512 kB body limit with room for the envelope. */
export const BULK_BYTES = 480_000;

/**
 * Writes the memories in order: in bulk through `add_memories` (chunks of at most BULK_ITEMS turns and
 * BULK_BYTES bytes) with an admin token, one at a time through `add_memory` with an agent token (which may not
 * write in bulk). The one place the importers write. Each memory carries its idempotency key, so a second run
 * (or a run after an interruption) replays what is there instead of storing it again.
 */
export async function storeMemories(
  client: RedactingClient,
  memories: readonly AddMemoryRequest[],
  onProgress: (done: number) => void = () => undefined,
): Promise<Written[]> {
  const written: Written[] = [];
  let bulk = true;
  for (const chunk of chunks(memories)) {
    if (bulk) {
      try {
        const answer = await client.call("add_memories", { memories: chunk });
        answer.results.forEach((result, i) => written.push(writtenOf(result, chunk[i]!)));
        onProgress(written.length);
        continue;
      } catch (error) {
        // An agent token may not write in bulk: it writes one at a time, as it always could.
        if (!(error instanceof ApiError && error.status === 403 && error.code === "forbidden")) throw error;
        bulk = false;
      }
    }
    for (const memory of chunk) {
      try {
        const answer = await client.call("add_memory", memory);
        written.push({ id: answer.id, outcome: answer.replayed ? "replayed" : "stored" });
      } catch (error) {
        // Stored before with other content (an importer that reads the source differently now): left as it was.
        if (error instanceof ApiError && error.code === "idempotency_conflict") written.push({ id: undefined, outcome: "conflict" });
        else throw error;
      }
      onProgress(written.length);
    }
  }
  return written;
}

type BulkResult = OperationOutput<"add_memories">["results"][number];

/** One item's answer: a conflict is kept as one; any other refusal stops the import, as add_memory's would. */
function writtenOf(result: BulkResult, memory: AddMemoryRequest): Written {
  if ("id" in result) return { id: result.id, outcome: result.replayed ? "replayed" : "stored" };
  if (result.error.code === "idempotency_conflict") return { id: undefined, outcome: "conflict" };
  throw new CliError(
    `memory-core refused the memory ${memory.idempotency_key ?? `of session ${memory.session_id}`} (${result.error.code}: ${result.error.message})${result.error.hint ? ` ${result.error.hint}` : ""}`,
  );
}

/** The memories in order, cut into requests of at most BULK_ITEMS turns and BULK_BYTES bytes (a larger turn goes alone). */
function* chunks(memories: readonly AddMemoryRequest[]): Generator<AddMemoryRequest[]> {
  let chunk: AddMemoryRequest[] = [];
  let bytes = 0;
  for (const memory of memories) {
    const size = Buffer.byteLength(JSON.stringify(memory)) + 1;
    if (chunk.length > 0 && (chunk.length >= BULK_ITEMS || bytes + size > BULK_BYTES)) {
      yield chunk;
      chunk = [];
      bytes = 0;
    }
    chunk.push(memory);
    bytes += size;
  }
  if (chunk.length > 0) yield chunk;
}

export const totalsOf = (written: readonly Written[]): WriteTotals => ({
  stored: written.filter((w) => w.outcome === "stored").length,
  replayed: written.filter((w) => w.outcome === "replayed").length,
  conflicts: written.filter((w) => w.outcome === "conflict").length,
});
