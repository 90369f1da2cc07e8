import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { REPEAT_MS } from "../src/shutdown.js";

/**
 * The stop of every entry point (npm start, the stdio MCP server, the standalone summarizer): a stop signal
 * closes in order, once; a second one while the close runs exits at once. Run as a real child process, signalled
 * as a terminal or a supervisor would.
 */

const FIXTURE = fileURLToPath(new URL("./fixtures/stop-on-signals.ts", import.meta.url));

interface Running {
  child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout holds `text`. */
  said(text: string): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function start(): Running {
  const child = spawn(process.execPath, ["--import", "tsx", FIXTURE], { stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  let err = "";
  const waiting: Array<{ text: string; resolve: () => void }> = [];
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString("utf8");
    for (const w of waiting.splice(0)) {
      if (out.includes(w.text)) w.resolve();
      else waiting.push(w);
    }
  });
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    said: (text) => (out.includes(text) ? Promise.resolve() : new Promise<void>((resolve) => waiting.push({ text, resolve }))),
    exited,
  };
}

describe("stopOnSignals", () => {
  it.each(["SIGTERM", "SIGINT", "SIGHUP"] as const)("%s closes in order, once, and exits 0", async (signal) => {
    const run = start();
    await run.said("ready");
    run.child.kill(signal);
    await run.said("closing 1");
    run.child.stdin.write("finish\n");
    expect(await run.exited).toEqual({ code: 0, signal: null });
    expect(run.stdout()).toBe("ready\nclosing 1\nclosed\n");
    expect(run.stderr()).toContain(`"message":"stopping","signal":"${signal}"`);
  });

  it("the same signal passed on soon after (tsx relays Ctrl-C to a busy child) is the first one: the close ends, exit 0", async () => {
    const run = start();
    await run.said("ready");
    run.child.kill("SIGINT");
    await run.said("closing 1");
    // As tsx passes the terminal's Ctrl-C on once the child's event loop has been busy a while.
    await new Promise((resolve) => setTimeout(resolve, 50));
    run.child.kill("SIGINT");
    await new Promise((resolve) => setTimeout(resolve, 50));
    run.child.stdin.write("done\n");
    expect(await run.exited).toEqual({ code: 0, signal: null });
    expect(run.stdout()).toBe("ready\nclosing 1\nclosed\n");
    expect(run.stderr()).not.toContain("stopping at once");
  });

  it("the same signal again once REPEAT_MS have passed is a second one: exits at once", async () => {
    const run = start();
    await run.said("ready");
    run.child.kill("SIGINT");
    await run.said("closing 1");
    await new Promise((resolve) => setTimeout(resolve, REPEAT_MS + 200));
    run.child.kill("SIGINT");
    expect(await run.exited).toEqual({ code: 130, signal: null });
    expect(run.stdout()).toBe("ready\nclosing 1\n");
    expect(run.stderr()).toContain("stopping at once");
  });

  it("a second signal while the close runs exits at once, with 128 + its number", async () => {
    const run = start();
    await run.said("ready");
    run.child.kill("SIGTERM");
    await run.said("closing 1");
    run.child.kill("SIGINT");
    expect(await run.exited).toEqual({ code: 130, signal: null });
    // The close never ended: the second signal cut it short, and the first stop was not run twice.
    expect(run.stdout()).toBe("ready\nclosing 1\n");
    expect(run.stderr()).toContain("stopping at once");
  });
});
