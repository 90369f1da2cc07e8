/**
 * The rules of the services' Dockerfile (issues 6 and 16): multi-stage on a pinned slim image of the current Node
 * LTS line, production
 * dependencies only, an unprivileged user, a healthcheck, and no secret in a build argument or environment.
 */
export function dockerfileViolations(text: string): string[] {
  const out: string[] = [];
  const lines = joinContinuations(text);
  const args = new Map<string, string>();
  for (const line of lines) {
    const arg = /^ARG\s+([A-Za-z_][A-Za-z0-9_]*)=(\S+)/.exec(line);
    if (arg) args.set(arg[1]!, arg[2]!);
  }
  const stages = lines.filter((line) => /^FROM\s/i.test(line));
  if (stages.length < 2) out.push("not multi-stage");
  for (const stage of stages) {
    const image = stage.split(/\s+/)[1]!.replace(/^\$\{?([A-Za-z0-9_]+)\}?$/, (_, name: string) => args.get(name) ?? "");
    if (!/^node:24\.\d+\.\d+-[a-z]+-slim(@sha256:[0-9a-f]{64})?$/.test(image)) {
      out.push(`stage image ${image || stage} is not a pinned Node 24 slim image`);
    }
  }
  if (!lines.some((line) => /^RUN\s.*\bnpm ci\b.*--omit=dev/.test(line))) out.push("no `npm ci --omit=dev`");
  if (lines.some((line) => /^RUN\s.*\bnpm (install|i)\b/.test(line))) out.push("`npm install` instead of the lock file");

  const finalStage = lines.slice(lines.lastIndexOf(stages.at(-1) ?? ""));
  const users = finalStage.filter((line) => /^USER\s/.test(line));
  const user = users.at(-1)?.split(/\s+/)[1];
  if (!user) out.push("runs as root (no USER in the final stage)");
  else if (/^(root|0)(:|$)/.test(user)) out.push(`runs as root (USER ${user})`);
  if (!finalStage.some((line) => /^HEALTHCHECK\s+(?!NONE)/.test(line))) out.push("no HEALTHCHECK in the final stage");
  if (!finalStage.some((line) => /^CMD\s/.test(line))) out.push("no CMD in the final stage");

  for (const line of lines) {
    if (/^(ENV|ARG)\s/.test(line) && /(TOKEN|API_KEY|PASSWORD|SECRET)\b[^_]/i.test(`${line} `) && !/TOKENS_FILE/.test(line)) {
      out.push(`a secret in the image: ${line}`);
    }
    if (/^(COPY|ADD)\s.*(secrets|\.env\b|tokens\.yaml)/.test(line)) out.push(`copies a secret into the image: ${line}`);
  }
  return out;
}

function joinContinuations(text: string): string[] {
  return text
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith("#"));
}
