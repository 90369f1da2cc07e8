import type { Summary } from "@cairn/memory-core";

/** What a summary says, whoever wrote it: the model or the extractive fallback. */
export type StructuredSummary = Pick<Summary, "title" | "summary" | "decisions" | "dropped" | "open_questions" | "next_steps">;
