import { once } from "node:events";
import { connect as netConnect, type Socket } from "node:net";
import { setImmediate as nextTurn } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { http, makeToken, mcpClient, startCairn, turn, uniqueWorkspace, warningsLog, type TestCairn } from "./support/harness.js";

/**
 * The HTTP server's connection limits (http/server.ts, config.ts), over real sockets: what a client that sends
 * slowly, stops, opens too many connections or reuses an idle one at the wrong moment gets, and that ordinary
 * clients are served meanwhile. Timeouts are set short for these instances; the tests wait for states.
 */

interface RawConnection {
  socket: Socket;
  /** Everything the server sent so far. */
  received(): string;
  /** Whether the server (the tests never close these sockets themselves) has closed the connection. */
  isClosed(): boolean;
  closed: Promise<void>;
  /** Resolves once `test` holds of what was received, or the connection closed. */
  until(test: (received: string) => boolean): Promise<void>;
}

async function rawConnection(url: URL): Promise<RawConnection> {
  const socket = netConnect(Number(url.port), url.hostname);
  socket.setEncoding("utf8");
  socket.on("error", () => undefined);
  let received = "";
  let closed = false;
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of [...waiters]) waiter();
  };
  socket.on("data", (chunk: string) => {
    received += chunk;
    wake();
  });
  const closedPromise = new Promise<void>((resolve) =>
    socket.once("close", () => {
      closed = true;
      wake();
      resolve();
    }),
  );
  await once(socket, "connect");
  return {
    socket,
    received: () => received,
    isClosed: () => closed,
    closed: closedPromise,
    until: (test) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (closed || test(received)) {
            waiters.delete(check);
            resolve();
          }
        };
        waiters.add(check);
        check();
      }),
  };
}

const responses = (text: string) => text.match(/HTTP\/1\.1 \d{3} /g)?.length ?? 0;
const healthz = (extra = "") => `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}\r\n`;
/** Whole /healthz answers received: each ends with its body. */
const healthAnswers = (text: string) => text.match(/\{"status":"ok"\}/g)?.length ?? 0;

/** Blocks this process's event loop (and so the server in it) for `ms`, as a long synchronous stretch would. */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // spinning
  }
}

let cairn: TestCairn | undefined;
afterEach(async () => {
  await cairn?.close();
  cairn = undefined;
});

