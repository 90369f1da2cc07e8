import type { OperationInput, OperationOutput } from "@cairn/openapi";
import { taskText } from "../records/memory-brief.js";
import { isOutdated, isSuperseded, type StoredTurn } from "../records/stored-turn.js";
import { clip } from "../text.js";
import type { HybridRetrieval, SearchMode } from "../retrieval/hybrid-retrieval.js";
import type { Confidence } from "../records/types.js";

type Assessment = OperationOutput<"assess_change">;
type Outcome = Assessment["outcomes"][number]["outcome"];
type AssessedChange = Assessment["outcomes"][number]["changes"][number];

/** Hybrid hits looked at for similar changes. */
const CANDIDATES = 20;
/**
 * How near the top of each retriever's own ranking a similar change stands: among the turns whose words hold the
 * most of the intent's and among those nearest to it in meaning. The contract's "at most" is this; the value was
 * chosen on the tuning half of labelled intents over a repository's history (docs/benchmarks.md).
 */
const AGREEMENT = 8;
const CITED = 3;
const REASON_CHARS = 120;
/** Hits looked at when following a commit or a file to what came after it. */
const FOLLOW_UPS = 20;
/** Files of a change that its fix is looked for by: the first few name what it was about. */
const FILES_FOLLOWED = 8;
const DAY_MS = 86_400_000;

/** The order of the groups: the most telling ending first. */
const OUTCOMES: readonly Outcome[] = ["reverted", "fixed", "outdated", "failed_checks", "stood"];

/** A full commit hash (SHA-1, or SHA-256 for repositories that use it), as the git importer keeps it in `refs`. */
const COMMIT = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

interface Ended {
  record: StoredTurn;
  outcome: Outcome;
  by?: string;
  reason?: string;
}

/**
 * How changes like an intended one ended: a premortem from what the workspace remembers. The similar changes
 * are the turns a hybrid search finds at medium confidence or better that both retrievers also rank among their
 * first few on their own (words and meaning agree; a change that shares the intent's area but not its kind
 * rarely passes both), superseded and outdated ones included (they are the point). Each is then followed to what
 * came after it: a memory that `reverts:` its commit, one that `fixes:` it or is tagged `fix` and touches one of
 * its files within the window, its own corrections, its checks. The git importer leaves those refs and tags; an
 * agent's turns are judged by their corrections and checks alone. Nothing similar gives confidence `none` and no
 * groups: no guess.
 */
export async function assessChange(
  retrieval: HybridRetrieval,
  workspace: string,
  input: OperationInput<"assess_change">,
): Promise<Assessment> {
  const { confidence, changes } = await similarChanges(retrieval, workspace, input.intent);
  if (changes.length === 0) return { confidence: "none", similar: 0, outcomes: [] };
  const lookup = lookupIn(retrieval, workspace);
  const ended = await Promise.all(changes.map((record) => endingOf(record, input.within_days, lookup)));
  const outcomes = OUTCOMES.map((outcome) => {
    const group = ended.filter((e) => e.outcome === outcome).sort((a, b) => timeOf(b.record) - timeOf(a.record));
    return { outcome, count: group.length, changes: group.slice(0, CITED).map(cite) };
  }).filter((g) => g.count > 0);
  return { confidence, similar: ended.length, outcomes };
}

/**
 * The changes `assess_change` weighs for an intent, every one of them (the response cites the newest few of each
 * group), and the confidence of the best match; none, with confidence `none`, when nothing is similar enough.
 */
