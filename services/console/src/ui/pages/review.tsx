import { useEffect, useState } from "preact/hooks";
import type { Call, MemoryBrief } from "../api.js";
import { Empty, ErrorNote, Loading } from "../widgets.js";
import { MemoryRow } from "./brief-list.js";

/** For admins: imported memories waiting for a person's verdict, oldest first; each approved or rejected with a reason. */
export function ReviewPage({ call }: { call: Call }) {
  const [waiting, setWaiting] = useState<MemoryBrief[] | undefined>(undefined);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(undefined);

  const load = async (after: string | null) => {
    setError(undefined);
    try {
      const page = await call("query_review_queue", { limit: 20, ...(after ? { after } : {}) });
      setWaiting((previous) => (after && previous ? [...previous, ...page.memories] : page.memories));
      setCursor(page.next_cursor);
    } catch (caught) {
      setError(caught);
    }
  };

  useEffect(() => {
    void load(null);
  }, [call]);

  return (
    <section aria-labelledby="review-title">
      <h1 id="review-title">Review</h1>
      <p class="muted">Imported memories are untrusted until a person reads them: approve what holds, reject what does not.</p>
      <ErrorNote error={error} />
      {!waiting && !error ? <Loading /> : null}
      {waiting && waiting.length === 0 ? <Empty>Nothing waits for review.</Empty> : null}
      {waiting && waiting.length > 0 ? (
        <ol class="rows">
          {waiting.map((memory) => (
            <ReviewRow
              key={memory.id}
              call={call}
              memory={memory}
              onDone={() => setWaiting((list) => list?.filter((m) => m.id !== memory.id))}
            />
          ))}
        </ol>
      ) : null}
      {cursor ? (
        <button type="button" onClick={() => void load(cursor)}>
          More
        </button>
      ) : null}
    </section>
  );
}

function ReviewRow({ call, memory, onDone }: { call: Call; memory: MemoryBrief; onDone: () => void }) {
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
  );
  return <MemoryRow memory={memory} after={extra} />;
}
