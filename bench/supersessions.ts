import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import yaml from "js-yaml";
import { loadConfig, silentLogger, startStack } from "@cairn/memory-core";
import { newToken } from "../services/memory-core/src/auth/tokens.js";
import { SUPERSESSION_GROUPS, type SupersessionPair } from "../services/memory-core/test/fixtures/supersession-pairs.js";
import { round } from "./stats.js";

/**
 * `npm run bench -- supersessions [--json]`: how well `add_memory` proposes `possible_supersedes` on the labelled
 * pairs of `supersession-pairs.ts`, each group of SUPERSESSION_GROUPS apart. Each pair gets a workspace holding
 * its earlier decision and every other subject's earlier decision of its group (a team's live decisions); its
 * later decision is then written through the API. A proposal of the pair's earlier decision, for a pair that
 * replaces it, is right; any other proposal is wrong. Each replacing later decision is also written where its
 * earlier decision is missing (the other subjects' only): `alone_wrong` counts what it proposes there, all wrong.
 */
export async function benchSupersessions(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { json: { type: "boolean", default: false } } });
  const dir = await mkdtemp(join(tmpdir(), "cairn-bench-supersede-"));
  const tokens = SUPERSESSION_GROUPS.flatMap(({ name, pairs }) =>
    pairs.flatMap((_, i) =>
      [`${name}-${i}`, `${name}-alone-${i}`].map((workspace) => ({ token: newToken(), workspace, agent: "architect", role: "agent" })),
    ),
  );
  await writeFile(join(dir, "tokens.yaml"), yaml.dump({ tokens }));
  const stack = await startStack({
    config: loadConfig({ CAIRN_DATA_DIR: dir, CAIRN_PORT: "0", CAIRN_TOKENS_FILE: join(dir, "tokens.yaml") }),
    log: silentLogger,
  });
  const write = async (token: string, body: object) => {
    const res = await fetch(new URL("/v1/memories", stack.url), {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (res.status !== 201) throw new Error(`add_memory answered ${res.status}`);
    return (await res.json()) as { id: string; possible_supersedes?: Array<{ id: string }> };
  };
  const measure = async (name: string, pairs: SupersessionPair[]) => {
    let truePositive = 0;
    let falsePositive = 0;
    let missed = 0;
    let aloneWrong = 0;
    const rows: string[] = [];
    for (const [i, pair] of pairs.entries()) {
      const others = [
        ...new Map(pairs.filter((p) => p.earlier.prompt !== pair.earlier.prompt).map((p) => [p.earlier.prompt, p.earlier])).values(),
      ];
      const token = tokens.find((t) => t.workspace === `${name}-${i}`)!.token;
      const own = await write(token, { session_id: `earlier-${i}`, kind: "decision", ...pair.earlier });
      for (const [j, other] of others.entries()) await write(token, { session_id: `other-${j}`, kind: "decision", ...other });
      const later = await write(token, { session_id: `later-${i}`, kind: "decision", ...pair.later });
      const proposed = (later.possible_supersedes ?? []).map((p) => p.id);
      const hit = proposed.includes(own.id);
      if (pair.replaces && hit) truePositive++;
      if (pair.replaces && !hit) missed++;
      falsePositive += proposed.filter((id) => id !== own.id || !pair.replaces).length;
      let alone = "";
      if (pair.replaces) {
        const aloneToken = tokens.find((t) => t.workspace === `${name}-alone-${i}`)!.token;
        for (const [j, other] of others.entries()) await write(aloneToken, { session_id: `other-${j}`, kind: "decision", ...other });
        const wrong =
          (await write(aloneToken, { session_id: `later-${i}`, kind: "decision", ...pair.later })).possible_supersedes?.length ?? 0;
        aloneWrong += wrong;
        alone = `  alone: +${wrong}`;
      }
      rows.push(
        `${pair.replaces ? "replaces" : "stands  "} ${hit ? "proposed" : "-       "} +${proposed.length - (hit ? 1 : 0)} other  ${pair.later.prompt.slice(0, 60)}${alone}`,
      );
    }
    const proposals = truePositive + falsePositive;
    return {
      rows,
      report: {
        pairs: pairs.length,
        replacing: pairs.filter((p) => p.replaces).length,
        precision: proposals === 0 ? null : round(truePositive / proposals, 3),
        recall: round(truePositive / (truePositive + missed), 3),
        true_positive: truePositive,
        false_positive: falsePositive,
        alone_wrong: aloneWrong,
      },
    };
  };
  try {
    const report: Record<string, unknown> = {};
    for (const { name, pairs } of SUPERSESSION_GROUPS) {
      const { rows, report: figures } = await measure(name, pairs);
      report[name] = figures;
      if (!values.json) process.stdout.write(`${name}:\n${rows.join("\n")}\n`);
    }
    process.stdout.write(`${JSON.stringify(report)}\n`);
  } finally {
    await stack.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
