import http from "node:http";
import https from "node:https";

/** The server could not be reached, or did not answer in time. */
export class Unreachable extends Error {
  override name = "Unreachable";
}

/** The server answered with an error status. Its text may name the server's internals: log it, never show it. */
export class Rejected extends Error {
  override name = "Rejected";
  constructor(
    readonly status: number,
    detail: string,
  ) {
    super(`answered ${status}: ${detail.slice(0, 300)}`);
  }
}

export interface JsonClientOptions {
  /** Sent with every request (an API key, for one). */
  headers?: Record<string, string>;
  /** A request without a complete answer by then fails as Unreachable; none when unset. */
  timeoutMs?: number;
}

const UNREACHABLE = new Set(["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "EPIPE", "ETIMEDOUT"]);

/**
 * JSON POSTs over a keep-alive connection pool, for the calls every query makes: Chroma's reads and the
 * OpenAI-compatible embeddings. On Node 20, fetch (and the chromadb and openai clients built on it) costs
 * this process about 1 ms of CPU more per call than node:http (`docs/benchmarks.md`, session 5).
 */
export class JsonClient {
  private readonly agent: http.Agent;
  private readonly request: typeof http.request;
  private readonly prefix: string;

  constructor(
    private readonly base: URL,
    private readonly options: JsonClientOptions = {},
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
      // A pooled connection that the server closed while idle fails on reuse, before the server read anything.
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
          response.on("error", (error) => reject(new Unreachable(error.message)));
          response.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            const status = response.statusCode ?? 0;
            if (status < 200 || status >= 300) return reject(new Rejected(status, text));
            try {
              resolve(JSON.parse(text) as T);
            } catch {
              reject(new Rejected(status, "a reply that is not JSON"));
            }
          });
        },
      );
      if (this.options.timeoutMs !== undefined) {
        const limit = this.options.timeoutMs;
        request.setTimeout(limit, () => request.destroy(new Unreachable(`no answer within ${limit} ms`)));
      }
      request.on("error", (error: NodeJS.ErrnoException) => {
        if (error instanceof Unreachable) reject(error);
        else if (request.reusedSocket && error.code === "ECONNRESET") reject(new ReusedSocketReset());
        else if (error.code && UNREACHABLE.has(error.code)) reject(new Unreachable(error.code));
        else reject(error);
      });
      request.end(payload);
    });
  }
}

class ReusedSocketReset extends Unreachable {}
