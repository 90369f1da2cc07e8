import { useCallback, useState } from "preact/hooks";
import type { Call, Memory, MemoryBrief, Schemas } from "../api.js";
import { isBrief } from "../api.js";
import { ChoiceField, Empty, ErrorNote, Loading, MoreButton, TextField } from "../widgets.js";
import { usePages } from "../pages-hook.js";
import { MemoryRow } from "./brief-list.js";

type Source = "agent" | "human" | "import";

/** The queue's filters as sent: what `query_review_queue` and `review_matching` both take. */
interface Filter {
  source?: Source;
  agent?: string;
  session_id?: string;
  since?: string;
  until?: string;
}

/** A `datetime-local` value (the reader's own time) as the instant the API takes; empty stays unset. */
const instant = (local: string): string | undefined => {
  if (!local) return undefined;
  const at = new Date(local);
  return Number.isNaN(at.getTime()) ? undefined : at.toISOString();
};

/**
 * For admins: imported memories waiting for a person's verdict, oldest first, with how many wait and filters;
 * each row shows what will be trusted (its prompt, thought and response) and is approved or rejected with a
 * reason, or every memory the filters select is, with one reason, after a confirmation that states the count.
 */
export function ReviewPage({ call }: { call: Call }) {
  const [filter, setFilter] = useState<Filter>({});
  const [counts, setCounts] = useState<{ total: number; pending: number } | undefined>(undefined);
  /** What the last "all matching" did: kept here, since its form goes once nothing matches. */
  const [outcome, setOutcome] = useState<string | undefined>(undefined);
  const pages = usePages<MemoryBrief | Memory>(
    useCallback(
      async (after: string | null) => {
        const page = await call("query_review_queue", { limit: 20, detail: "summary", ...filter, ...(after ? { after } : {}) });
        setCounts({ total: page.total, pending: page.pending });
        return { items: page.memories, next: page.next_cursor };
      },
      [call, filter],
    ),
  );
  const filtered = Object.keys(filter).length > 0;

  return (
    <section aria-labelledby="review-title">
      <h1 id="review-title">Review</h1>
      <p class="muted">Imported memories are untrusted until a person reads them: approve what holds, reject what does not.</p>
      <ReviewFilters onApply={setFilter} />
      {counts ? (
        <p class="count" role="status" aria-label="Waiting for review">
          {filtered ? `${counts.total} of ${counts.pending} waiting match these filters` : `${counts.pending} waiting for review`}
        </p>
      ) : null}
      {counts && counts.total > 0 ? (
        <ReviewAll
          call={call}
          filter={filter}
          count={counts.total}
          onStart={() => setOutcome(undefined)}
          onDone={(said) => {
            if (said) setOutcome(said);
            pages.reload();
          }}
        />
      ) : null}
      {outcome ? (
        <p class="outcome" role="status">
          {outcome}
        </p>
      ) : null}
      <ErrorNote error={pages.error} />
      {pages.loading ? <Loading /> : null}
      {!pages.loading && !pages.error && pages.items.length === 0 ? (
        <Empty>{filtered ? "Nothing waiting matches these filters." : "Nothing waits for review."}</Empty>
      ) : null}
      {pages.items.length > 0 ? (
        <ol class="rows">
          {pages.items.map((memory) => (
            <ReviewRow
              key={memory.id}
              call={call}
              memory={memory}
              onDone={() => {
                pages.drop((m) => m.id !== memory.id);
                setCounts((c) => (c ? { total: c.total - 1, pending: c.pending - 1 } : c));
              }}
            />
          ))}
        </ol>
      ) : null}
      <MoreButton pages={pages}>More</MoreButton>
    </section>
  );
}

function ReviewFilters({ onApply }: { onApply: (filter: Filter) => void }) {
  const [source, setSource] = useState("");
  const [agent, setAgent] = useState("");
  const [session, setSession] = useState("");
  const [since, setSince] = useState("");
  const [until, setUntil] = useState("");
  return (
    <form
      class="filters"
      aria-label="Review filters"
      onSubmit={(event) => {
        event.preventDefault();
        const from = instant(since);
        const to = instant(until);
        onApply({
          ...(source ? { source: source as Source } : {}),
          ...(agent.trim() ? { agent: agent.trim() } : {}),
          ...(session.trim() ? { session_id: session.trim() } : {}),
          ...(from ? { since: from } : {}),
          ...(to ? { until: to } : {}),
        });
      }}
    >
      <ChoiceField label="Source" name="source" value={source} set={setSource} choices={["import", "agent", "human"]} />
      <TextField label="Agent" name="agent" value={agent} set={setAgent} />
      <TextField label="Session" name="session" value={session} set={setSession} />
      <label>
        Stored since
        <input type="datetime-local" name="since" value={since} onInput={(e) => setSince(e.currentTarget.value)} />
      </label>
      <label>
        Stored before
        <input type="datetime-local" name="until" value={until} onInput={(e) => setUntil(e.currentTarget.value)} />
      </label>
      <button type="submit">Filter</button>
    </form>
  );
}

type Phase = { step: "idle" } | { step: "confirm"; decision: "approve" | "reject" } | { step: "running"; done: number; of: number };

/**
 * Approve or reject every memory the filters select, with one reason: the confirmation states how many, a dry
 * run checks that as many match still, then `review_matching` is called until none is left (memory-core reviews
 * a bounded share per call).
 */
