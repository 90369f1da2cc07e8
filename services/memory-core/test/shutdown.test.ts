import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

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
