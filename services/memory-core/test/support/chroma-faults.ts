import { createServer, request, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One request to Chroma as the proxy sees it: the REST path's last segment and the record ids it names. */
export interface ChromaCall {
  method: string;
  /** `add`, `get`, `query`, `update`, `upsert`, `delete`, or another segment of Chroma's REST API. */
  verb: string;
  ids: string[];
}

/**
 * What to do with a call: pass it on, cut the connection as a crash or a network fault would, or pass it on
 * late, as a Chroma under load answers.
 */
export type FaultRule = (call: ChromaCall) => "pass" | "cut" | { delayMs: number } | { status: number; body: string };

/**
 * A real HTTP proxy in front of the real Chroma that cuts the connections of the calls a rule picks: a write
 * cut off at an exact step, which killing a process cannot do deterministically. Everything else is passed
 * through unchanged.
 */
export class ChromaFaults {
  private rule: FaultRule = () => "pass";
  /** The calls seen, newest last; cleared by the caller when it wants a fresh count. */
  readonly calls: ChromaCall[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: URL,
  ) {}

  static async start(target: URL): Promise<ChromaFaults> {
    const server = createServer((req, res) => {
      void readBody(req).then((body) => {
        const call = describeCall(req, body);
        faults.calls.push(call);
        const action = faults.rule(call);
        if (action === "cut") {
          req.socket.destroy();
          return;
        }
        if (typeof action === "object" && "status" in action) {
          res.writeHead(action.status, { "content-type": "application/json" }).end(action.body);
          return;
        }
        const forward = () => {
          const upstream = request(
            new URL(req.url ?? "/", target),
            { method: req.method, headers: { ...req.headers, host: target.host } },
            (answer) => {
              res.writeHead(answer.statusCode ?? 502, answer.headers);
              answer.pipe(res);
            },
          );
          upstream.on("error", () => req.socket.destroy());
          upstream.end(body);
        };
        if (action === "pass") forward();
        else setTimeout(forward, (action as { delayMs: number }).delayMs);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const faults = new ChromaFaults(server, new URL(`http://127.0.0.1:${port}`));
    return faults;
  }

  /** From now on, calls go where `rule` says. */
  set(rule: FaultRule): void {
    this.rule = rule;
  }

  /** Cuts the first call that `matches`, and passes everything before and after it. */
  cutOnce(matches: (call: ChromaCall) => boolean): { readonly fired: boolean } {
    const state = { fired: false };
    this.rule = (call) => {
      if (state.fired || !matches(call)) return "pass";
      state.fired = true;
      return "cut";
    };
    return state;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function describeCall(req: IncomingMessage, body: Buffer): ChromaCall {
  const path = new URL(req.url ?? "/", "http://proxy").pathname;
  let ids: string[] = [];
  try {
    const parsed = JSON.parse(body.toString("utf8")) as { ids?: unknown };
    if (Array.isArray(parsed.ids)) ids = parsed.ids.filter((id): id is string => typeof id === "string");
  } catch {
    // not JSON, or no body: no ids
  }
  return { method: req.method ?? "GET", verb: path.split("/").at(-1) ?? "", ids };
}
