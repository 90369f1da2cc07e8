import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { ApiError, RestClient } from "@cairn/openapi";
import { backup } from "./commands/backup.js";
import { init, INIT_HARNESSES, type InitHarness } from "./commands/init.js";
import { importGit, importTranscripts } from "./commands/import.js";
import { reembed } from "./commands/reembed.js";
import { checkFile, restore } from "./commands/restore.js";
import { addToken, listTokens, revokeToken, tokensFilePath } from "./commands/tokens.js";
import { listReview, REVIEW_SOURCES, reviewAll, type ReviewFilter } from "./commands/review.js";
import { repair, verify } from "./commands/verify.js";
import { loadCliConfig, loadImportConfig, urlOf } from "./config.js";
import { HARNESSES, type Harness } from "./import/transcripts.js";
import { CliError, usageError, type Io } from "./io.js";
import { resolveTargets } from "./tokens.js";

export type { Io } from "./io.js";

const USAGE = `usage: cairn <command> [--url URL] [--token TOKEN | --tokens-file FILE]
  init --agent NAME --harness claude-code|codex|opencode|generic [--project DIR] [--url URL] [--dry-run]
                                wire a git repository to Cairn: the agent's index, the harness's hooks and
                                MCP entry (the token read from $CAIRN_TOKEN, never written); --project
                                defaults to the working directory
  backup  --out FILE            every record of each workspace into an NDJSON file with a manifest
  restore --in FILE [--workspace NAME]
                                store a backup's records back; what is there already is skipped
  verify  [--json]              check each workspace's store; exit 1 when a problem is found
  repair  [--apply] [--json]    mend what verify finds in the logs (a dry run without --apply);
                                with --apply, exit 1 when a workspace is still not healthy after
  reembed [--batch N]           re-embed each workspace after an embedding-model change (resumable)
  import git --repo PATH [--since DATE] [--branch NAME]
                                one memory per commit of a branch; reverts mark what they reverted outdated
  import transcripts --harness claude-code|codex --path FILE|DIR
                                one memory per exchange of Claude Code or Codex session files
  review list [--source S] [--agent A] [--session S] [--since D] [--until D] [--limit N] [--json]
                                how many memories wait for review (those the filters select, and all),
                                and the oldest of them; --since/--until on when memory-core stored them
  review approve|reject --reason R [the same filters] [--dry-run]
                                one verdict and one reason for every waiting memory the filters select,
                                each audited; resumable, and a run repeated changes nothing; --dry-run counts
  tokens add --agent NAME [--workspace W] [--role agent|importer|admin]
                                a new token, printed once; memory-core applies it while serving
  tokens list [--json]          who holds a token (no secrets shown)
  tokens revoke --agent NAME [--workspace W]
                                refused by memory-core from its next request on
--url defaults to http://127.0.0.1:8790; the admin token comes from --token, CAIRN_ADMIN_TOKEN, or
--tokens-file (memory-core's tokens file: every workspace it holds an admin token for). The imports write
with one token: --token, CAIRN_IMPORT_TOKEN, the importer token of memory-core's tokens file (the first start
writes one), CAIRN_TOKEN or CAIRN_ADMIN_TOKEN, the first found. Both can run again:
nothing is stored twice. Secrets (API keys, tokens, private keys, passwords) are redacted before sending.
The tokens commands edit memory-core's tokens file: --tokens-file, CAIRN_TOKENS_FILE, or .cairn/tokens.yaml.`;

const COMMON = {
  url: { type: "string" },
  token: { type: "string" },
  "tokens-file": { type: "string" },
  help: { type: "boolean", default: false },
} as const;

const REVIEW_FILTERS = {
  source: { type: "string" },
  agent: { type: "string" },
  session: { type: "string" },
  since: { type: "string" },
  until: { type: "string" },
} as const;

const TOKENS_FILE = { "tokens-file": { type: "string" }, help: { type: "boolean", default: false } } as const;

