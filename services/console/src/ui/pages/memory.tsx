import { useCallback, useEffect, useState } from "preact/hooks";
import type { Call, Caller, Memory, Schemas } from "../api.js";
import { when } from "../format.js";
import { memoryHref, sessionHref } from "../routes.js";
import { Empty, ErrorNote, Loading } from "../widgets.js";

type Action = "outdated" | "supersede" | "forget";
const ACTION_LABELS: Record<Action, string> = { outdated: "Mark outdated", supersede: "Supersede", forget: "Forget" };

/** One memory whole: its fields, checks, corrections and supersessions, its audit trail for admins, and the corrections a person may make. */
export function MemoryPage({ call, caller, id }: { call: Call; caller: Caller; id: string }) {
  const [memory, setMemory] = useState<Memory | undefined>(undefined);
  const [audit, setAudit] = useState<Schemas["AuditEntry"][] | undefined>(undefined);
  const [forgotten, setForgotten] = useState<Schemas["Tombstone"] | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);

  /** Never rejects: a memory that cannot be read is shown as the error. */
  const load = useCallback(async () => {
    setError(undefined);
    try {
      setMemory(await call("get_memory", { memory_id: id }));
    } catch (caught) {
      setError(caught);
    }
    if (caller.role === "admin") {
      try {
        setAudit((await call("get_audit_log", { memory_id: id, limit: 100 })).entries);
      } catch {
        setAudit(undefined);
      }
    }
  }, [call, id, caller.role]);

  useEffect(() => {
    setMemory(undefined);
    setForgotten(undefined);
    void load();
  }, [load]);

  if (forgotten) {
    return (
      <section aria-labelledby="memory-title">
        <h1 id="memory-title">Forgotten</h1>
        <p role="status">
          {forgotten.id} was forgotten by {forgotten.forgotten_by} ({forgotten.reason}).
        </p>
      </section>
    );
  }
  if (!memory) return error ? <ErrorNote error={error} /> : <Loading />;
  return (
    <section aria-labelledby="memory-title">
      <h1 id="memory-title">{memory.kind.charAt(0).toUpperCase() + memory.kind.slice(1)}</h1>
      <dl class="fields">
        <dt>Id</dt>
        <dd>
          <code>{memory.id}</code>
        </dd>
        <dt>Agent</dt>
        <dd>{memory.agent}</dd>
        <dt>Session</dt>
        <dd>
          <a href={sessionHref(memory.session_id)}>{memory.session_id}</a>
        </dd>
        <dt>Recorded</dt>
        <dd>{when(memory.recorded_at)}</dd>
        {memory.occurred_at ? (
          <>
            <dt>Happened</dt>
            <dd>{when(memory.occurred_at)}</dd>
          </>
        ) : null}
        <dt>Source</dt>
        <dd>
          {memory.source}
          {memory.trusted ? "" : " (untrusted)"}
          {memory.model ? ` · ${memory.model}` : ""}
        </dd>
        {memory.review ? (
          <>
            <dt>Review</dt>
            <dd>
              {memory.review.state}
              {memory.review.by ? ` by ${memory.review.by}` : ""}
              {memory.review.at ? `, ${when(memory.review.at)}` : ""}
              {memory.review.reason ? ` (${memory.review.reason})` : ""}
            </dd>
          </>
        ) : null}
        <dt>Valid</dt>
        <dd>
          from {when(memory.valid_from)}
          {memory.valid_until ? ` until ${when(memory.valid_until)}` : ""}
          {memory.outdated ? " · outdated" : ""}
        </dd>
        {memory.tags.length > 0 ? (
          <>
            <dt>Tags</dt>
            <dd>{memory.tags.join(", ")}</dd>
          </>
        ) : null}
        {memory.refs.length > 0 ? (
          <>
            <dt>Refs</dt>
            <dd>
              <ul class="plain">
                {memory.refs.map((ref) => (
                  <li key={ref}>
                    <code>{ref}</code>
                  </li>
                ))}
              </ul>
            </dd>
          </>
        ) : null}
        {memory.code ? (
          <>
            <dt>Code</dt>
            <dd>
              {[
                memory.code.repository,
                memory.code.branch ? `branch ${memory.code.branch}` : undefined,
                memory.code.commit ? `at commit ${memory.code.commit}` : undefined,
              ]
                .filter(Boolean)
                .join(" · ")}
              <ul class="plain">
                {memory.code.paths.map((cited) => (
                  <li key={cited.path}>
                    <code>{cited.path}</code>
                    {cited.lines ? <span class="muted"> lines {cited.lines}</span> : null}
                    {cited.symbol ? (
                      <>
                        {" "}
                        <code>{cited.symbol}</code>
                      </>
                    ) : null}
                  </li>
                ))}
              </ul>
            </dd>
          </>
        ) : null}
      </dl>
      <h2>Prompt</h2>
      <p class="text">{memory.prompt}</p>
      <h2>Thought</h2>
      <p class="text">{memory.thought}</p>
      <h2>Response</h2>
      <p class="text">{memory.response}</p>

      <h2>Checks ({memory.check_status})</h2>
      {memory.checks.length === 0 ? (
        <Empty>No checks recorded.</Empty>
      ) : (
        <ul class="plain">
          {memory.checks.map((check, i) => (
            <li key={i}>
              <span class={`status status-${check.status}`}>{check.status}</span> {check.name}
              {check.command ? (
                <>
                  {" "}
                  <code>{check.command}</code>
                </>
              ) : null}
              {check.commit ? <span class="muted"> at commit {check.commit}</span> : null}
            </li>
          ))}
        </ul>
      )}
      {memory.check_note ? <p class="muted">{memory.check_note}</p> : null}

      <h2>Supersessions</h2>
      {memory.superseded_by || (memory.supersedes ?? []).length > 0 ? (
        <ul class="plain">
          {memory.superseded_by ? (
            <li>
              Superseded by <a href={memoryHref(memory.superseded_by)}>{memory.superseded_by}</a>
              {memory.superseded_reason ? ` (${memory.superseded_reason})` : ""}
            </li>
          ) : null}
          {(memory.supersedes ?? []).map((older) => (
            <li key={older}>
              Supersedes <a href={memoryHref(older)}>{older}</a>
            </li>
          ))}
        </ul>
      ) : (
        <Empty>Neither supersedes nor is superseded.</Empty>
      )}

      <h2>Corrections</h2>
      {memory.corrections.length === 0 ? (
        <Empty>No corrections.</Empty>
      ) : (
        <ol class="plain">
          {memory.corrections.map((c, i) => (
            <li key={i}>
              {when(c.at)}: {c.by} marked it {c.kind} ({c.reason})
              {c.replaced_by ? (
                <>
                  {" "}
                  — replaced by <a href={memoryHref(c.replaced_by)}>{c.replaced_by}</a>
                </>
              ) : null}
              {c.commit ? <span class="muted"> at commit {c.commit}</span> : null}
            </li>
          ))}
        </ol>
      )}

      {audit ? (
        <>
          <h2>Audit entries</h2>
          {audit.length === 0 ? (
            <Empty>No audit entries.</Empty>
          ) : (
            <ol class="plain audit">
              {audit.map((entry, i) => (
                <li key={i}>
                  {when(entry.at)}: {entry.action}
                  {entry.replaces ? ` of ${entry.replaces}` : ""} by {entry.actor}
                  {entry.reason ? ` (${entry.reason})` : ""}
                </li>
              ))}
            </ol>
          )}
        </>
      ) : null}

      <Corrections
        call={call}
        memory={memory}
        onDone={(outcome) => {
          if (outcome.kind === "forgotten") setForgotten(outcome.tombstone);
          else {
            setMemory(outcome.memory);
            void load();
          }
        }}
      />
    </section>
  );
}

