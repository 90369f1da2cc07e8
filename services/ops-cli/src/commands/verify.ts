import type { components } from "@cairn/openapi";

type IntegrityReport = components["schemas"]["IntegrityReport"];
type RepairReport = components["schemas"]["RepairReport"];
import type { Io } from "../io.js";
import type { Target } from "../tokens.js";

/** Each workspace's integrity report, printed for a person (or as JSON); true when every one is healthy. */
export async function verify(targets: Target[], json: boolean, io: Io): Promise<boolean> {
  const reports: IntegrityReport[] = [];
  for (const { client } of targets) reports.push(await client.call("verify_store", {}));
  if (json) io.stdout.write(`${JSON.stringify(reports, null, 2)}\n`);
  else for (const report of reports) io.stdout.write(describe(report));
  return reports.every((r) => r.healthy);
}

export function describe(report: IntegrityReport): string {
  const lines = [`workspace ${report.workspace}: ${report.healthy ? "healthy" : "PROBLEMS FOUND"}`];
  lines.push(`  embedder: ${report.embedder.model} (${report.embedder.dimension} dimensions)`);
  for (const c of report.collections) {
    const stamp = c.stamp ? `${c.stamp.model} (${c.stamp.dimension})` : "none";
    lines.push(
      `  ${c.collection.padEnd(10)} ${String(c.count).padStart(8)} records  stamp ${stamp}${c.stamp_matches ? "" : "  <- does not match the embedder"}`,
    );
  }
  lines.push(`  tombstones ${String(report.tombstones).padStart(8)}`);
  lines.push(`  slots checked: ${report.slots_checked}`);
  for (const [check, count] of Object.entries(report.problem_counts)) lines.push(`  ${check}: ${count}`);
  for (const p of report.problems) lines.push(`    - ${p.check} in ${p.collection}${p.id ? ` ${p.id}` : ""}: ${p.detail}`);
  if (report.problems_truncated) lines.push("    ... (more problems; the counts above are complete)");
  return `${lines.join("\n")}\n`;
}

/**
 * Each workspace's problems mended (with `apply`) or listed as what would be mended; true when, with `apply`,
 * every workspace is healthy afterwards.
 */
export async function repair(targets: Target[], apply: boolean, json: boolean, io: Io): Promise<boolean> {
  const reports: RepairReport[] = [];
  const after: IntegrityReport[] = [];
  for (const { client } of targets) {
    reports.push(await client.call("repair_store", { apply }));
    if (apply) after.push(await client.call("verify_store", {}));
  }
  if (json) io.stdout.write(`${JSON.stringify({ repairs: reports, ...(apply ? { after } : {}) }, null, 2)}\n`);
  else {
    for (const r of reports) {
      io.stdout.write(describe(r.before));
      const done = r.applied;
      const what = [
        `${r.slots_retired} slots ${done ? "retired" : "to retire"}`,
        `${r.slots_restored} ${done ? "put back" : "to put back"}`,
        `${r.audit_entries_written} audit entries ${done ? "written" : "to write"}`,
        `${r.records_quarantined} damaged records ${done ? "moved" : "to move"} into quarantine`,
        `${r.memories} memories concerned`,
      ].join(", ");
      io.stdout.write(done ? `  repaired: ${what}\n` : `  dry run: ${what}; run again with --apply to mend\n`);
    }
    for (const report of after) io.stdout.write(`after repair, ${describe(report)}`);
  }
  return after.every((r) => r.healthy);
}
