import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { backup } from "./commands/backup.js";
import { reembed } from "./commands/reembed.js";
import { checkFile, restore } from "./commands/restore.js";
import { repair, verify } from "./commands/verify.js";
import { loadCliConfig } from "./config.js";
import { CliError, usageError, type Io } from "./io.js";
import { resolveTargets } from "./tokens.js";

export type { Io } from "./io.js";

const USAGE = `usage: cairn <command> [--url URL] [--token TOKEN | --tokens-file FILE]
  backup  --out FILE            every record of each workspace into an NDJSON file with a manifest
  restore --in FILE [--workspace NAME]
                                store a backup's records back; what is there already is skipped
  verify  [--json]              check each workspace's store; exit 1 when a problem is found
  repair  [--apply] [--json]    mend what verify finds in the logs (a dry run without --apply);
                                with --apply, exit 1 when a workspace is still not healthy after
  reembed [--batch N]           re-embed each workspace after an embedding-model change (resumable)
--url defaults to http://127.0.0.1:8790; the admin token comes from --token, CAIRN_ADMIN_TOKEN, or
--tokens-file (memory-core's tokens file: every workspace it holds an admin token for).`;

const COMMON = {
  url: { type: "string" },
  token: { type: "string" },
  "tokens-file": { type: "string" },
  help: { type: "boolean", default: false },
} as const;

const COMMANDS = {
  backup: { ...COMMON, out: { type: "string" } },
  restore: { ...COMMON, in: { type: "string" }, workspace: { type: "string" } },
  verify: { ...COMMON, json: { type: "boolean", default: false } },
  repair: { ...COMMON, apply: { type: "boolean", default: false }, json: { type: "boolean", default: false } },
  reembed: { ...COMMON, batch: { type: "string" } },
} as const;

type Command = keyof typeof COMMANDS;
const isCommand = (name: string | undefined): name is Command => name !== undefined && Object.hasOwn(COMMANDS, name);

/** The CLI: returns the exit code (0 done, 1 failed or problems found, 2 bad arguments). */
export async function main(argv: string[], io: Io): Promise<number> {
  const [command, ...rest] = argv;
  if (command === "help" || command === "--help" || command === "-h") {
    io.stdout.write(`${USAGE}\n`);
    return 0;
  }
  try {
    if (command === undefined) throw usageError(`no command given; one of ${Object.keys(COMMANDS).join(", ")} (cairn --help)`);
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
    io.stderr.write(`cairn: ${(error as Error)?.message ?? String(error)}\n`);
    return 1;
  }
}

async function run(command: Command, values: Record<string, string | boolean | undefined>, io: Io): Promise<number> {
  const string = (name: string) => (typeof values[name] === "string" ? (values[name] as string) : undefined);
  // Arguments are checked before anything is asked of memory-core.
  const out = string("out");
  const input = string("in");
  if (command === "backup" && !out) throw usageError("backup: --out FILE is required");
  if (command === "restore" && !input) throw usageError("restore: --in FILE is required");
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
      const parts = (["tombstones", "turns", "summaries"] as const).map((c) => {
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
        `backed up ${w.workspace}: ${w.counts.turns} turns, ${w.counts.summaries} summaries, ${w.counts.tombstones} tombstones\n`,
      );
    }
    io.stdout.write(`wrote ${summary.records} records (${summary.bytes} bytes) to ${out}\n`);
    return 0;
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
