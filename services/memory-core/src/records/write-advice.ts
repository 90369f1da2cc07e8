import type { AddMemoryRequest } from "./types.js";

/**
 * What makes an entry recall badly, said so the agent can do better next turn (runbooks/end-of-turn.md): a log
 * of commands with no decision, a decision with nothing it rests on, no next step, nothing an exact search could
 * find it by. Advice only: the write is stored whatever it says.
 */
export function writeAdvice(entry: Pick<AddMemoryRequest, "prompt" | "thought" | "response" | "kind" | "refs" | "checks">): string[] {
  const advice: string[] = [];
  const text = [entry.prompt, entry.thought, entry.response].join("\n");
  if (isCommandLog(`${entry.thought}\n${entry.response}`)) {
    advice.push("This reads as a log of commands: say what you decided and why in thought, and what came of it in response.");
  }
  const decides = entry.kind === "decision" || DECISION.test(entry.thought);
  if (decides && (entry.checks ?? []).length === 0 && !EVIDENCE.test(text)) {
    advice.push("A decision with no evidence: name what it rests on (a figure with its command, a test, a link) in thought or checks.");
  }
  if (!NEXT_STEP.test(entry.response)) {
    advice.push('No next step: end the response with what comes next ("Next: …"), so query_recent_turns can hand it back.');
  }
  if ((entry.refs ?? []).length === 0 && !IDENTIFIER.test(text)) {
    advice.push("Nothing names a file, ticket or commit: put them in the text and in refs, so an exact search finds this entry.");
  }
  return advice;
}

const DECISION = /\b(decided|decide|chose|choose|picked|went with|switched to|settled on|kept|dropped)\b/i;
/**
 * A figure, a measurement, a test or a link: what a decision can rest on. Patterns over a whole entry start a run
 * only where the run starts (the look-behinds): tried inside a run as well, they read the rest of it again at
 * every character, and one long word or number would cost the square of its length.
 */
const EVIDENCE =
  /(?<!\d)\d+(?:[.,]\d+)?\s?(?:ms|s|%|x|kb|mb|gb|rps|qps|req\/s)\b|\b(?:p9\d|p50|measured|benchmark|bench|profiled?|tests? (?:pass|fail)\w*|reproduced)\b|https?:\/\//i;
const NEXT_STEP = /\b(next|then|todo|follow[- ]?up|remaining|left to|still to|will|plan|blocked)\b/i;
/** A path, a ticket, an issue number, a commit hash or a name in backticks. */
const IDENTIFIER =
  /(?<![\w.-])[\w.-]+\/[\w./-]+|\b\w+\.(?:ts|js|py|go|rs|java|rb|sql|ya?ml|json|md|tsx|jsx|sh|toml)\b|\b[A-Z][A-Z0-9]+-\d+\b|#\d+\b|\b[0-9a-f]{7,40}\b|`[^`]+`/;
const COMMAND =
  /^\s*(?:\$\s|>\s|(?:npm|npx|pnpm|yarn|git|cd|ls|cat|grep|rg|curl|docker|kubectl|make|python3?|node|go|cargo|pip|sed|awk|psql|ssh)\s)/;

/** Mostly command lines (two or more, most of the lines) with nothing said about them. */
function isCommandLog(text: string): boolean {
  const lines = text.split(/\n/).filter((line) => line.trim() !== "");
  const commands = lines.filter((line) => COMMAND.test(line) || /^\s*`[^`]+`\s*$/.test(line)).length;
  return (
    commands >= 2 && commands / lines.length >= 0.6 && !/\b(decided|because|so that|instead|chose|dropped|works|fails|found)\b/i.test(text)
  );
}