type Outcome = { kind: "corrected"; memory: Memory } | { kind: "forgotten"; tombstone: Schemas["Tombstone"] };

/** Mark outdated, Supersede and Forget: each asks for a reason and waits for Confirm, then calls the same operation as the API. */
function Corrections({ call, memory, onDone }: { call: Call; memory: Memory; onDone: (outcome: Outcome) => void }) {
  const [action, setAction] = useState<Action | undefined>(undefined);
  const [reason, setReason] = useState("");
  const [by, setBy] = useState("");
  const [commit, setCommit] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);

  const confirm = async () => {
    if (!action || !reason.trim()) return;
    setBusy(true);
    setError(undefined);
    try {
      if (action === "forget") {
        onDone({ kind: "forgotten", tombstone: await call("forget_memory", { memory_id: memory.id, reason: reason.trim() }) });
      } else if (action === "outdated") {
        const changedBy = commit.trim();
        onDone({
          kind: "corrected",
          memory: await call("mark_outdated", { memory_id: memory.id, reason: reason.trim(), ...(changedBy ? { commit: changedBy } : {}) }),
        });
      } else {
        const replacement = by.trim();
        onDone({
          kind: "corrected",
          memory: await call("supersede_memory", {
            memory_id: memory.id,
            reason: reason.trim(),
            ...(replacement ? { by: replacement } : {}),
          }),
        });
      }
      setAction(undefined);
      setReason("");
      setBy("");
      setCommit("");
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="actions">
      <h2>Correct</h2>
      <div class="buttons">
        {(Object.keys(ACTION_LABELS) as Action[]).map((a) => (
          <button key={a} type="button" aria-pressed={action === a} onClick={() => setAction(a)} class={a === "forget" ? "danger" : ""}>
            {ACTION_LABELS[a]}
          </button>
        ))}
      </div>
      {action ? (
        <form
          class="confirm"
          aria-label={ACTION_LABELS[action]}
          onSubmit={(event) => {
            event.preventDefault();
            void confirm();
          }}
        >
          {action === "forget" ? <p>Forgetting removes the memory's text for good; who forgot it, when and why are kept.</p> : null}
          {action === "outdated" ? (
            <label>
              Commit that changed things (optional)
              <input
                name="commit"
                value={commit}
                onInput={(e) => setCommit(e.currentTarget.value)}
                autocomplete="off"
                spellcheck={false}
                maxLength={64}
                placeholder="a1b2c3d"
              />
            </label>
          ) : null}
          {action === "supersede" ? (
            <label>
              Replaced by (memory id, optional)
              <input name="by" value={by} onInput={(e) => setBy(e.currentTarget.value)} autocomplete="off" />
            </label>
          ) : null}
          <label>
            Reason
            <textarea name="reason" value={reason} onInput={(e) => setReason(e.currentTarget.value)} required rows={2} />
          </label>
          <div class="buttons">
            <button type="submit" disabled={busy || !reason.trim()}>
              Confirm
            </button>
            <button type="button" onClick={() => setAction(undefined)}>
              Cancel
            </button>
          </div>
          <ErrorNote error={error} />
        </form>
      ) : null}
    </div>
  );
}
