import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * The one test double the project allows: a small OpenAI-compatible server, since no model can run here.
 * `/v1/embeddings` answers deterministic unit vectors derived from each input's words (a hashing
 * bag-of-words: crude, fast, and enough for nearest-neighbour order to mean something). The benchmarks use
 * it too, where loading 100k turns through the local model would take hours on two cores.
 */
export interface OpenAIStub {
  baseUrl: string;
  requests: Array<{ path: string; body: any }>;
  /** `/v1/chat/completions`, scripted by the test. */
  chat: ChatScript;
  /** `/v1/embeddings` answers well unless told to fail its next calls, one failure each. */
  embeddings: { failNext(...failures: EmbeddingFailure[]): void };
  close(): Promise<void>;
}

/**
 * How `/v1/chat/completions` answers:
 * - `structured`: a valid summary as JSON (what `answer` builds from the request's text, else a default that
 *   repeats the first task it was given); `fenced` wraps it in a ```json fence with prose around it;
 * - `malformed`: prose with no JSON object;
 * - `slow`: a valid answer after `ms` (a client with a shorter timeout gives up first);
 * - `down`: the connection is dropped without an answer;
 * - `no-json-schema`: refuses `response_format: json_schema` with a 400, answers anything else;
 * - `context-limit`: refuses with context_length_exceeded when the messages are longer than `maxChars`.
 */
export type ChatBehaviour =
  | { kind: "structured"; answer?: (text: string) => object }
  | { kind: "fenced" }
  | { kind: "malformed" }
  | { kind: "slow"; ms: number }
  | { kind: "down" }
  | { kind: "no-json-schema" }
  | { kind: "context-limit"; maxChars: number };

/**
 * `busy`: 503 with an error body; `down`: the connection dropped unanswered; `short`: one vector fewer than
 * asked; `reordered`: every vector, listed last input first (as the API allows: each carries its `index`).
 */
export type EmbeddingFailure = "busy" | "down" | "short" | "reordered";

export interface ChatScript {
  /** Every call from now on behaves like this. */
  set(behaviour: ChatBehaviour): void;
  /** The next calls behave like these, one each, before the standing behaviour applies again. */
  queue(...behaviours: ChatBehaviour[]): void;
  /** Requests received, answered or not. */
  readonly calls: number;
  readonly bodies: any[];
}

export async function startOpenAIStub(options: { dimension: number }): Promise<OpenAIStub> {
  const requests: OpenAIStub["requests"] = [];
  let standing: ChatBehaviour = { kind: "structured" };
  const queued: ChatBehaviour[] = [];
  const chatBodies: any[] = [];
  const embeddingFailures: EmbeddingFailure[] = [];
  const chat: ChatScript = {
    set: (behaviour) => {
      standing = behaviour;
      queued.length = 0;
    },
    queue: (...behaviours) => void queued.push(...behaviours),
    get calls() {
      return chatBodies.length;
    },
    bodies: chatBodies,
  };
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk) => (raw += chunk));
    req.on("end", () => {
      const body = raw ? JSON.parse(raw) : undefined;
      requests.push({ path: req.url ?? "", body });
      if (req.method === "POST" && req.url === "/v1/chat/completions") {
        chatBodies.push(body);
        answerChat(req, res, body, queued.shift() ?? standing);
        return;
      }
      if (req.method === "POST" && req.url === "/v1/embeddings") {
        const inputs: string[] = Array.isArray(body.input) ? body.input : [body.input];
        const failure = embeddingFailures.shift();
        if (failure === "down") return void req.socket.destroy();
        res.setHeader("content-type", "application/json");
        if (failure === "busy") {
          res.statusCode = 503;
          return void res.end(JSON.stringify({ error: { message: "model is loading", type: "server_error" } }));
        }
        if (failure === "short") inputs.pop();
        const data = inputs.map((text, index) => ({ object: "embedding", index, embedding: wordVector(text, options.dimension) }));
        if (failure === "reordered") data.reverse();
        res.end(
          JSON.stringify({
            object: "list",
            model: body.model,
            data,
            usage: { prompt_tokens: 0, total_tokens: 0 },
          }),
        );
        return;
      }
      res.statusCode = 404;
      res.end(JSON.stringify({ error: { message: "not found" } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    chat,
    embeddings: { failNext: (...failures) => void embeddingFailures.push(...failures) },
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function answerChat(req: IncomingMessage, res: ServerResponse, body: any, behaviour: ChatBehaviour): void {
  const text = (body.messages as Array<{ content: string }>).map((m) => m.content).join("\n");
  const reply = (content: string) => {
    if (res.destroyed) return;
    res.setHeader("content-type", "application/json");
    res.end(
      JSON.stringify({
        id: "chatcmpl-stub",
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
        usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
      }),
    );
  };
  const refuse = (message: string, code: string | null) => {
    res.statusCode = 400;
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ error: { message, type: "invalid_request_error", code } }));
  };
  switch (behaviour.kind) {
    case "structured":
      return reply(JSON.stringify((behaviour.answer ?? defaultSummary)(text)));
    case "fenced":
      return reply(
        `Here is the summary you asked for:\n\n\`\`\`json\n${JSON.stringify(defaultSummary(text), null, 2)}\n\`\`\`\nLet me know if you need more.`,
      );
    case "malformed":
      return reply("I am sorry, I summarized the session in my head but cannot write it down: {not json at all.");
    case "slow": {
      const timer = setTimeout(() => reply(JSON.stringify(defaultSummary(text))), behaviour.ms);
      req.socket.once("close", () => clearTimeout(timer));
      return;
    }
    case "down":
      req.socket.destroy();
      return;
    case "no-json-schema":
      if (body.response_format?.type === "json_schema") return refuse("response_format json_schema is not supported by this server", null);
      return reply(JSON.stringify(defaultSummary(text)));
    case "context-limit":
      if (text.length > behaviour.maxChars) {
        return refuse(
          `This model's maximum context length is ${behaviour.maxChars} characters; the messages are longer.`,
          "context_length_exceeded",
        );
      }
      return reply(JSON.stringify(defaultSummary(text)));
  }
}

/** A valid summary that says where it came from and repeats the first task it was given (so it can be found). */
function defaultSummary(text: string): object {
  const task = /Task: ([^\n]*)/.exec(text)?.[1] ?? /"title":"([^"]*)"/.exec(text)?.[1] ?? "the session";
  return {
    title: `Model summary: ${task}`.slice(0, 80),
    summary: `The model summarized this: ${task}`,
    decisions: [{ decision: "Chose the approach the session settled on", evidence: "the stub read it in the turns" }],
    open_questions: ["Does the stub know anything?"],
    next_steps: ["Ask a real model"],
  };
}

/** A bag-of-words vector: texts sharing words point the same way, so nearest-neighbour order is meaningful. */
export function wordVector(text: string, dimension: number): number[] {
  const vector = new Array<number>(dimension).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    const bucket = createHash("sha256").update(word).digest().readUInt32BE(0) % dimension;
    vector[bucket]! += 1;
  }
  const norm = Math.hypot(...vector) || 1;
  return vector.map((v) => v / norm);
}
