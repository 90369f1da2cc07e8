import { requestCairn } from "./cairn-request.js";
import { branchNote, checkoutOf, GitTimeout, type Checkout } from "./git.js";
import { inboxBlock, unreadMessages, type Unread } from "./inbox.js";
import { findProject } from "./project.js";

/**
 * The prompt hook (`cairn-load --hook prompt`): for Claude Code's and Codex's UserPromptSubmit, a few pointers
 * to memories that bear on the prompt (`pointed` says which), and nothing when none does; before them, the agent's unread messages
 * (inbox.ts), one line each, until it marks them read. In a git repository it passes the caller's
 * branch and the default branch, and a memory written on another branch whose commit is not merged yet says so.
 * Whatever goes wrong — no prompt, no settings, a slow or unreachable Cairn, a refused token — it prints nothing
 * and exits 0, with the reason on stderr: a hook must never block or break the prompt it runs for.
 */

/** Everything the hook prints, JSON included: a pointer or three, never a page. */
export const HOOK_OUTPUT_BYTES = 600;
const POINTERS = 3;
const HEADER = "Cairn memories that bear on this (open with get_memory):";
/**
 * The evidence a hybrid `medium` first hit needs for a pointer: its memory holds at least `share` of the prompt's
 * information (the hard negatives the local embedder puts at `medium` hold less) and is at least `similarity` near
 * it by meaning (the words alone, or a level pooled up from the hits below it, are not enough). Tuned on
 * bench/fixtures/prompts (docs/benchmarks.md, "Prompt hook: a hit's evidence").
 */
export const MEDIUM_EVIDENCE = { share: 0.3, similarity: 0.5 };

export interface PromptHookSettings {
  memoryCoreUrl: URL | undefined;
  token: string | undefined;
  timeoutMs: number;
  /** Where the project is found, as for every hook mode (`findProject`); without it, no branch is passed. */
  project?: { flag: string | undefined; env: Readonly<Record<string, string | undefined>>; cwd: string };
}

interface Hit {
  confidence: string;
  evidence?: { similarity?: number; share?: number };
  memory: {
    id: string;
    agent: string;
    recorded_at: string;
    kind?: string;
    text?: string;
    prompt?: string;
    flags?: string[];
    branch?: string;
  };
}

export type HookOutcome = { output: string } | { silent: string };

export async function promptHook(stdin: string, settings: PromptHookSettings): Promise<HookOutcome> {
  const deadline = Date.now() + settings.timeoutMs;
  let input: { prompt?: unknown; cwd?: unknown };
  try {
    input = JSON.parse(stdin) as typeof input;
  } catch {
    return { silent: "stdin is not the hook's JSON" };
  }
  const prompt = typeof input === "object" && input !== null ? input.prompt : undefined;
  if (typeof prompt !== "string" || !/\S/.test(prompt)) return { silent: "no prompt in the hook's JSON" };
  if (!settings.memoryCoreUrl || !settings.token) return { silent: "CAIRN_URL and CAIRN_TOKEN are not both set" };

  let hits: Hit[];
  let notes: Map<string, string>;
  // Asked beside the memories; an inbox that cannot be read (an older Cairn, a slow answer) leaves the memories.
  const unread = unreadMessages(settings.memoryCoreUrl, settings.token, deadline).catch((): Unread => ({ messages: [], count: 0 }));
  try {
    const git = await repository(settings, typeof input.cwd === "string" ? input.cwd : undefined, deadline);
    const ask = (query: string, mode: "hybrid" | "lexical", minConfidence: "medium" | "low") =>
      requestCairn(settings.memoryCoreUrl!, settings.token!, "/v1/memories/query", deadline, {
        method: "POST",
        body: {
          // The contract's limit on a query's length; a longer prompt's head says what it is about.
          query: query.slice(0, 1000),
          limit: POINTERS,
          min_confidence: minConfidence,
          mode,
          detail: "brief",
          ...(mode === "hybrid" ? { evidence: true } : {}),
          ...(git?.branch ? { branch: git.branch } : {}),
          ...(git?.mainBranch ? { default_branch: git.mainBranch } : {}),
        },
      });
    const head = firstSentence(prompt);
    const responses = await Promise.all([
      ask(prompt, "hybrid", "medium"),
      ask(prompt, "lexical", "low"),
      ...(head ? [ask(head, "lexical", "low")] : []),
    ]);
    const refused = responses.find((r) => !r.ok);
    if (refused) {
      await unread;
      return { silent: `Cairn answered ${refused.status}` };
    }
    const answers = await Promise.all(responses.map(async (r) => ((await r.json()) as { hits: Hit[] }).hits));
    hits = pointed(answers);
    notes = git ? await branchNotes(hits, git, settings, deadline) : new Map();
  } catch (error) {
    const name = (error as Error).name;
    if (error instanceof GitTimeout || name === "TimeoutError") return { silent: `no answer within ${settings.timeoutMs} ms` };
    return { silent: "Cairn is unreachable" };
  }
  const output = render(hits, notes, await unread);
  return output ? { output } : { silent: "no memory bears on this prompt" };
}

