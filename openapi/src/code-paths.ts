/**
 * Which `refs` of a memory are repository paths: memory-core files a memory under them (a memory cites the paths its
 * `code` names and these), and the loader's index lint asks git about them. One rule for both.
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
