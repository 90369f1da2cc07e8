import http from "node:http";
import https from "node:https";

/** Chroma could not be reached: refused, reset or not resolved. */
export class ChromaUnreachable extends Error {
  override name = "ChromaUnreachable";
}

/** Chroma answered with an error status. Its message may name Chroma's internals: logged, never shown. */
export class ChromaRejected extends Error {
  override name = "ChromaRejected";
  constructor(
    readonly status: number,
    detail: string,
  ) {
    super(`chroma answered ${status}: ${detail.slice(0, 300)}`);
  }
}

const UNREACHABLE = new Set(["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "EPIPE", "ETIMEDOUT"]);

/**
 * Chroma's REST API (v2) over a keep-alive connection pool, for the reads that every query makes: `get` by
 * ids and the nearest-neighbour `query`. Through chromadb's client, each of these cost this process about
 * 1.5 ms of CPU at 100k records (fetch and its web streams, on Node 20); over node:http, about 0.5 ms
 * (`docs/benchmarks.md`, session 5). Writes and collection management stay with chromadb's client.
 */
export class ChromaWire {
  private readonly agent: http.Agent;
  private readonly request: typeof http.request;

  constructor(private readonly connection: { host: string; port: number; ssl: boolean }) {
    this.agent = connection.ssl ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
    this.request = connection.ssl ? https.request : http.request;
  }

  /** Sends `body` as JSON to `path` and answers the parsed JSON reply. */
  async post<T>(path: string, body: unknown): Promise<T> {
    const payload = JSON.stringify(body);
    try {
      return await this.send<T>(path, payload);
    } catch (error) {
      // A pooled connection that Chroma closed while idle fails on reuse; a read can safely be sent again.
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
          host: this.connection.host,
          port: this.connection.port,
          path,
          method: "POST",
          agent: this.agent,
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload) },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("error", (error) => reject(new ChromaUnreachable(error.message)));
          response.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            const status = response.statusCode ?? 0;
            if (status < 200 || status >= 300) return reject(new ChromaRejected(status, text));
            try {
              resolve(JSON.parse(text) as T);
            } catch {
              reject(new ChromaRejected(status, "a reply that is not JSON"));
            }
          });
        },
      );
      request.on("error", (error: NodeJS.ErrnoException) => {
        if (request.reusedSocket && error.code === "ECONNRESET") reject(new ReusedSocketReset());
        else if (error.code && UNREACHABLE.has(error.code)) reject(new ChromaUnreachable(error.code));
        else reject(error);
      });
      request.end(payload);
    });
  }
}

class ReusedSocketReset extends ChromaUnreachable {}
