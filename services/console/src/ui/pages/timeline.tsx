import { useCallback, useEffect, useState } from "preact/hooks";
import type { Call, Caller, Memory, MemoryBrief } from "../api.js";
import { timelineHref } from "../routes.js";
import { Empty, ErrorNote, Loading, MoreButton, TextField } from "../widgets.js";
import { usePages } from "../pages-hook.js";
import { MemoryRow } from "./brief-list.js";

const PAGE = 20;

/** An agent's newest turns (one session's, if given), newest first, a page at a time. */
export function Timeline({ call, caller, agent }: { call: Call; caller: Caller; agent: string | undefined }) {
  const shown = agent ?? caller.agent;
  const [draft, setDraft] = useState(shown);
  const [session, setSession] = useState("");
  /** The session filter in force: the one typed applies when the form is sent. */
  const [sessionShown, setSessionShown] = useState("");
  const pages = usePages<MemoryBrief | Memory>(
    useCallback(
      async (before: string | null) => {
        const page = await call("query_recent_turns", {
          agent: shown,
          limit: PAGE,
          ...(sessionShown ? { session_id: sessionShown } : {}),
          ...(before ? { before } : {}),
        });
        return { items: page.turns, next: page.next_cursor };
      },
      [call, shown, sessionShown],
    ),
  );

  useEffect(() => setDraft(shown), [shown]);

  return (
    <section aria-labelledby="timeline-title">
      <h1 id="timeline-title">Timeline</h1>
      <form
        class="filters"
        onSubmit={(event) => {
          event.preventDefault();
          // A changed filter starts the listing over by itself; an unchanged one is read again.
          const agentChanged = draft.trim() !== "" && draft.trim() !== shown;
          if (!agentChanged && session.trim() === sessionShown) pages.reload();
          setSessionShown(session.trim());
          if (agentChanged) location.hash = timelineHref(draft.trim());
        }}
      >
        <TextField label="Agent" name="agent" value={draft} set={setDraft} />
        <TextField label="Session" name="session" value={session} set={setSession} />
        <button type="submit">Show</button>
      </form>
      <ErrorNote error={pages.error} />
      {pages.items.length > 0 ? (
        <ol class="rows">
          {pages.items.map((turn) => (
            <MemoryRow key={turn.id} memory={turn} opens />
          ))}
        </ol>
      ) : pages.loading || pages.error ? null : (
        <Empty>No turns from {shown} yet.</Empty>
      )}
      {pages.loading ? <Loading /> : null}
      <MoreButton pages={pages}>Older turns</MoreButton>
    </section>
  );
}
