import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError, RestClient } from "../src/index.js";

/** What the server saw of one request. */
interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  contentType: string | undefined;
  body: string;
}

/**
 * A real HTTP server on loopback whose answer each test picks: memory-core's problem documents, a proxy's page,
 * a success that is not JSON. The client under test is the one the console and the ops CLI use.
 */
let server: Server;
let base: URL;
let answer: { status: number; type: string; body: string } = { status: 200, type: "application/json", body: "{}" };
const seen: Seen[] = [];

const read = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });

beforeAll(async () => {
  server = createServer((req, res) => {
    void read(req).then((body) => {
      seen.push({
        method: req.method ?? "",
        url: req.url ?? "",
        authorization: req.headers.authorization,
        contentType: req.headers["content-type"],
        body,
      });
      res.writeHead(answer.status, { "content-type": answer.type }).end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const failure = async (promise: Promise<unknown>): Promise<ApiError> => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
};

describe("the REST client", () => {
  it("lays an operation out by the contract's REST binding, with the token, and answers the JSON body", async () => {
    const client = new RestClient({ baseUrl: base, token: "tok-1" });
    answer = { status: 200, type: "application/json", body: JSON.stringify({ memories: [], next_cursor: null }) };
    seen.length = 0;
    const page = await client.call("query_recent_turns", { limit: 3 });
    expect(page).toEqual({ memories: [], next_cursor: null });
    answer = { status: 201, type: "application/json", body: JSON.stringify({ id: "m-1", replayed: false }) };
    await client.call("mark_outdated", { memory_id: "a b", reason: "moved" });
    expect(seen).toEqual([
      { method: "GET", url: "/v1/memories/recent?limit=3", authorization: "Bearer tok-1", contentType: undefined, body: "" },
      {
        method: "POST",
        url: "/v1/memories/a%20b/outdated",
        authorization: "Bearer tok-1",
        contentType: "application/json",
        body: JSON.stringify({ reason: "moved" }),
      },
    ]);
  });

  it("turns a problem document into an ApiError with its code, detail, hint and status", async () => {
    const client = new RestClient({ baseUrl: base, token: "tok-1" });
    answer = {
      status: 409,
      type: "application/problem+json",
      body: JSON.stringify({ code: "idempotency_conflict", status: 409, detail: "Key reused.", hint: "Use a new key." }),
    };
    const error = await failure(client.call("get_memory", { memory_id: "m-1" }));
    expect([error.status, error.code, error.detail, error.hint, error.isProblem]).toEqual([
      409,
      "idempotency_conflict",
      "Key reused.",
      "Use a new key.",
      true,
    ]);
    expect([error.method, error.url, error.message]).toEqual(["GET", new URL("/v1/memories/m-1", base).href, "Key reused."]);
    expect(error.cause).toBeUndefined();
  });

  it("names an error answer that is no problem document by its status, not by a code the contract has", async () => {
    const client = new RestClient({ baseUrl: base, token: "tok-1" });
    answer = { status: 502, type: "text/html", body: "<html>Bad gateway</html>" };
    const error = await failure(client.call("get_caller", {}));
    expect([error.status, error.code, error.isProblem, error.hint]).toEqual([502, "http_502", false, undefined]);
  });

  it("keeps the parse error as the cause of a success answer that is not JSON", async () => {
    const client = new RestClient({ baseUrl: base, token: "tok-1" });
    answer = { status: 200, type: "text/plain", body: "not json" };
    const error = await failure(client.call("get_caller", {}));
    expect([error.status, error.code, error.isProblem]).toEqual([200, "not_json", false]);
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  it("keeps fetch's error as the cause when nothing answers", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const client = new RestClient({ baseUrl: new URL(`http://127.0.0.1:${port}`), token: "tok-1" });
    const error = await failure(client.call("get_caller", {}));
    expect([error.status, error.code, error.isProblem]).toEqual([0, "unreachable", false]);
    expect(error.cause).toBeInstanceOf(TypeError);
    expect(error.hint).toContain("memory-core is running");
  });
});