export async function similarChanges(
  retrieval: HybridRetrieval,
  workspace: string,
  intent: string,
): Promise<{ confidence: Confidence; changes: StoredTurn[] }> {
  const search = (mode: SearchMode, limit: number, minConfidence: Confidence, queryEmbedding?: number[]) =>
    retrieval.searchTurns(workspace, { query: intent, queryEmbedding, limit, mode, minConfidence, conditions: [] });
  // The hybrid and the semantic search read the dense side with one embedding of the intent.
  const embedded = retrieval.embedQuery(intent);
  const [candidates, nearest, matching] = await Promise.all([
    embedded.then((vector) => search("hybrid", CANDIDATES, "medium", vector)),
    embedded.then((vector) => search("semantic", AGREEMENT, "none", vector)),
    search("lexical", AGREEMENT, "none"),
  ]);
  const near = new Set(nearest.map((h) => h.turn.id));
  const worded = new Set(matching.map((h) => h.turn.id));
  const hits = candidates.filter((h) => near.has(h.turn.id) && worded.has(h.turn.id));
  if (hits.length === 0) return { confidence: "none", changes: [] };
  const lookup = lookupIn(retrieval, workspace);

  // A revert is the ending of the change it undoes, not a change like the intent: weigh the reverted change.
  const changes = new Map<string, StoredTurn>();
  for (const { turn: record } of hits) {
    const reverted = refsOf(record).filter((r) => r.startsWith("reverts:"));
    if (reverted.length === 0) {
      changes.set(record.id, record);
      continue;
    }
    for (const ref of reverted) {
      if (changes.size >= AGREEMENT) break;
      const hash = ref.slice("reverts:".length);
      const target = (await lookup(hash)).find((h) => commitOf(h.turn) === hash)?.turn;
      if (target) changes.set(target.id, target);
    }
  }
  return { confidence: hits[0]!.confidence, changes: [...changes.values()] };
}

const lookupIn = (retrieval: HybridRetrieval, workspace: string) => (query: string) =>
  retrieval.searchTurns(workspace, { query, limit: FOLLOW_UPS, mode: "lexical", minConfidence: "none", conditions: [] });

async function endingOf(
  record: StoredTurn,
  withinDays: number,
  lookup: (query: string) => Promise<{ turn: StoredTurn }[]>,
): Promise<Ended> {
  const commit = commitOf(record);
  const after = (other: StoredTurn) => {
    const gap = timeOf(other) - timeOf(record);
    return gap > 0 && gap <= withinDays * DAY_MS;
  };
  if (commit) {
    const naming = (await lookup(commit)).map((h) => h.turn).filter((r) => r.id !== record.id);
    const revert = naming.find((r) => refsOf(r).includes(`reverts:${commit}`));
    if (revert) return { record, outcome: "reverted", by: revert.id };
    const fix = naming.find((r) => refsOf(r).includes(`fixes:${commit}`) && after(r));
    if (fix) return { record, outcome: "fixed", by: fix.id };
  }
  const files = filesOf(record).slice(0, FILES_FOLLOWED);
  if (files.length > 0) {
    const touched = new Set(files);
    const fix = (await lookup(files.join(" ")))
      .map((h) => h.turn)
      .find((r) => r.id !== record.id && tagsOf(r).includes("fix") && after(r) && refsOf(r).some((ref) => touched.has(ref)));
    if (fix) return { record, outcome: "fixed", by: fix.id };
  }
  if (isSuperseded(record)) {
    return { record, outcome: "outdated", by: record.supersededBy, reason: text(record.supersededReason) };
  }
  if (isOutdated(record)) {
    const last = record.corrections.filter((c) => c.kind === "outdated").at(-1);
    return { record, outcome: "outdated", reason: text(last?.reason) };
  }
  if (record.checkStatus === "failed") return { record, outcome: "failed_checks" };
  return { record, outcome: "stood" };
}

function cite({ record, by, reason }: Ended): AssessedChange {
  const change: AssessedChange = {
    memory_id: record.id,
    when: new Date(timeOf(record)).toISOString(),
    who: record.author ?? record.agent,
    what: taskText(record),
  };
  const commit = commitOf(record);
  if (commit) change.commit = commit;
  if (by) change.by = by;
  if (reason) change.reason = reason;
  return change;
}

const timeOf = (record: StoredTurn) => record.occurredAt ?? record.recordedAt;
const refsOf = (record: StoredTurn) => record.refs;
const tagsOf = (record: StoredTurn) => record.tags;
const commitOf = (record: StoredTurn) => refsOf(record).find((r) => COMMIT.test(r));

/** The refs that name files: a path with a directory or an extension, not a commit, a link or a `kind:` ref. */
const filesOf = (record: StoredTurn) =>
  refsOf(record).filter((r) => !COMMIT.test(r) && !/^[a-z][a-z0-9+.-]*:/i.test(r) && /[/.]/.test(r) && !/\s/.test(r));

const text = (value: unknown) => {
  if (typeof value !== "string") return undefined;
  const line = value.replace(/\s+/g, " ").trim();
  return clip(line, REASON_CHARS) || undefined;
};
