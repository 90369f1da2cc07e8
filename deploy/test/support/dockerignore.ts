/**
 * What `docker build` would send as context: .dockerignore rules applied the way Docker applies them
 * (Go filepath.Match per path segment, `**` across segments, a rule excludes a path when it matches the path
 * or one of its parent directories, the last matching rule wins, `!` re-includes).
 */
export interface IgnoreRule {
  negate: boolean;
  pattern: RegExp;
}

export function parseDockerignore(text: string): IgnoreRule[] {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith("#"))
    .map((line) => {
      const negate = line.startsWith("!");
      const body = (negate ? line.slice(1) : line).replace(/^\/+/, "").replace(/\/+$/, "");
      return { negate, pattern: globToRegExp(body) };
    });
}

export function isExcluded(rules: IgnoreRule[], path: string): boolean {
  const candidates = ancestorsAndSelf(path);
  let excluded = false;
  for (const rule of rules) {
    if (candidates.some((candidate) => rule.pattern.test(candidate))) excluded = !rule.negate;
  }
  return excluded;
}

function ancestorsAndSelf(path: string): string[] {
  const parts = path.split("/");
  return parts.map((_, i) => parts.slice(0, i + 1).join("/"));
}

function globToRegExp(glob: string): RegExp {
  let out = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*" && glob[i + 1] === "*") {
      const slashAfter = glob[i + 2] === "/";
      out += slashAfter ? "(?:.*/)?" : ".*";
      i += slashAfter ? 2 : 1;
    } else if (c === "*") out += "[^/]*";
    else if (c === "?") out += "[^/]";
    else out += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${out}$`);
}
