/**
 * Run as a child process (`node --allow-natives-syntax --import tsx regex-backtracks.ts`): the regular-expression
 * work of the text analyser (`terms`) and of a write's advice (`writeAdvice`, each text as a turn's thought and
 * response) on given texts, counted by V8 itself. Every match the analyser makes is made again by a
 * copy of its expression that may backtrack at most `factor` times per character of the subject
 * (%NewRegExpWithBacktrackLimit); a copy that gives up, where the expression matched, is an expression whose work
 * grows faster than its subject. Prints one JSON line: the expressions that gave up, and how many matches were checked.
 *
 * stdin: JSON `{ factor, texts, control }`; `control` is an expression run over every text as the analyser's are,
 * so that the check is seen to catch one that backtracks (a quadratic one) beside the analyser's.
 *
 * What V8 counts: the backtracks of its general matching, which is how it runs the analyser's Unicode classes
 * (\p{L}...). A greedy loop over a one-character class of the basic plane ([\w.-]+, \d+) steps back without
 * counting, so a quadratic pattern of that kind passes this check unseen.
 */
import { terms } from "../../src/lexical/text-analysis.js";
import { writeAdvice } from "../../src/records/write-advice.js";

interface Input {
  factor: number;
  texts: string[];
  control?: string;
}

const input = JSON.parse(
  await new Promise<string>((resolve) => {
    let data = "";
    process.stdin.setEncoding("utf8");
    process.stdin.on("data", (chunk) => (data += chunk));
    process.stdin.on("end", () => resolve(data));
  }),
) as Input;

// The natives syntax is V8's own, not JavaScript's: compiled by V8 from a string, past the TypeScript loader.
const withLimit = new Function("source", "flags", "limit", "return %NewRegExpWithBacktrackLimit(source, flags, limit)") as (
  source: string,
  flags: string,
  limit: number,
) => RegExp;

const exec = RegExp.prototype.exec;
const copies = new Map<string, RegExp>();
const gaveUp = new Map<string, number>();
let checked = 0;
let checking = false;

RegExp.prototype.exec = function (this: RegExp, subject: string): RegExpExecArray | null {
  if (checking) return exec.call(this, subject);
  const text = String(subject);
  const from = this.lastIndex;
  const result = exec.call(this, text);
  checking = true;
  try {
    const limit = input.factor * (text.length + 1);
    const key = `${this.flags}/${limit}/${this.source}`;
    let copy = copies.get(key);
    if (!copy) {
      copy = withLimit(this.source, this.flags, limit);
      copies.set(key, copy);
    }
    copy.lastIndex = from;
    const bounded = exec.call(copy, text);
    checked += 1;
    if (result !== null && bounded?.index !== result.index) gaveUp.set(this.source, Math.max(gaveUp.get(this.source) ?? 0, text.length));
  } finally {
    checking = false;
  }
  return result;
};

const found: string[][] = [];
for (const text of input.texts) {
  found.push(terms(text));
  writeAdvice({ prompt: "Note the decision.", thought: text, response: text });
  if (input.control) text.match(new RegExp(input.control, "gu"));
}
RegExp.prototype.exec = exec;
process.stdout.write(`${JSON.stringify({ gaveUp: [...gaveUp].map(([source, length]) => ({ source, length })), checked, found })}\n`);
