import { useCallback, useState } from "preact/hooks";
import type { Call, MemoryBrief } from "../api.js";
import { Empty, ErrorNote, Loading } from "../widgets.js";
import { usePages } from "../pages-hook.js";
import { MemoryRow } from "./brief-list.js";

/** For admins: imported memories waiting for a person's verdict, oldest first; each approved or rejected with a reason. */
export function ReviewPage({ call }: { call: Call }) {
  const pages = usePages<MemoryBrief>(
    useCallback(
      async (after: string | null) => {
        const page = await call("query_review_queue", { limit: 20, ...(after ? { after } : {}) });
        return { items: page.memories, next: page.next_cursor };
      },
      [call],
    ),
  );

  return (
    <section aria-labelledby="review-title">
      <h1 id="review-title">Review</h1>
      <p class="muted">Imported memories are untrusted until a person reads them: approve what holds, reject what does not.</p>
      <ErrorNote error={pages.error} />
      {pages.loading ? <Loading /> : null}
      {!pages.loading && !pages.error && pages.items.length === 0 ? <Empty>Nothing waits for review.</Empty> : null}
      {pages.items.length > 0 ? (
        <ol class="rows">
          {pages.items.map((memory) => (
            <ReviewRow key={memory.id} call={call} memory={memory} onDone={() => pages.drop((m) => m.id !== memory.id)} />
          ))}
        </ol>
      ) : null}
      {pages.more && !pages.loading ? (
        <button type="button" onClick={pages.more}>
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
