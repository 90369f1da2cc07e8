import { useCallback, useState } from "preact/hooks";
import type { Call, Memory, MemoryBrief, Schemas } from "../api.js";
import { when } from "../format.js";
import { Empty, ErrorNote, Loading, MoreButton } from "../widgets.js";
import { usePages } from "../pages-hook.js";
import { MemoryRow } from "./brief-list.js";

/** A session: its summary, then its turns oldest first, a page at a time. */
export function SessionPage({ call, id }: { call: Call; id: string }) {
  const [summary, setSummary] = useState<Schemas["Summary"] | null | undefined>(undefined);
  const pages = usePages<MemoryBrief | Memory>(
    useCallback(
      async (after: string | null) => {
        const page = await call("get_session", { session_id: id, limit: 50, detail: "brief", ...(after ? { after } : {}) });
        setSummary(page.summary);
        return { items: page.turns, next: page.next_cursor };
      },
      [call, id],
    ),
  );

  return (
    <section aria-labelledby="session-title">
      <h1 id="session-title">Session {id}</h1>
      <ErrorNote error={pages.error} />
      {summary ? (
        <article class="summary" aria-label="Summary">
          <h2>{summary.title}</h2>
          <p class="muted">
            {summary.agents.join(", ")} · {summary.turn_count} turns · {when(summary.first_turn_at)} to {when(summary.last_turn_at)} ·{" "}
            {summary.method}
          </p>
          <p class="text">{summary.summary}</p>
          <SummaryList
            title="Decisions"
            items={summary.decisions.map((d) => (d.evidence ? `${d.decision} (${d.evidence})` : d.decision))}
          />
          <SummaryList title="Dropped" items={summary.dropped.map((d) => (d.reason ? `${d.approach} (${d.reason})` : d.approach))} />
          <SummaryList title="Open questions" items={summary.open_questions} />
          <SummaryList title="Next steps" items={summary.next_steps} />
        </article>
      ) : summary === null ? (
        <Empty>No summary yet.</Empty>
      ) : null}
      <h2>Turns</h2>
      {pages.items.length > 0 ? (
        <ol class="rows">
          {pages.items.map((turn) => (
            <MemoryRow key={turn.id} memory={turn} opens />
          ))}
        </ol>
      ) : pages.loading || pages.error ? null : (
        <Empty>No turns.</Empty>
      )}
      {pages.loading ? <Loading /> : null}
      <MoreButton pages={pages}>Later turns</MoreButton>
    </section>
  );
}

function SummaryList({ title, items }: { title: string; items: string[] }) {
  if (items.length === 0) return null;
  return (
    <>
      <h3>{title}</h3>
      <ul>
        {items.map((item, i) => (
          <li key={i}>{item}</li>
        ))}
      </ul>
    </>
  );
}
