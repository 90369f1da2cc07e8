import { useEffect, useState } from "preact/hooks";
import type { Call, Caller, Memory, MemoryBrief } from "../api.js";
import { timelineHref } from "../routes.js";
import { Empty, ErrorNote, Loading } from "../widgets.js";
import { MemoryRow } from "./brief-list.js";

const PAGE = 20;

/** An agent's newest turns (one session's, if given), newest first, a page at a time. */
export function Timeline({ call, caller, agent }: { call: Call; caller: Caller; agent: string | undefined }) {
  const shown = agent ?? caller.agent;
  const [draft, setDraft] = useState(shown);
  const [session, setSession] = useState("");
  const [turns, setTurns] = useState<Array<MemoryBrief | Memory>>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>(undefined);

  const load = async (before: string | null) => {
    setLoading(true);
    setError(undefined);
    try {
      const page = await call("query_recent_turns", {
        agent: shown,
        limit: PAGE,
        ...(session.trim() ? { session_id: session.trim() } : {}),
        ...(before ? { before } : {}),
      });
      setTurns((previous) => (before ? [...previous, ...page.turns] : page.turns));
      setCursor(page.next_cursor);
    } catch (caught) {
      setError(caught);
    } finally {
      setLoading(false);
    }
  };

  useEffect(() => {
    setDraft(shown);
    void load(null);
  }, [shown]);

  return (
    <section aria-labelledby="timeline-title">
      <h1 id="timeline-title">Timeline</h1>
      <form
        class="filters"
        onSubmit={(event) => {
          event.preventDefault();
          if (draft.trim() && draft.trim() !== shown) location.hash = timelineHref(draft.trim());
          else void load(null);
        }}
      >
        <label>
          Agent
          <input name="agent" value={draft} onInput={(e) => setDraft(e.currentTarget.value)} autocomplete="off" />
        </label>
        <label>
          Session
          <input name="session" value={session} onInput={(e) => setSession(e.currentTarget.value)} autocomplete="off" />
        </label>
        <button type="submit">Show</button>
      </form>
      <ErrorNote error={error} />
      {turns.length > 0 ? (
        <ol class="rows">
          {turns.map((turn) => (
            <MemoryRow key={turn.id} memory={turn} />
          ))}
        </ol>
      ) : loading || error ? null : (
        <Empty>No turns from {shown} yet.</Empty>
      )}
      {loading ? <Loading /> : null}
      {cursor && !loading ? (
        <button type="button" onClick={() => void load(cursor)}>
          Older turns
        </button>
      ) : null}
    </section>
  );
}
