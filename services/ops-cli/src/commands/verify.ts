import type { IntegrityReport } from "../client.js";
import type { Io } from "../io.js";
import type { Target } from "../tokens.js";

/** Each workspace's integrity report, printed for a person (or as JSON); true when every one is healthy. */
export async function verify(targets: Target[], json: boolean, io: Io): Promise<boolean> {
  const reports: IntegrityReport[] = [];
  for (const { client } of targets) reports.push(await client.verify());
  if (json) io.stdout.write(`${JSON.stringify(reports, null, 2)}\n`);
  else for (const report of reports) io.stdout.write(describe(report));
  return reports.every((r) => r.healthy);
}

function describe(report: IntegrityReport): string {
  const lines = [`workspace ${report.workspace}: ${report.healthy ? "healthy" : "PROBLEMS FOUND"}`];
  lines.push(`  embedder: ${report.embedder.model} (${report.embedder.dimension} dimensions)`);
  for (const c of report.collections) {
    const stamp = c.stamp ? `${c.stamp.model} (${c.stamp.dimension})` : "none";
    lines.push(`  ${c.collection.padEnd(10)} ${String(c.count).padStart(8)} records  stamp ${stamp}${c.stamp_matches ? "" : "  <- does not match the embedder"}`);
  }
  lines.push(`  tombstones ${String(report.tombstones).padStart(8)}`);
  lines.push(`  slots checked: ${report.slots_checked}`);
  for (const [check, count] of Object.entries(report.problem_counts)) lines.push(`  ${check}: ${count}`);
  for (const p of report.problems) lines.push(`    - ${p.check} in ${p.collection}${p.id ? ` ${p.id}` : ""}: ${p.detail}`);
  if (report.problems_truncated) lines.push("    ... (more problems; the counts above are complete)");
  return `${lines.join("\n")}\n`;
}