function ReviewAll({
  call,
  filter,
  count,
  onStart,
  onDone,
}: {
  call: Call;
  filter: Filter;
  count: number;
  onStart: () => void;
  /** After a run, with what it did when it did anything. */
  onDone: (outcome: string | undefined) => void;
}) {
  const [reason, setReason] = useState("");
  const [phase, setPhase] = useState<Phase>({ step: "idle" });
  const [error, setError] = useState<unknown>(undefined);

  const run = async (decision: "approve" | "reject") => {
    setError(undefined);
    let done = 0;
    setPhase({ step: "running", done, of: count });
    try {
      // The count confirmed is the count reviewed: when more or fewer match now, nothing is done and the page reads them again.
      const now = await call("review_matching", { ...filter, decision, reason: reason.trim(), dry_run: true });
      if (now.matched !== count) {
        setPhase({ step: "idle" });
        setError(`${now.matched} match these filters now, not ${count}: nothing was reviewed. Read them again, then confirm.`);
        onDone(undefined);
        return;
      }
      let answer: Schemas["ReviewMatchingResult"];
      do {
        answer = await call("review_matching", { ...filter, decision, reason: reason.trim() });
        done += answer.reviewed;
        setPhase({ step: "running", done, of: Math.max(count, done + answer.remaining) });
      } while (answer.remaining > 0 && answer.reviewed > 0);
      setPhase({ step: "idle" });
      setReason("");
      onDone(
        `${decision === "approve" ? "Approved" : "Rejected"} ${done}${answer.remaining > 0 ? `; ${answer.remaining} still match` : ""}.`,
      );
    } catch (caught) {
      setPhase({ step: "idle" });
      setError(caught);
      if (done > 0) onDone(`${decision === "approve" ? "Approved" : "Rejected"} ${done} before the error.`);
    }
  };

  const noun = (n: number) => `${n} ${n === 1 ? "memory" : "memories"}`;
  return (
    <form
      class="review review-all"
      aria-label="Review all matching"
      onSubmit={(event) => {
        event.preventDefault();
      }}
    >
      <label>
        Reason for all matching
        <input name="reason-all" value={reason} onInput={(e) => setReason(e.currentTarget.value)} autocomplete="off" />
      </label>
      {phase.step === "confirm" ? (
        <div class="confirm" role="group" aria-label="Confirm">
          <p>
            {phase.decision === "approve" ? "Approve" : "Reject"} {noun(count)}
            {Object.keys(filter).length > 0 ? " matching these filters" : " waiting for review"}, each with the reason “{reason.trim()}”?
          </p>
          <div class="buttons">
            <button type="button" class={phase.decision === "reject" ? "danger" : ""} onClick={() => void run(phase.decision)}>
              Confirm
            </button>
            <button type="button" onClick={() => setPhase({ step: "idle" })}>
              Cancel
            </button>
          </div>
        </div>
      ) : (
        <div class="buttons">
          <button
            type="button"
            disabled={phase.step === "running" || !reason.trim()}
            onClick={() => {
              onStart();
              setPhase({ step: "confirm", decision: "approve" });
            }}
          >
            Approve all {count}
          </button>
          <button
            type="button"
            class="danger"
            disabled={phase.step === "running" || !reason.trim()}
            onClick={() => {
              onStart();
              setPhase({ step: "confirm", decision: "reject" });
            }}
          >
            Reject all {count}
          </button>
        </div>
      )}
      {phase.step === "running" ? (
        <p role="status">
          Reviewed {phase.done} of {phase.of}…
        </p>
      ) : null}
      <ErrorNote error={error} />
    </form>
  );
}

function ReviewRow({ call, memory, onDone }: { call: Call; memory: MemoryBrief | Memory; onDone: () => void }) {
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const decide = async (decision: "approve" | "reject") => {
    setBusy(true);
    setError(undefined);
    try {
      await call("review_memory", { memory_id: memory.id, decision, reason: reason.trim() });
      onDone();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  const extra = (
    <>
      {isBrief(memory) ? null : <TrustedContent memory={memory} />}
      <form
        class="review"
        aria-label={`Review ${memory.id}`}
        onSubmit={(event) => {
          event.preventDefault();
        }}
      >
        <label>
          Reason
          <input name="reason" value={reason} onInput={(e) => setReason(e.currentTarget.value)} autocomplete="off" />
        </label>
        <div class="buttons">
          <button type="button" disabled={busy || !reason.trim()} onClick={() => void decide("approve")}>
            Approve
          </button>
          <button type="button" class="danger" disabled={busy || !reason.trim()} onClick={() => void decide("reject")}>
            Reject
          </button>
        </div>
        <ErrorNote error={error} />
      </form>
    </>
  );
  return <MemoryRow memory={memory} after={extra} hideText={!isBrief(memory)} />;
}

/** What approving a memory trusts: its prompt, thought and response (long ones cut), the code it cites and its checks. */
function TrustedContent({ memory }: { memory: Memory }) {
  const fields: Array<[string, string]> = [
    ["Prompt", memory.prompt],
    ["Thought", memory.thought],
    ["Response", memory.response],
  ];
  return (
    <dl class="trusted" aria-label={`Content of ${memory.id}`}>
      {fields.map(([name, text]) => (
        <div key={name}>
          <dt>{name}</dt>
          <dd>{text}</dd>
        </div>
      ))}
      {memory.code && memory.code.paths.length > 0 ? (
        <div>
          <dt>Code</dt>
          <dd>
            {memory.code.commit ? `at ${memory.code.commit.slice(0, 12)}: ` : ""}
            {memory.code.paths.map((p) => p.path).join(", ")}
          </dd>
        </div>
      ) : null}
      {memory.checks.length > 0 ? (
        <div>
          <dt>Checks</dt>
          <dd>{memory.checks.map((c) => `${c.name} ${c.status}`).join(", ")}</dd>
        </div>
      ) : null}
      {memory.truncated ? <p class="muted">Long fields are cut here; open the memory to read them whole.</p> : null}
    </dl>
  );
}
