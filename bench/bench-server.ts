import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Ready, Reply, Request, ServerOptions } from "./memory-core-server.js";

export interface BenchServer {
  url: URL;
  chromaUrl: URL;
  model: string;
  /** Vectors from the server's embedder, untimed. */
  embed(texts: string[]): Promise<number[][]>;
  /** Embedding time the server spent since the last call. */
  drainEmbedMs(): Promise<number>;
  /** What embedding `text` takes in the server with nothing else running. */
  embeddingMs(text: string): Promise<number>;
  stop(): Promise<void>;
}

type Body<T extends Request["type"]> = Omit<Extract<Request, { type: T }>, "id" | "type">;

/** Starts memory-core-server.ts in a child process and waits until it serves. */
export async function startBenchServer(options: ServerOptions): Promise<BenchServer> {
  const child = fork(fileURLToPath(new URL("./memory-core-server.ts", import.meta.url)), [JSON.stringify(options)], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const waiting = new Map<number, (reply: Reply) => void>();
  let nextId = 0;
  const exited = new Promise<never>((_, reject) =>
    child.once("exit", (code) => reject(new Error(`the bench server exited (code ${code})`))),
  );
  exited.catch(() => undefined);
  const ready = await Promise.race([
    new Promise<Ready>((resolve) =>
      child.on("message", (message: Ready | Reply) => {
        if ("type" in message) resolve(message);
        else waiting.get(message.id)?.(message);
      }),
    ),
    exited,
  ]);
  const call = async <T extends Request["type"]>(type: T, body?: Body<T>): Promise<Reply> => {
    const id = nextId++;
    const reply = await Promise.race([
      new Promise<Reply>((resolve) => {
        waiting.set(id, resolve);
        child.send({ id, type, ...body });
      }),
      exited,
    ]);
    waiting.delete(id);
    if (reply.error) throw new Error(`bench server: ${reply.error}`);
    return reply;
  };
  return {
    url: new URL(ready.url),
    chromaUrl: new URL(ready.chromaUrl),
    model: ready.model,
    embed: async (texts) => (await call("embed", { texts })).vectors!,
    drainEmbedMs: async () => (await call("drain-embed-ms")).ms!,
    embeddingMs: async (text) => (await call("time-embedding", { text })).ms!,
    async stop() {
      await call("stop");
      await new Promise((resolve) => (child.exitCode === null ? child.once("exit", resolve) : resolve(undefined)));
    },
  };
}

/**
 * A bench's REST call to a server whose address `base` gives (a server restarted mid-bench has a new one): the
 * body sent as JSON, the answer's text returned, anything but 2xx thrown with the start of the answer.
 */
export const requester =
  (base: () => URL) =>
  async (method: string, path: string, token: string, body?: unknown): Promise<string> => {
    const response = await fetch(new URL(path, base()), {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 300)}`);
    return text;
  };