/**
 * The memories to point at, at most POINTERS, from the hook's answers (hybrid at `medium` with each hit's
 * evidence, then lexical at `low`, for the whole prompt and for its first sentence): the hybrid hits Cairn is
 * sure of (`high`), or its first hit at `medium` when that memory also holds part of the prompt's words and is
 * near it by meaning (MEDIUM_EVIDENCE); then those whose words hold the prompt's (a lexical hit at `low` or
 * better: the memory holds enough of the prompt's information, rare words weighing most). A hybrid `medium`
 * alone is not enough: with the local embedder, similarity puts coding prompts near unrelated coding memories,
 * and those memories hold little of the prompt's information (docs/benchmarks.md, "Prompt hook nudges").
 */
function pointed([hybrid, ...held]: Hit[][]): Hit[] {
  const hits = new Map<string, Hit>();
  const sure = hybrid!.filter((h) => h.confidence === "high");
  const first = hybrid![0];
  if (sure.length === 0 && first?.confidence === "medium" && evidenced(first)) sure.push(first);
  for (const hit of [...sure, ...held.flat()]) {
    if (hit.confidence !== "none" && !hits.has(hit.memory.id)) hits.set(hit.memory.id, hit);
  }
  return [...hits.values()].slice(0, POINTERS);
}

/** A hit whose evidence clears both of MEDIUM_EVIDENCE's floors; a hit without evidence does not. */
const evidenced = ({ evidence }: Hit) =>
  (evidence?.share ?? 0) >= MEDIUM_EVIDENCE.share && (evidence?.similarity ?? -1) >= MEDIUM_EVIDENCE.similarity;

/**
 * The prompt's first sentence when it has more than one and the first says something (four words or more): in a
 * long prompt the task comes first, and the context and constraints after it add words no memory holds, which
 * lowers the share of the prompt any memory holds. Undefined otherwise.
 */
function firstSentence(prompt: string): string | undefined {
  const sentences = prompt
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (sentences.length < 2) return undefined;
  return sentences[0]!.split(/\s+/).length >= 4 ? sentences[0] : undefined;
}

/** The project's git repository and its branches, when the hook runs in one; git missing counts as none. */
async function repository(settings: PromptHookSettings, hookCwd: string | undefined, deadline: number): Promise<Checkout | undefined> {
  if (!settings.project) return undefined;
  const project = await findProject({ ...settings.project, hookCwd });
  try {
    return await checkoutOf(project, deadline);
  } catch (error) {
    if (error instanceof GitTimeout) throw error;
    return undefined;
  }
}

/** For each hit written on another branch: what git says of it (read from its memory's `code`), by id. */
async function branchNotes(hits: Hit[], git: Checkout, settings: PromptHookSettings, deadline: number): Promise<Map<string, string>> {
  const notes = new Map<string, string>();
  for (const { memory } of hits) {
    if (!memory.flags?.includes("other_branch")) continue;
    const response = await requestCairn(settings.memoryCoreUrl!, settings.token!, `/v1/memories/${memory.id}`, deadline);
    const code = response.ok ? ((await response.json()) as { code?: { branch?: string; commit?: string } }).code : undefined;
    const note = await branchNote(memory.branch ?? code?.branch, code?.commit, git.mainBranch, git.options);
    if (note) notes.set(memory.id, note);
  }
  return notes;
}

/**
 * The unread messages' lines, then one line per memory: id, day, who, what, in as many words as the budget
 * leaves after the messages.
 */
function render(hits: Hit[], notes: Map<string, string>, unread: Unread): string | undefined {
  const context = (inbox: string[], lines: string[]) => [...inbox, ...(lines.length > 0 ? [HEADER, ...lines] : [])].join("\n");
  const print = (inbox: string[], lines: string[]) =>
    `${JSON.stringify({ hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: context(inbox, lines) } })}\n`;
  const inbox = inboxBlock(unread, (lines) => Buffer.byteLength(print(lines, [])) <= HOOK_OUTPUT_BYTES);
  const wrap = (lines: string[]) => print(inbox, lines);
  const lines: string[] = [];
  for (const { memory } of hits) {
    const note = notes.get(memory.id);
    const head = `- ${memory.id} (${memory.recorded_at.slice(0, 10)}, ${memory.agent}${memory.kind ? `, ${memory.kind}` : ""}${note ? `; ${note}` : ""}): `;
    const words = (memory.text ?? memory.prompt ?? "").replace(/\s+/g, " ").trim();
    const line = (cut: string) => head + (cut.length < words.length ? `${cut}…` : cut);
    // The longest cut of the words that keeps everything printed within the budget.
    let cut = words;
    while (cut.length > 0 && Buffer.byteLength(wrap([...lines, line(cut)])) > HOOK_OUTPUT_BYTES) {
      cut = cut.slice(0, Math.floor(cut.length * 0.9)).trimEnd();
    }
    if (cut.length < 12) break;
    lines.push(line(cut));
  }
  return lines.length === 0 && inbox.length === 0 ? undefined : wrap(lines);
}
