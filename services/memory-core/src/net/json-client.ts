import http from "node:http";
import https from "node:https";

/** No answer came: the server could not be reached, the connection failed, or the deadline passed. */
export class Unreachable extends Error {
  override name = "Unreachable";
}

/**
 * The server answered with an error status. `detail` is the start of its reply, which may name the server's
 * internals or echo the request: never shown to clients, and logged only by callers whose requests carry no
 * memory text.
 */
export class Rejected extends Error {
  override name = "Rejected";
  constructor(
    readonly status: number,
    readonly detail: string,
    /** The server's `retry-after-ms` or `retry-after`, when it sent one. */
    readonly retryAfterMs: number | undefined,
  ) {
    super(`answered ${status}`);
  }
}

export interface JsonClientOptions {
  /** Sent with every request (an API key, for one). */
  headers?: Record<string, string>;
  /** A request not fully answered by then fails as Unreachable. */
  timeoutMs: number;
}

/**
 * JSON POSTs over a keep-alive connection pool, for the calls every query makes: Chroma's reads and the
 * OpenAI-compatible embeddings. On Node 20, fetch (and the chromadb and openai clients built on it) costs
 * this process measurably more CPU per call than node:http (docs/benchmarks.md, "memory-core latency": "the calls
 * every query makes go over node:http").
 *
 * A request may reach the server twice (see `post`): only idempotent calls go through here.
 */
export class JsonClient {
  private readonly agent: http.Agent;
  private readonly request: typeof http.request;
  private readonly prefix: string;

  constructor(
    private readonly base: URL,
    private readonly options: JsonClientOptions,
  ) {
    const secure = base.protocol === "https:";
    this.agent = secure ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
    this.request = secure ? https.request : http.request;
    this.prefix = base.pathname.replace(/\/+$/, "");
  }

  /** Sends `body` as JSON to `path` (below the base URL's path) and answers the parsed JSON reply. */
  async post<T>(path: string, body: unknown): Promise<T> {
    const payload = JSON.stringify(body);
    try {
      return await this.send<T>(path, payload);
    } catch (error) {
      // A pooled connection that the server closed while idle fails on reuse. The same reset can also mean
      // the server read the request and then failed, so the request may be handled twice: fine for reads.
      if (error instanceof ReusedSocketReset) return this.send<T>(path, payload);
      throw error;
    }
  }

  /** Closes the pooled connections. */
  close(): void {
    this.agent.destroy();
  }

  private send<T>(path: string, payload: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const request = this.request(
        {
          protocol: this.base.protocol,
          // URL keeps an IPv6 literal's brackets, which node:http would look up as a name.
          hostname: this.base.hostname.replace(/^\[(.*)\]$/, "$1"),
          port: this.base.port || undefined,
          path: `${this.prefix}${path}`,
          method: "POST",
          agent: this.agent,
          headers: { ...this.options.headers, "content-type": "application/json", "content-length": Buffer.byteLength(payload) },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("error", (error) => settle(new Unreachable(error.message, { cause: error })));
          response.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            const status = response.statusCode ?? 0;
            if (status < 200 || status >= 300) return settle(new Rejected(status, text.slice(0, 300), retryAfterMs(response.headers)));
            try {
              settle(undefined, JSON.parse(text) as T);
            } catch {
              settle(new Rejected(status, "a reply that is not JSON", undefined));
            }
          });
        },
      );
      // A deadline for the whole exchange: a server that trickles its answer is as stuck as a silent one.
      const limit = this.options.timeoutMs;
      const deadline = setTimeout(() => request.destroy(new Unreachable(`no complete answer within ${limit} ms`)), limit);
      const settle = (error: Error | undefined, value?: T) => {
        clearTimeout(deadline);
        if (error) reject(error);
        else resolve(value as T);
      };
      request.on("error", (error: NodeJS.ErrnoException) => {
        if (error instanceof Unreachable) settle(error);
        else if (request.reusedSocket && error.code === "ECONNRESET") settle(new ReusedSocketReset());
        // No answer came, whatever the cause (refused, reset, TLS, a malformed reply): as the fetch-based
        // clients did, that is the server being unreachable, not a fault of this process.
        else settle(new Unreachable(error.code ?? error.message, { cause: error }));
      });
      request.end(payload);
    });
  }
}

class ReusedSocketReset extends Unreachable {}

function retryAfterMs(headers: http.IncomingHttpHeaders): number | undefined {
  const ms = Number(headers["retry-after-ms"]);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const seconds = Number(headers["retry-after"]);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(String(headers["retry-after"] ?? ""));
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