describe("a client that sends its request slowly or not at all", () => {
  it("is answered 408 and disconnected by the server, while an ordinary client is served meanwhile", async () => {
    const workspace = uniqueWorkspace("loris");
    const agent = makeToken(workspace, "agent");
    cairn = await startCairn([agent], { http: { headersTimeoutMs: 300, requestTimeoutMs: 600 } });

    // Connected, and nothing sent.
    const silent = await rawConnection(cairn.url);
    // Headers begun, never ended.
    const slowHeaders = await rawConnection(cairn.url);
    slowHeaders.socket.write(`POST /v1/memories HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n`);
    // Headers whole, a body of 1,000 bytes promised and 10 sent.
    const body = JSON.stringify(turn("slow-session", 1));
    const slowBody = await rawConnection(cairn.url);
    slowBody.socket.write(
      `POST /v1/memories HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${agent.token}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length + 1000}\r\n\r\n${body.slice(0, 10)}`,
    );

    // An ordinary client, while the three hold their connections.
    const stored = await http(cairn.url, "POST", "/v1/memories", { token: agent.token, body: turn("ordinary-session", 1) });
    expect(stored.status).toBe(201);

    await Promise.all([silent.closed, slowHeaders.closed, slowBody.closed]);
    expect(slowHeaders.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(slowBody.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(responses(silent.received())).toBeLessThanOrEqual(1);

    // The stalled write stored nothing; the ordinary one is there.
    const recent = await http(cairn.url, "GET", "/v1/memories/recent?detail=full", { token: agent.token });
    expect(recent.status).toBe(200);
    expect(recent.body.turns.map((t: { session_id: string }) => t.session_id)).toEqual(["ordinary-session"]);
  });
});

describe("a cap on open connections", () => {
  it("closes a connection past the cap as it is accepted, serves the ones it holds, and accepts again once one ends", async () => {
    const { log, warnings } = warningsLog();
    cairn = await startCairn([makeToken(uniqueWorkspace("cap"), "agent")], { http: { maxConnections: 2 }, log });
    const first = await rawConnection(cairn.url);
    const second = await rawConnection(cairn.url);
    for (const held of [first, second]) {
      held.socket.write(healthz());
      await held.until((text) => healthAnswers(text) === 1);
      expect(healthAnswers(held.received())).toBe(1);
    }

    expect(warnings).toEqual([]);
    const third = await rawConnection(cairn.url);
    third.socket.write(healthz());
    await third.closed;
    expect(third.received()).toBe("");
    expect(warnings).toEqual([expect.stringMatching(/CAIRN_HTTP_MAX_CONNECTIONS/)]);

    // The held connections are served as before.
    first.socket.write(healthz());
    await first.until((text) => healthAnswers(text) === 2);
    expect(healthAnswers(first.received())).toBe(2);
    expect(first.isClosed()).toBe(false);

    // One ends: a new connection is accepted and answered.
    second.socket.end();
    await second.closed;
    await expect
      .poll(async () => {
        const next = await rawConnection(cairn!.url);
        next.socket.write(healthz("Connection: close\r\n"));
        await next.closed;
        return healthAnswers(next.received());
      })
      .toBe(1);
    first.socket.destroy();
  });
});

describe("an idle keep-alive connection", () => {
  const HOLD_MS = 10_000;

  it("is still open for a client that reuses it after the time it was told, held up past it as a busy client is", async () => {
    cairn = await startCairn([makeToken(uniqueWorkspace("keepalive"), "agent")], { http: { keepAliveTimeoutMs: HOLD_MS } });
    const connection = await rawConnection(cairn.url);
    connection.socket.write(healthz());
    await connection.until((text) => healthAnswers(text) === 1);
    expect(healthAnswers(connection.received())).toBe(1);
    const told = Number(connection.received().match(/^Keep-Alive: timeout=(\d+)\r$/im)?.[1]);
    expect(told).toBeGreaterThanOrEqual(1);
    expect(connection.received()).toMatch(/^Connection: keep-alive\r$/im);

    // fetch reuses an idle connection until shortly before the time it was told. A client (here in the server's
    // own process, as the in-process benches run) whose event loop is held up past that time writes its request
    // as soon as it runs again, before its timers or the server's have run.
    await nextTurn();
    busy(told * 1000 + 1000);
    connection.socket.write(healthz());
    await connection.until((text) => healthAnswers(text) === 2);
    expect(healthAnswers(connection.received())).toBe(2);
    expect(connection.isClosed()).toBe(false);

    // Left idle, the connection is closed by the server all the same.
    await connection.closed;
    expect(healthAnswers(connection.received())).toBe(2);
  });

  it("serves every call of an MCP client held up between its calls past the keep-alive time it was told", async () => {
    const workspace = uniqueWorkspace("keepalive-mcp");
    const agent = makeToken(workspace, "agent");
    cairn = await startCairn([agent], { http: { keepAliveTimeoutMs: HOLD_MS } });
    const told = Number((await fetch(new URL("/healthz", cairn.url))).headers.get("keep-alive")?.match(/timeout=(\d+)/)?.[1]);
    expect(told).toBeGreaterThanOrEqual(1);
    const client = await mcpClient(cairn.url, agent.token);
    try {
      const outcomes: string[] = [];
      for (let n = 1; n <= 3; n++) {
        const result = await client.callTool({ name: "add_memory", arguments: turn("held-up", n) }).then(
          (r) => (r.isError ? "tool error" : "stored"),
          (error: unknown) => `failed: ${String(error)}`,
        );
        outcomes.push(result);
        if (n < 3) busy(told * 1000 + 1000);
      }
      expect(outcomes).toEqual(["stored", "stored", "stored"]);
      const recent = await http(cairn.url, "GET", "/v1/memories/recent?session_id=held-up", { token: agent.token });
      expect(recent.body.turns).toHaveLength(3);
    } finally {
      await client.close();
    }
  });
});
