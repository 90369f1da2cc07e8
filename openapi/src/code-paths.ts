/**
 * What a memory's code citations are, said once for memory-core and the tools that write or read citations:
 * which `refs` are repository paths, which names the contract takes in a citation, and how a path asked about
 * matches the paths a memory cites.
 *
 * A path asked about, Q, matches a memory citing C when:
 * - C is Q;
 * - Q names a folder (with or without its trailing `/`) and C lies under it;
 * - C is the folder Q lies directly in (a memory about `src/auth/` is about each of its files).
 * An ancestor folder further up does not match: a memory citing `src/` would otherwise answer for every file.
 */

/** A path segment that is a file's name with an extension: `refresh.ts`, `Dockerfile.dev`, `README.md`. */
const FILE_NAME = /\.[A-Za-z][A-Za-z0-9_-]{0,11}$/;
/** A first segment that names a host on the web. */
const WEB_HOST = /^[a-z0-9-]+(\.[a-z0-9-]+)*\.(com|org|net|io|dev|app|co|ai|sh|gg|me)$/i;
/** A line or a range after a path: `:42`, `:40-58`, `#L40`, `#L40-L58`. */
const LINE_SUFFIX = /(?::\d+(?:-\d+)?|#L\d+(?:-L?\d+)?)$/;

/**
 * The repository path a ref names, when it names one: relative, `/`-separated, no scheme, no spaces, no `.` or
 * `..` segment, and either a folder (`src/auth/`), a path of several segments, or a file name with an extension.
 * Tickets (`AUTH-412`), commits, URLs and version numbers (`1.2.3`) are not paths.
 */
export function pathOfRef(ref: string): string | undefined {
  const path = ref.trim().replace(LINE_SUFFIX, "").replace(/^\.\//, "");
  if (path.length === 0 || path.length > 512) return undefined;
  if (/[\s\\@]|:\/\/|^[/~]|\/\//.test(path) || /\p{Cc}/u.test(path)) return undefined;
  const segments = path.split("/");
  if (segments.some((s) => s === "." || s === "..")) return undefined;
  const name = segments.at(-1) === "" ? segments.at(-2) : segments.at(-1);
  if (name === undefined || name === "") return undefined;
  const folder = path.endsWith("/");
  if (!folder && segments.length === 1 && !FILE_NAME.test(name)) return undefined;
  // `github.com/acme/api` is a place on the web, not a folder of the repository.
  if (segments.length > 1 && WEB_HOST.test(segments[0]!)) return undefined;
  return path;
}

/** The folder a path lies directly in, with its trailing `/`; undefined at the repository's top. */
function folderOf(path: string): string | undefined {
  const trimmed = path.endsWith("/") ? path.slice(0, -1) : path;
  const slash = trimmed.lastIndexOf("/");
  return slash < 0 ? undefined : trimmed.slice(0, slash + 1);
}

/**
 * The keys an index files a cited path under: the path itself (`=`), and each folder above it as a folder that
 * holds something cited (`<`). A path asked about is looked up by `lookupKeys`.
 */
export function citationKeys(cited: string): string[] {
  const keys = [`=${cited}`];
  for (let folder = folderOf(cited); folder !== undefined; folder = folderOf(folder)) keys.push(`<${folder}`);
  return keys;
}

/** The keys whose memories match a path asked about (see the rules above). */
export function lookupKeys(asked: string): string[] {
  const folder = asked.endsWith("/") ? asked : `${asked}/`;
  const keys = [`=${asked}`, `<${folder}`];
  if (!asked.endsWith("/")) keys.push(`=${folder}`);
  const parent = folderOf(asked);
  if (parent !== undefined) keys.push(`=${parent}`);
  return keys;
}

/** Whether a memory citing `cited` matches any of the paths asked about: the rules above, without an index. */
export function citesAny(cited: readonly string[], asked: readonly string[]): boolean {
  if (cited.length === 0) return false;
  for (const q of asked) {
    const wanted = new Set(lookupKeys(q));
    for (const c of cited) for (const key of citationKeys(c)) if (wanted.has(key)) return true;
  }
  return false;
}

/**
 * The contract's patterns for what a citation names, as openapi/memory-core.yaml spells them (CodeCitation's
 * repository, BranchName, RepositoryPath, CommitId; a test holds them equal), and a check of each with its length:
 * a writer that builds a citation from git leaves out a name the contract would refuse rather than have the whole
 * memory refused.
 */
export const CONTRACT_PATTERNS = {
  repository: String.raw`^[A-Za-z0-9._~/-]+$`,
  branch: String.raw`^[^-\s~^:?*\[\\\p{Cc}][^\s~^:?*\[\\\p{Cc}]*$`,
  path: String.raw`^(?:[^./\\\p{Cc}][^/\\\p{Cc}]*|\.[^./\\\p{Cc}][^/\\\p{Cc}]*|\.\.[^/\\\p{Cc}]+)(?:/(?:[^./\\\p{Cc}][^/\\\p{Cc}]*|\.[^./\\\p{Cc}][^/\\\p{Cc}]*|\.\.[^/\\\p{Cc}]+))*/?$`,
  commit: String.raw`^[0-9a-f]{7,64}$`,
} as const;

const fits = (pattern: string, max: number) => {
  const re = new RegExp(pattern, "u");
  return (text: string) => text.length >= 1 && text.length <= max && re.test(text);
};

export const CITATION_NAMES = {
  repository: fits(CONTRACT_PATTERNS.repository, 200),
  branch: fits(CONTRACT_PATTERNS.branch, 255),
  path: fits(CONTRACT_PATTERNS.path, 512),
  commit: fits(CONTRACT_PATTERNS.commit, 64),
} as const;
