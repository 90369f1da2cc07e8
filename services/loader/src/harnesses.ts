export type HarnessName = "claude-code" | "codex" | "opencode" | "generic";

export interface Harness {
  name: HarnessName;
  /** The file the block goes into, relative to the target; none for `generic` (stdout). */
  file?: (agent: string) => string;
  /** How much of the block the harness is known to read at session start. */
  budget: { bytes: number; lines?: number };
  /** What the operator should know about where the harness looks. */
  note: string;
}

/**
 * Where each harness reads its session instructions:
 * - Claude Code loads the project's CLAUDE.md whole at session start (its auto-memory MEMORY.md, by contrast,
 *   only its first 200 lines), so the block goes into CLAUDE.md and the budget keeps it within 200 lines.
 * - Codex reads AGENTS.md up to `project_doc_max_bytes`, 32 KiB by default.
 * - OpenCode reads the files listed under `instructions` in opencode.json: the block gets its own file there.
 */
export const HARNESSES: Record<HarnessName, Harness> = {
  "claude-code": {
    name: "claude-code",
    file: () => "CLAUDE.md",
    budget: { bytes: 40_000, lines: 200 },
    note: "Claude Code loads CLAUDE.md at session start; keep the block under 200 lines.",
  },
  codex: {
    name: "codex",
    file: () => "AGENTS.md",
    budget: { bytes: 32 * 1024 },
    note: "Codex reads AGENTS.md up to project_doc_max_bytes (32 KiB by default).",
  },
  opencode: {
    name: "opencode",
    file: (agent) => `.opencode/cairn/${agent}.md`,
    budget: { bytes: 32 * 1024 },
    note: "OpenCode reads the files listed under `instructions` in opencode.json.",
  },
  generic: {
    name: "generic",
    budget: { bytes: 32 * 1024 },
    note: "Printed to standard output for any harness.",
  },
};

export const isHarness = (name: string): name is HarnessName => Object.hasOwn(HARNESSES, name);
