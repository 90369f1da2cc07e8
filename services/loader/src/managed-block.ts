/**
 * A managed block: Cairn owns the text between its markers and nothing else in the file. Writing the same
 * content twice changes no byte; new content replaces the old block in place; text outside is untouched.
 */

const begin = (agent: string) => `<!-- cairn:begin agent=${agent} (managed by cairn-load; edit the index, not this block) -->`;
const end = (agent: string) => `<!-- cairn:end agent=${agent} -->`;

export function upsertBlock(existing: string, agent: string, content: string): string {
  const block = `${begin(agent)}\n${content.trimEnd()}\n${end(agent)}`;
  const start = existing.indexOf(begin(agent));
  const stop = existing.indexOf(end(agent));
  if (start >= 0 && stop > start) {
    return existing.slice(0, start) + block + existing.slice(stop + end(agent).length);
  }
  if (existing.length === 0) return `${block}\n`;
  const separator = existing.endsWith("\n\n") ? "" : existing.endsWith("\n") ? "\n" : "\n\n";
  return `${existing}${separator}${block}\n`;
}

/** True when the file holds a begin marker without its end: refuse rather than guess. */
export function hasBrokenBlock(existing: string, agent: string): boolean {
  const start = existing.indexOf(begin(agent));
  const stop = existing.indexOf(end(agent));
  return start >= 0 !== stop >= 0 || (start >= 0 && stop < start);
}