const COMMANDS = {
  init: {
    project: { type: "string" },
    agent: { type: "string" },
    harness: { type: "string" },
    url: { type: "string" },
    "dry-run": { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
  backup: { ...COMMON, out: { type: "string" } },
  restore: { ...COMMON, in: { type: "string" }, workspace: { type: "string" } },
  verify: { ...COMMON, json: { type: "boolean", default: false } },
  repair: { ...COMMON, apply: { type: "boolean", default: false }, json: { type: "boolean", default: false } },
  reembed: { ...COMMON, batch: { type: "string" } },
  "import git": { ...COMMON, repo: { type: "string" }, since: { type: "string" }, branch: { type: "string" } },
  "import transcripts": { ...COMMON, harness: { type: "string" }, path: { type: "string" } },
  "review list": { ...COMMON, ...REVIEW_FILTERS, limit: { type: "string" }, json: { type: "boolean", default: false } },
  "review approve": { ...COMMON, ...REVIEW_FILTERS, reason: { type: "string" }, "dry-run": { type: "boolean", default: false } },
  "review reject": { ...COMMON, ...REVIEW_FILTERS, reason: { type: "string" }, "dry-run": { type: "boolean", default: false } },
  "tokens add": { ...TOKENS_FILE, agent: { type: "string" }, workspace: { type: "string" }, role: { type: "string" } },
  "tokens list": { ...TOKENS_FILE, json: { type: "boolean", default: false } },
  "tokens revoke": { ...TOKENS_FILE, agent: { type: "string" }, workspace: { type: "string" } },
} as const;

/** Commands that take what to do as a second word: `cairn import git`, `cairn tokens add`. */
const GROUPS = { import: ["git", "transcripts"], review: ["list", "approve", "reject"], tokens: ["add", "list", "revoke"] } as const;

type Command = keyof typeof COMMANDS;
const isCommand = (name: string | undefined): name is Command => name !== undefined && Object.hasOwn(COMMANDS, name);

/** The CLI: returns the exit code (0 done, 1 failed or problems found, 2 bad arguments). */
export async function main(argv: string[], io: Io): Promise<number> {
  const group = argv[0] !== undefined && Object.hasOwn(GROUPS, argv[0]) ? (argv[0] as keyof typeof GROUPS) : undefined;
  const [command, ...rest] = group && argv[1] !== undefined && !argv[1].startsWith("-") ? [`${group} ${argv[1]}`, ...argv.slice(2)] : argv;
  if (command === "help" || command === "--help" || command === "-h") {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  try {
    if (command === undefined) throw usageError(`no command given; one of ${Object.keys(COMMANDS).join(", ")} (cairn --help)`);
    if (command === "import")
      throw usageError(
        "import: say what to import: cairn import git --repo PATH, or cairn import transcripts --harness claude-code|codex --path FILE|DIR",
      );
    if (command === "review")
      throw usageError("review: say what to do: cairn review list, review approve --reason R, or review reject --reason R");
    if (command === "tokens")
      throw usageError("tokens: say what to do: cairn tokens add --agent NAME, tokens list, or tokens revoke --agent NAME");
    if (group && !isCommand(command)) {
      throw usageError(
        `${group}: unknown ${group === "import" ? "kind" : "action"} "${command.slice(group.length + 1)}"; one of ${GROUPS[group].join(", ")} (cairn --help)`,
      );
    }
    if (!isCommand(command)) throw usageError(`unknown command "${command}"; one of ${Object.keys(COMMANDS).join(", ")} (cairn --help)`);
    let values: Record<string, string | boolean | undefined>;
    try {
      values = parseArgs({ args: rest, strict: true, allowPositionals: false, options: COMMANDS[command] }).values as typeof values;
    } catch (error) {
      throw usageError(`${command}: ${(error as Error).message.split("\n")[0]}`);
    }
    if (values.help) {
      io.stdout.write(`${USAGE}\n`);
      return 0;
    }
    return await run(command, values, io);
  } catch (error) {
    if (error instanceof CliError) {
      io.stderr.write(`cairn: ${error.message}\n`);
      return error.exitCode;
    }
    if (error instanceof ApiError) {
      io.stderr.write(`cairn: ${refusal(error)}\n`);
      return 1;
    }
    io.stderr.write(`cairn: ${(error as Error)?.message ?? String(error)}\n`);
    return 1;
  }
}

/**
 * What the operator reads when memory-core did not answer with success: the one place the REST client's errors
 * become the CLI's words. A bad token and a token of the wrong role say which flag to fix.
 */
function refusal(error: ApiError): string {
  const url = new URL(error.url);
  if (error.code === "unreachable") return `cannot reach memory-core at ${url.origin} (is it running? pass --url)`;
  if (error.status === 401) return "memory-core does not know this token (401): check --token or the tokens file";
  // The admin routes are the contract's admin operations; elsewhere a 403 is about the memory, not the role.
  if (error.status === 403 && (url.pathname.startsWith("/v1/admin/") || url.pathname.startsWith("/v1/review"))) {
    return "this token is not an admin token (403): the cairn commands need role admin";
  }
  if (error.code === "not_json") return `memory-core answered ${error.method} ${url.pathname}${url.search} with something that is not JSON`;
  const what = error.isProblem ? `${error.code}: ${error.detail}` : `HTTP ${error.status}`;
  return `memory-core refused ${error.method} ${url.pathname} (${what})${error.hint ? ` ${error.hint}` : ""}`;
}

async function run(command: Command, values: Record<string, string | boolean | undefined>, io: Io): Promise<number> {
  const string = (name: string) => (typeof values[name] === "string" ? (values[name] as string) : undefined);
  // Arguments are checked before anything is asked of memory-core.
  const out = string("out");
  const input = string("in");
  if (command === "backup" && !out) throw usageError("backup: --out FILE is required");
  if (command === "restore" && !input) throw usageError("restore: --in FILE is required");
  if (command === "import git" || command === "import transcripts") return runImport(command, string, io);
  if (command === "init") {
    const agent = string("agent");
    const harness = string("harness");
    if (!agent) throw usageError("init: --agent NAME is required");
    if (!harness) throw usageError(`init: --harness is required (${INIT_HARNESSES.join(", ")})`);
    if (!(INIT_HARNESSES as readonly string[]).includes(harness)) {
      throw usageError(`init: unknown harness "${harness}"; one of ${INIT_HARNESSES.join(", ")}`);
    }
    await init(
      {
        project: resolve(io.cwd, string("project") ?? "."),
        agent,
        harness: harness as InitHarness,
        url: urlOf({ url: string("url") }, io.env),
        dryRun: values["dry-run"] === true,
      },
      io,
    );
    return 0;
  }
  if (command === "tokens add" || command === "tokens list" || command === "tokens revoke") {
    const file = tokensFilePath(string("tokens-file"), io.env, io.cwd);
    if (command === "tokens add")
      await addToken(file, { agent: string("agent"), workspace: string("workspace"), role: string("role") }, io);
    else if (command === "tokens list") await listTokens(file, values.json === true, io);
    else await revokeToken(file, { agent: string("agent"), workspace: string("workspace") }, io);
    return 0;
  }
  const review =
    command === "review list" || command === "review approve" || command === "review reject" ? reviewArguments(command, string) : undefined;
  let batch = 100;
  if (command === "reembed" && string("batch") !== undefined) {
    const raw = string("batch")!;
    if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 500)
      throw usageError(`reembed: --batch must be a whole number from 1 to 500, not "${raw}"`);
    batch = Number(raw);
  }
  const config = loadCliConfig({ url: string("url"), token: string("token"), "tokens-file": string("tokens-file") }, io.env, io.cwd);

  if (command === "restore") {
    const file = resolve(io.cwd, input!);
    // The whole file is checked against its manifest before any token is used: nothing is sent from a damaged file.
    const manifest = await checkFile(file);
    const summary = await restore(file, manifest, await resolveTargets(config), string("workspace"), io);
    for (const w of summary.workspaces) {
      const parts = (["tombstones", "turns", "summaries", "messages"] as const).map((c) => {
        const t = w.totals[c];
        return `${c} ${t.stored} stored, ${t.skipped} skipped${t.forgotten ? `, ${t.forgotten} forgotten` : ""}${t.reembedded ? `, ${t.reembedded} re-embedded` : ""}`;
      });
      io.stdout.write(`restored ${w.workspace}: ${parts.join("; ")}\n`);
    }
    return 0;
  }

  const targets = await resolveTargets(config);
  if (command === "backup") {
    const summary = await backup(targets, resolve(io.cwd, out!), io);
    for (const w of summary.workspaces) {
      io.stdout.write(
        `backed up ${w.workspace}: ${w.counts.turns} turns, ${w.counts.summaries} summaries, ${w.counts.tombstones} tombstones, ${w.counts.messages} messages and read marks\n`,
      );
    }
    io.stdout.write(`wrote ${summary.records} records (${summary.bytes} bytes) to ${out}\n`);
    return 0;
  }
  if (review) {
    if (command === "review list") {
      await listReview(targets, review.filter, review.limit, values.json === true, io);
      return 0;
    }
    const decision = command === "review approve" ? "approve" : "reject";
    const dryRun = values["dry-run"] === true;
    const runs = await reviewAll(targets, { ...review.filter, decision, reason: review.reason!, dry_run: dryRun }, io);
    for (const r of runs) {
      if (dryRun)
        io.stdout.write(`${r.workspace}: ${r.matched} waiting memories match; would ${decision} them (dry run, nothing changed)\n`);
      else if (r.matched === 0) io.stdout.write(`${r.workspace}: nothing waiting matches; nothing changed\n`);
      else
        io.stdout.write(
          `${r.workspace}: ${decision === "approve" ? "approved" : "rejected"} ${r.reviewed} of ${r.matched} matching` +
            `${r.remaining > 0 ? `; ${r.remaining} still match (run again)` : ""}\n`,
        );
    }
    return runs.some((r) => r.remaining > 0 && !dryRun) ? 1 : 0;
  }
  if (command === "verify") return (await verify(targets, values.json === true, io)) ? 0 : 1;
  if (command === "repair") return (await repair(targets, values.apply === true, values.json === true, io)) ? 0 : 1;
  const summaries = await reembed(targets, batch, io);
  for (const s of summaries) {
    io.stdout.write(
      `reembedded ${s.workspace}: ${s.processed} records embedded in this run, ${s.total} in all${s.resumedAt ? ` (resumed at ${s.resumedAt})` : ""}\n`,
    );
  }
  return 0;
}

async function runImport(
  command: "import git" | "import transcripts",
  string: (name: string) => string | undefined,
  io: Io,
): Promise<number> {
  // Arguments first, then the whole input is read and checked, and only then is anything sent.
  const config = () =>
    loadImportConfig({ url: string("url"), token: string("token"), "tokens-file": string("tokens-file") }, io.env, io.cwd);
  if (command === "import git") {
    const repo = string("repo");
    if (!repo) throw usageError("import git: --repo PATH is required");
    const { url, token } = config();
    const branch = string("branch");
    const since = string("since");
    const s = await importGit(
      new RestClient({ baseUrl: url, token }),
      resolve(io.cwd, repo),
      { ...(branch ? { branch } : {}), ...(since ? { since } : {}) },
      io,
    );
    io.stdout.write(
      `imported git ${repo}${branch ? ` (${branch})` : ""}: ${s.commits} commits, ${s.stored} stored, ${s.replayed} already there` +
        `${s.conflicts ? `, ${s.conflicts} stored before with other content (left as they were)` : ""}` +
        `; ${s.reverts} reverts, ${s.marked} reverted commits marked outdated` +
        `${s.addedForReverts ? ` (${s.addedForReverts} of them from before --since)` : ""}\n`,
    );
    return 0;
  }
  const harness = string("harness");
  const path = string("path");
  if (!harness) throw usageError(`import transcripts: --harness is required (${HARNESSES.join(" or ")})`);
  if (!(HARNESSES as readonly string[]).includes(harness)) {
    throw usageError(`import transcripts: unknown harness "${harness}"; one of ${HARNESSES.join(", ")}`);
  }
  if (!path) throw usageError("import transcripts: --path FILE|DIR is required");
  const { url, token } = config();
  const s = await importTranscripts(new RestClient({ baseUrl: url, token }), harness as Harness, resolve(io.cwd, path), io);
  io.stdout.write(
    `imported ${harness} transcripts from ${path}: ${s.files} files, ${s.sessions} sessions, ${s.exchanges} exchanges, ` +
      `${s.stored} stored, ${s.replayed} already there` +
      `${s.conflicts ? `, ${s.conflicts} stored before with other content (left as they were)` : ""}` +
      `${s.unanswered ? `; ${s.unanswered} requests with no answer passed over` : ""}\n`,
  );
  return 0;
}

/** The filters, page size and reason of a `cairn review` command, checked before anything is asked of memory-core. */
function reviewArguments(
  command: "review list" | "review approve" | "review reject",
  string: (name: string) => string | undefined,
): { filter: ReviewFilter; limit: number; reason?: string } {
  const filter: ReviewFilter = {};
  const source = string("source");
  if (source !== undefined) {
    if (!(REVIEW_SOURCES as readonly string[]).includes(source))
      throw usageError(`${command}: unknown --source "${source}"; one of ${REVIEW_SOURCES.join(", ")}`);
    filter.source = source as ReviewFilter["source"];
  }
  const agent = string("agent");
  if (agent !== undefined) filter.agent = agent;
  const session = string("session");
  if (session !== undefined) filter.session_id = session;
  for (const name of ["since", "until"] as const) {
    const raw = string(name);
    if (raw !== undefined) filter[name] = instant(command, name, raw);
  }
  let limit = 20;
  const rawLimit = string("limit");
  if (rawLimit !== undefined) {
    if (!/^\d+$/.test(rawLimit) || Number(rawLimit) < 1 || Number(rawLimit) > 100)
      throw usageError(`${command}: --limit must be a whole number from 1 to 100, not "${rawLimit}"`);
    limit = Number(rawLimit);
  }
  if (command === "review list") return { filter, limit };
  const reason = string("reason");
  if (reason === undefined || reason.trim() === "")
    throw usageError(`${command}: --reason R is required (it is recorded on every memory reviewed)`);
  return { filter, limit, reason };
}

/** A date (`2026-12-01`, midnight UTC) or a date and time with its zone, as the instant the contract takes. */
function instant(command: string, flag: string, raw: string): string {
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(raw);
  const withZone = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(raw);
  const at = Date.parse(dateOnly ? `${raw}T00:00:00Z` : raw);
  if ((!dateOnly && !withZone) || Number.isNaN(at)) {
    throw usageError(
      `${command}: --${flag} takes a date (2026-12-01) or a date and time with its zone (2026-12-01T09:30:00Z), not "${raw}"`,
    );
  }
  return new Date(at).toISOString();
}
