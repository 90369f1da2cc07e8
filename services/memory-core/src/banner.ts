import type { Stack } from "./stack.js";

/** What an operator needs after `npm start`: where Cairn listens, which tokens to use, what to paste. */
export function startBanner(stack: Stack): string {
  const agentToken = stack.generatedTokens?.find((t) => t.role === "agent");
  const adminToken = stack.generatedTokens?.find((t) => t.role === "admin");
  const token = agentToken?.token ?? "<token from the tokens file>";
  const lines = [
    "",
    `Cairn memory-core is running at ${stack.url.origin}`,
    `  MCP (Streamable HTTP): ${stack.mcpUrl}`,
    `  REST:                  ${stack.url.origin}/v1  (contract: ${stack.url.origin}/openapi.json)`,
    ...(stack.consoleUrl ? [`  Console (browser):     ${stack.consoleUrl}  (sign in with a token below)`] : []),
    `  Chroma:                ${stack.embeddedChroma ? "embedded, data under CAIRN_DATA_DIR" : "external (CAIRN_CHROMA_URL)"}`,
    "",
  ];
  if (stack.generatedTokens) {
    lines.push(`Tokens written to ${stack.tokensFile} (keep it private):`);
    if (adminToken) lines.push(`  admin  (workspace ${adminToken.workspace}, agent ${adminToken.agent}): ${adminToken.token}`);
    if (agentToken) lines.push(`  agent  (workspace ${agentToken.workspace}, agent ${agentToken.agent}): ${agentToken.token}`);
    if (stack.generatedTokens.some((t) => t.role === "importer")) {
      lines.push("  importer: in the same file; `npm run cairn -- import git --repo PATH` uses it (history, not a teammate)");
    }
  } else {
    lines.push(`Tokens: ${stack.tokensFile}`);
  }
  lines.push(
    "",
    "Claude Code:",
    `  claude mcp add --transport http cairn ${stack.mcpUrl} --header "Authorization: Bearer ${token}"`,
    "",
    "Codex (~/.codex/config.toml), with CAIRN_TOKEN exported in Codex's environment:",
    "  [mcp_servers.cairn]",
    `  url = "${stack.mcpUrl}"`,
    `  bearer_token_env_var = "CAIRN_TOKEN"`,
    "",
    "Press Ctrl-C to stop.",
    "",
  );
  return lines.join("\n");
}
