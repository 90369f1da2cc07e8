export interface BudgetReport {
  bytes: number;
  lines: number;
  over: boolean;
  /** What a harness reading only the budget would miss, when over. */
  cut?: { bytes: number; lines: number; firstMissedLine: string };
}

/** Measures the block against the harness's budget. It reports; it never shortens anything. */
export function checkBudget(content: string, budget: { bytes: number; lines?: number }): BudgetReport {
  const bytes = Buffer.byteLength(content, "utf8");
  const lines = content.split("\n");
  let keptLines = lines.length;
  let keptBytes = 0;
  for (let i = 0; i < lines.length; i++) {
    const next = keptBytes + Buffer.byteLength(lines[i]!, "utf8") + 1;
    if (next > budget.bytes || (budget.lines !== undefined && i >= budget.lines)) {
      keptLines = i;
      break;
    }
    keptBytes = next;
  }
  const over = keptLines < lines.length;
  return {
    bytes,
    lines: lines.length,
    over,
    ...(over
      ? {
          cut: {
            bytes: bytes - keptBytes,
            lines: lines.length - keptLines,
            firstMissedLine: lines.slice(keptLines).find((l) => l.trim()) ?? "",
          },
        }
      : {}),
  };
}
