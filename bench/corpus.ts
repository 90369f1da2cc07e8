import { prng } from "./stats.js";

const SUBSYSTEMS = [
  "auth service",
  "billing worker",
  "search indexer",
  "CI pipeline",
  "payment gateway",
  "notification queue",
  "export job",
  "cache layer",
  "API gateway",
  "schema migrations",
  "feature flags",
  "rate limiter",
];
const ACTIONS = [
  "fix a flaky test in",
  "cut the p95 latency of",
  "refactor",
  "add retries to",
  "upgrade the client of",
  "profile",
  "document",
  "harden the error handling of",
];
const FINDINGS = [
  "a race between two writers",
  "an N+1 query on every request",
  "a missing index on the created_at column",
  "an unbounded retry loop",
  "a timeout that was too short for cold starts",
  "a memory leak in the connection pool",
  "a stale cache entry after deploys",
  "a lock held across a network call",
];
const CHOICES = [
  "a mutex around the refresh",
  "a batched query",
  "a partial index",
  "exponential backoff with jitter",
  "a longer timeout for the first call",
  "closing idle connections",
  "versioned cache keys",
  "moving the call outside the lock",
];
const NEXT = [
  "add a regression test",
  "measure again on staging",
  "open a ticket for the follow-up",
  "ask the reviewer about the trade-off",
  "remove the feature flag next week",
  "write the runbook entry",
];

export interface CorpusTurn {
  agent: string;
  session_id: string;
  prompt: string;
  thought: string;
  response: string;
}

/** Deterministic, varied turns shaped like an agent team's work log. */
export function corpus(n: number, options: { agents: number; sessions: number; seed?: number }): CorpusTurn[] {
  const random = prng(options.seed ?? 42);
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
  return Array.from({ length: n }, (_, i) => {
    const subsystem = pick(SUBSYSTEMS);
    const finding = pick(FINDINGS);
    const choice = pick(CHOICES);
    const ticket = `${subsystem.split(" ")[0]!.toUpperCase()}-${100 + Math.floor(random() * 900)}`;
    const ms = 5 + Math.floor(random() * 400);
    return {
      agent: `agent-${i % options.agents}`,
      session_id: `session-${Math.floor(random() * options.sessions)}`,
      prompt: `${pick(ACTIONS)} the ${subsystem} (ticket ${ticket}); keep the public API unchanged and the build green.`,
      thought: `Found ${finding}. Tried a quick patch first and dropped it because it only hid the symptom. Chose ${choice}; measured p95 ${ms} ms before and ${Math.max(1, Math.floor(ms / 3))} ms after on the benchmark. Doubt: the staging data set is smaller than production.`,
      response: `Merged the change for ${ticket} in the ${subsystem}. Next: ${pick(NEXT)}.`,
    };
  });
}
