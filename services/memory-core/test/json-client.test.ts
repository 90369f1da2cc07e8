import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createTcpServer, type AddressInfo, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JsonClient, Rejected, Unreachable } from "../src/net/json-client.js";

describe("JsonClient", () => {
  let server: Server;
  let base: URL;
  beforeAll(async () => {
    server = createHttpServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => (body += chunk));
      req.on("end", () => {
        if (req.url === "/v1/echo")
          return void res.setHeader("content-type", "application/json").end(JSON.stringify({ got: JSON.parse(body) }));
        if (req.url === "/v1/busy") return void res.writeHead(503, { "retry-after": "2" }).end('{"error":"loading"}');
        // Headers at once, then a byte now and then, never the end.
        res.writeHead(200, { "content-type": "application/json" });
        res.write("[");
        const drip = setInterval(() => res.write(" "), 20);
        res.on("close", () => clearInterval(drip));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`);
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("posts JSON below the base URL's path and answers the parsed reply", async () => {
    const client = new JsonClient(base, { timeoutMs: 5_000 });
    expect(await client.post("/echo", { n: 1 })).toEqual({ got: { n: 1 } });
    expect(await client.post("/echo", { n: 2 })).toEqual({ got: { n: 2 } }); // over the pooled connection
    client.close();
  });

  it("gives up on an answer still trickling in at the deadline, beside one that completes", async () => {
    const client = new JsonClient(base, { timeoutMs: 300 });
    await expect(client.post("/drip", {})).rejects.toBeInstanceOf(Unreachable);
    expect(await client.post("/echo", { after: "drip" })).toEqual({ got: { after: "drip" } });
    client.close();
  });

  it("carries an error status and the server's Retry-After", async () => {
    const client = new JsonClient(base, { timeoutMs: 5_000 });
    const failure = await client.post("/busy", {}).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Rejected);
    expect(failure).toMatchObject({ status: 503, retryAfterMs: 2_000 });
    client.close();
  });

  it("calls a server that does not speak HTTP unreachable, like one that is not there", async () => {
    const sockets = new Set<Socket>();
    const garbage = createTcpServer((socket) => {
      sockets.add(socket);
      socket.end("this is not http\r\n\r\n");
    });
    await new Promise<void>((resolve) => garbage.listen(0, "127.0.0.1", resolve));
    const port = (garbage.address() as AddressInfo).port;
    try {
      const speaksNonsense = new JsonClient(new URL(`http://127.0.0.1:${port}`), { timeoutMs: 5_000 });
      await expect(speaksNonsense.post("/x", {})).rejects.toBeInstanceOf(Unreachable);
      speaksNonsense.close();
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => garbage.close(resolve));
    }
    const gone = new JsonClient(new URL(`http://127.0.0.1:${port}`), { timeoutMs: 5_000 });
    await expect(gone.post("/x", {})).rejects.toBeInstanceOf(Unreachable);
  });
});
