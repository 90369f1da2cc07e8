import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { loadContract, OperationValidators } from "@cairn/openapi";
import { HTTP_DEFAULTS } from "../services/memory-core/src/config.js";
import { validationFailed } from "../services/memory-core/src/errors.js";
import { createHttpServer } from "../services/memory-core/src/http/server.js";
import { silentLogger } from "../services/memory-core/src/logger.js";

/**
 * Two edges of the HTTP server, measured on loopback:
 *
 * - keep-alive reuse by a held-up client: a fetch client in the server's process (as the in-process benches run)
 *   makes a request, is held up (its event loop busy) for `--stall-ms`, then makes the next one on the
 *   connection it keeps; counted are the second requests that fail (`fetch failed`), against Node's server with
 *   its default keep-alive (5 s, announced as such) and against memory-core's (createHttpServer). The handler is a
 *   trivial one: the server's connection handling is what is measured.
 * - the size of a refusal against the size of the request: an `add_memory` body with `--keys` unknown fields,
 *   validated against the contract, answered with every problem listed and as memory-core answers it.
 *
 * `npm run bench -- http-edges [--rounds 6] [--stall-ms 6000] [--keys 30000]`
 */
export async function benchHttpEdges(argv: string[]): Promise<void> {
  const option = (name: string, fallback: number) => {
    const at = argv.indexOf(`--${name}`);
    return at >= 0 ? Number(argv[at + 1]) : fallback;
  };
  const rounds = option("rounds", 6);
  const stallMs = option("stall-ms", 6000);
  const keys = option("keys", 30_000);

  const handler = (req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on("end", () => res.end("{}"));
  };
  for (const [name, server] of [
    ["node default (keep-alive 5 s, announced 5 s)", createServer(handler)],
    ["memory-core createHttpServer (defaults)", createHttpServer(handler, HTTP_DEFAULTS, silentLogger)],
  ] as const) {
    const { failed, announced } = await heldUpReuse(server, rounds, stallMs);
    process.stdout.write(
      `${name}: Keep-Alive "${announced}"; held up ${stallMs} ms between two requests: ${failed}/${rounds} second requests failed\n`,
    );
  }

  const contract = await loadContract();
  const validators = new OperationValidators(contract);
  const body: Record<string, unknown> = {
    session_id: "bench",
    prompt: "a task",
    thought: "a decision",
    response: "an outcome",
  };
  for (let n = 0; n < keys; n++) body[`x${String(n).padStart(7, "0")}`] = 1;
  const requestBytes = Buffer.byteLength(JSON.stringify(body));
  const result = validators.validate("add_memory", body);
  if (result.ok) throw new Error("the body was accepted");
  const unbounded = {
    type: "urn:cairn:problem:validation_failed",
    code: "validation_failed",
    detail: result.errors.map((e) => `${e.path} ${e.message}`).join("; "),
    errors: result.errors,
  };
  const bounded = validationFailed(result.errors).toProblem();
  const unboundedBytes = Buffer.byteLength(JSON.stringify(unbounded));
  const boundedBytes = Buffer.byteLength(JSON.stringify(bounded));
  process.stdout.write(
    `refusal of ${keys} unknown fields: request ${requestBytes} bytes; every problem listed ${unboundedBytes} bytes ` +
      `(${(unboundedBytes / requestBytes).toFixed(2)}x the request); as answered ${boundedBytes} bytes ` +
      `(${(boundedBytes / requestBytes).toFixed(4)}x)\n`,
  );
}

async function heldUpReuse(server: Server, rounds: number, stallMs: number): Promise<{ failed: number; announced: string }> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  let failed = 0;
  let announced = "";
  try {
    for (let round = 0; round < rounds; round++) {
      const first = await fetch(url, { method: "POST", body: "{}" });
      announced = first.headers.get("keep-alive") ?? "";
      await first.text();
      const end = performance.now() + stallMs;
      while (performance.now() < end) {
        // held up: the event loop runs nothing else
      }
      try {
        await (await fetch(url, { method: "POST", body: "{}" })).text();
      } catch {
        failed++;
      }
    }
  } finally {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
  return { failed, announced };
}
