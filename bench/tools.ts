import { loadContract } from "@cairn/openapi";
import { toolsFor } from "../services/memory-core/src/mcp/tools.js";
import { INSTRUCTIONS } from "../services/memory-core/src/mcp/server.js";

/**
 * What an MCP client is handed before it asks anything: the bytes of `tools/list` per role, per tool and in all,
 * and of the server's instructions. Every session that connects pays them in context.
 */
export async function benchTools(argv: string[]): Promise<void> {
  const contract = await loadContract();
  const bytes = (value: unknown) => (value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value)));
  const report: Record<string, unknown> = { instructions_bytes: Buffer.byteLength(INSTRUCTIONS) };
  for (const role of ["agent", "admin"] as const) {
    const tools = toolsFor(contract.operations, role);
    const rows = tools.map((t) => ({
      tool: t.name,
      bytes: bytes(t),
      description: Buffer.byteLength(t.description ?? ""),
      input_schema: bytes(t.inputSchema),
      output_schema: bytes(t.outputSchema),
    }));
    report[role] = { tools_list_bytes: bytes({ tools }), tools: rows };
    if (!argv.includes("--json")) {
      process.stdout.write(`${role} token: tools/list ${bytes({ tools })} bytes, ${tools.length} tools\n`);
      process.stdout.write(
        `  ${"tool".padEnd(20)} ${"bytes".padStart(6)} ${"descr".padStart(6)} ${"input".padStart(6)} ${"output".padStart(6)}\n`,
      );
      for (const r of rows) {
        process.stdout.write(
          `  ${r.tool.padEnd(20)} ${String(r.bytes).padStart(6)} ${String(r.description).padStart(6)} ${String(r.input_schema).padStart(6)} ${String(r.output_schema).padStart(6)}\n`,
        );
      }
    }
  }
  if (argv.includes("--json")) process.stdout.write(`${JSON.stringify(report)}\n`);
  else process.stdout.write(`instructions: ${String(report.instructions_bytes)} bytes\n`);
}
