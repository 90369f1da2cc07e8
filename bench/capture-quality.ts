import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { exchangesOf, parseLines, type Exchange, type Harness } from "../services/loader/src/transcript/exchanges.js";
import { parseArgs } from "node:util";
import { readUnits } from "../services/reading/src/index.js";
import { notesOf } from "../services/loader/src/transcript/notes.js";

/**
 * `npm run bench -- capture-quality [--rules]`: how well the capture hook's drafting names what a person would name in a
 * session — what was decided and what was tried and dropped. Each fixture session (bench/fixtures/capture/<group>/)
 * is written out in its harness's real transcript format, read back by the parser the hook uses, and its notes
 * compared with the session's labels: a note is right when it holds every term of a label of its category;
 * precision is the share of notes that are right, recall the share of labels some note holds.
 * Groups: `tuning` (the rules were fixed looking at these) and `untuned` (written after, never tuned on).
 */

export interface Step {
  think?: string;
  say?: string;
  tool?: string;
  input?: Record<string, unknown>;
  files?: string[];
  result?: string;
  error?: boolean;
}
export interface FixtureSession {
  harness: Harness;
  about: string;
  exchanges: Array<{ prompt: string; steps: Step[]; answer: string }>;
  labels: Record<Category, Array<{ text: string; terms: string[] }>>;
}
export type Category = "decided" | "dropped";
const CATEGORIES: Category[] = ["decided", "dropped"];

const FIXTURES = fileURLToPath(new URL("./fixtures/capture/", import.meta.url));

/** A fixture session of a group, and its exchanges as the capture hook's parser reads them from its transcript. */
export interface CaptureFixture {
  file: string;
  session: FixtureSession;
  exchanges: Exchange[];
}

/**
 * The sessions of a fixture group (bench/fixtures/capture/<group>/, by file name), each written out in its harness's
 * transcript format and read back by the parser the hook uses. A group with no directory has no sessions.
 */
