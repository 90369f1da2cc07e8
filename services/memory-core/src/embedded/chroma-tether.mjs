// Loaded with `--import` into the embedded Chroma's Node process (chroma-server.ts): it ties Chroma's life to the
// memory-core that started it. memory-core holds the other end of Chroma's stdin pipe, and the kernel closes that
// end when memory-core ends in any way, SIGKILL included; the read below then sees end-of-file and Chroma is
// stopped as memory-core's own stop() does (SIGTERM, then SIGKILL if it lingers).
//
// The chromadb CLI runs its native server synchronously on the main thread, which never returns to the event
// loop: the watch runs in a worker thread of its own, with blocking reads.
import { readSync } from "node:fs";
import { isMainThread, Worker } from "node:worker_threads";

const LINGER_MS = 10_000;
const RETRY_MS = 200;

if (isMainThread) {
  new Worker(new URL(import.meta.url)).unref();
} else {
  const pause = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
  const buffer = Buffer.alloc(64);
  let ownerGone = false;
  for (;;) {
    try {
      if (readSync(0, buffer, 0, buffer.length, null) === 0) {
        ownerGone = true;
        break;
      }
    } catch (error) {
      // A non-blocking descriptor with nothing to read yet: wait and read again.
      if (error.code === "EAGAIN") pause(RETRY_MS);
      else if (error.code === "EINTR") continue;
      else {
        // A pipe reset by its writer's end is an end too; anything else means there is no pipe to watch.
        ownerGone = error.code === "ECONNRESET" || error.code === "EPIPE";
        break;
      }
    }
  }
  if (ownerGone) {
    process.kill(process.pid, "SIGTERM");
    pause(LINGER_MS);
    process.kill(process.pid, "SIGKILL");
  }
}
