/**
 * The prompt hook (`cairn-load --hook prompt`): for Claude Code's and Codex's UserPromptSubmit, a few pointers
 * to memories that bear on the prompt, and only when Cairn is sure. Whatever goes wrong — no prompt, no
 * settings, a slow or unreachable Cairn, a refused token — it prints nothing and exits 0, with the reason on
 * stderr: a hook must never block or break the prompt it runs for.
 */

/** Everything the hook prints, JSON included: a pointer or three, never a page. */
export const HOOK_OUTPUT_BYTES = 600;
const POINTERS = 3;
const HEADER = "Cairn memories that bear on this (open with get_memory):";

export interface PromptHookSettings {
  memoryCoreUrl: URL | undefined;
  token: string | undefined;
  timeoutMs: number;
}

interface Hit {
  confidence: string;
  memory: { id: string; agent: string; recorded_at: string; kind?: string; text?: string; prompt?: string };
}

export type HookOutcome = { output: string } | { silent: string };

export async function promptHook(stdin: string, settings: PromptHookSettings): Promise<HookOutcome> {
  let prompt: unknown;
  try {
    prompt = (JSON.parse(stdin) as { prompt?: unknown }).prompt;
  } catch {
    return { silent: "stdin is not the hook's JSON" };
  }
  if (typeof prompt !== "string" || !/\S/.test(prompt)) return { silent: "no prompt in the hook's JSON" };
  if (!settings.memoryCoreUrl || !settings.token) return { silent: "CAIRN_URL and CAIRN_TOKEN are not both set" };

  let hits: Hit[];
  try {
    const response = await fetch(new URL("/v1/memories/query", settings.memoryCoreUrl), {
      method: "POST",
      headers: { authorization: `Bearer ${settings.token}`, "content-type": "application/json" },
      // The contract's limit on a query's length; a longer prompt's head says what it is about.
      body: JSON.stringify({ query: prompt.slice(0, 1000), limit: POINTERS, min_confidence: "high", detail: "brief" }),
      signal: AbortSignal.timeout(settings.timeoutMs),
    });
    if (!response.ok) return { silent: `Cairn answered ${response.status}` };
    hits = ((await response.json()) as { hits: Hit[] }).hits.filter((h) => h.confidence === "high");
  } catch (error) {
    const name = (error as Error).name;
    return { silent: name === "TimeoutError" ? `no answer from Cairn within ${settings.timeoutMs} ms` : "Cairn is unreachable" };
  }
  const output = hits.length === 0 ? undefined : render(hits);
  return output ? { output } : { silent: "nothing here with high confidence" };
}

/** One line per memory: id, day, who, what, in as many words as the budget leaves. */
function render(hits: Hit[]): string | undefined {
  const wrap = (lines: string[]) =>
    `${JSON.stringify({ hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: [HEADER, ...lines].join("\n") } })}\n`;
  const lines: string[] = [];
  for (const { memory } of hits) {
    const head = `- ${memory.id} (${memory.recorded_at.slice(0, 10)}, ${memory.agent}${memory.kind ? `, ${memory.kind}` : ""}): `;
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
  return lines.length === 0 ? undefined : wrap(lines);
}