export async function captureFixtures(group: string): Promise<CaptureFixture[]> {
  if (!existsSync(join(FIXTURES, group))) return [];
  const dir = await mkdtemp(join(tmpdir(), "cairn-capture-fixtures-"));
  try {
    const fixtures: CaptureFixture[] = [];
    for (const file of (await readdir(join(FIXTURES, group))).filter((f) => f.endsWith(".json")).sort()) {
      const session = JSON.parse(await readFile(join(FIXTURES, group, file), "utf8")) as FixtureSession;
      const transcript = join(dir, `${file}.jsonl`);
      await writeFile(transcript, render(session, file));
      const { lines } = parseLines(await readFile(transcript), 0, 1, transcript, { partialLast: false });
      fixtures.push({ file, session, exchanges: [...exchangesOf(session.harness, lines, { ordinal: 0 }, transcript)] });
    }
    return fixtures;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function benchCaptureQuality(argv: string[] = []): Promise<void> {
  // `--rules`: the rules alone, without the fitted model's additions (what the hook read before the model).
  const { values } = parseArgs({ args: argv, options: { rules: { type: "boolean", default: false } } });
  for (const group of ["tuning", "untuned"]) {
    const fixtures = await captureFixtures(group);
    if (fixtures.length === 0) continue;
    const totals = Object.fromEntries(CATEGORIES.map((c) => [c, { notes: 0, right: 0, labels: 0, found: 0 }]));
    console.log(`\n${group}: ${fixtures.length} sessions`);
    for (const { file, session, exchanges } of fixtures) {
      const notes = { decided: [] as string[], dropped: [] as string[] };
      for (const exchange of exchanges) {
        const n = values.rules ? notesOf(exchange, readUnits) : notesOf(exchange);
        notes.decided.push(...n.decided);
        notes.dropped.push(...n.dropped);
      }
      const line: string[] = [];
      for (const c of CATEGORIES) {
        const holds = (note: string, terms: string[]) => terms.every((t) => note.toLowerCase().includes(t.toLowerCase()));
        const right = notes[c].filter((n) => session.labels[c].some((l) => holds(n, l.terms)));
        const found = session.labels[c].filter((l) => notes[c].some((n) => holds(n, l.terms)));
        const t = totals[c]!;
        t.notes += notes[c].length;
        t.right += right.length;
        t.labels += session.labels[c].length;
        t.found += found.length;
        line.push(`${c} ${right.length}/${notes[c].length} right, ${found.length}/${session.labels[c].length} found`);
        for (const n of notes[c]) if (!right.includes(n)) console.log(`    extra ${c}: ${n}`);
        for (const l of session.labels[c]) if (!found.includes(l)) console.log(`    missed ${c}: ${l.text}`);
      }
      console.log(`  ${file} (${session.harness}): ${line.join("; ")}`);
    }
    for (const c of CATEGORIES) {
      const t = totals[c]!;
      // No note at all has no precision to speak of (and a recall of 0 says what it missed).
      const precision = t.notes === 0 ? "n/a" : (t.right / t.notes).toFixed(2);
      const recall = t.labels === 0 ? "n/a" : (t.found / t.labels).toFixed(2);
      console.log(`${group} ${c}: precision ${precision} (${t.right}/${t.notes}), recall ${recall} (${t.found}/${t.labels})`);
    }
  }
}

/** The session as its harness writes it: Claude Code's session lines or a Codex rollout. */
export function render(session: FixtureSession, name: string): string {
  let tick = 0;
  const at = () => new Date(Date.UTC(2026, 10, 1, 9, 0, tick++)).toISOString();
  const out: unknown[] = [];
  if (session.harness === "claude-code") {
    const sessionId = `fixture-${name.replace(/\.json$/, "")}`;
    let uuid = 0;
    const line = (type: string, message: unknown) => ({
      type,
      uuid: `u-${++uuid}`,
      sessionId,
      isSidechain: false,
      userType: "external",
      timestamp: at(),
      message,
    });
    const says = (content: unknown[]) => line("assistant", { role: "assistant", model: "claude-sonnet-4-5", content });
    for (const e of session.exchanges) {
      out.push(line("user", { role: "user", content: e.prompt }));
      e.steps.forEach((s, i) => {
        if (s.think) out.push(says([{ type: "thinking", thinking: s.think, signature: "sig" }]));
        if (s.say) out.push(says([{ type: "text", text: s.say }]));
        if (s.tool) {
          out.push(says([{ type: "tool_use", id: `toolu_${uuid}_${i}`, name: s.tool, input: s.input ?? {} }]));
          out.push(
            line("user", {
              role: "user",
              content: [{ type: "tool_result", tool_use_id: `toolu_${uuid}_${i}`, content: s.result ?? "", is_error: s.error === true }],
            }),
          );
        }
      });
      out.push(says([{ type: "text", text: e.answer }]));
    }
  } else {
    out.push({
      timestamp: at(),
      type: "session_meta",
      payload: { id: `fixture-${name}`, cwd: "/home/dev/app", originator: "codex_cli_rs" },
    });
    const item = (payload: unknown) => out.push({ timestamp: at(), type: "response_item", payload });
    session.exchanges.forEach((e, n) => {
      out.push({ timestamp: at(), type: "turn_context", payload: { model: "gpt-5-codex" } });
      item({ type: "message", role: "user", content: [{ type: "input_text", text: e.prompt }] });
      e.steps.forEach((s, i) => {
        if (s.think) item({ type: "reasoning", summary: [{ type: "summary_text", text: s.think }], content: null });
        if (s.say) item({ type: "message", role: "assistant", content: [{ type: "output_text", text: s.say }] });
        if (s.tool === "apply_patch") {
          const patch = ["*** Begin Patch", ...(s.files ?? []).map((f) => `*** Update File: ${f}`), "*** End Patch"].join("\n");
          item({ type: "custom_tool_call", name: "apply_patch", input: patch, call_id: `c${n}-${i}` });
          item({ type: "custom_tool_call_output", call_id: `c${n}-${i}`, output: "Success." });
        } else if (s.tool) {
          const args = s.tool === "shell" ? { command: ["bash", "-lc", String(s.input?.command ?? "")] } : (s.input ?? {});
          item({ type: "function_call", name: s.tool, arguments: JSON.stringify(args), call_id: `c${n}-${i}` });
          item({ type: "function_call_output", call_id: `c${n}-${i}`, output: JSON.stringify({ output: s.result ?? "" }) });
        }
      });
      item({ type: "message", role: "assistant", content: [{ type: "output_text", text: e.answer }] });
    });
  }
  return out.map((l) => `${JSON.stringify(l)}\n`).join("");
}
