import { useState } from "preact/hooks";
import type { Call, Schemas } from "../api.js";
import { ChoiceField, Empty, ErrorNote, Loading, TextField } from "../widgets.js";
import { MemoryRow } from "./brief-list.js";

type Result = Schemas["QueryMemoriesResult"];

/**
 * Search over every agent's memories in the workspace, with the filters query_raw_memories takes: by words, by a
 * file or folder the memories cite, or both.
 */
export function Search({ call }: { call: Call }) {
  const [query, setQuery] = useState("");
  const [path, setPath] = useState("");
  const [mode, setMode] = useState<Schemas["SearchMode"]>("hybrid");
  const [agent, setAgent] = useState("");
  const [kind, setKind] = useState("");
  const [checkStatus, setCheckStatus] = useState("");
  const [reviewState, setReviewState] = useState("");
  const [asOf, setAsOf] = useState("");
  const [superseded, setSuperseded] = useState(false);
  const [result, setResult] = useState<Result | undefined>(undefined);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<unknown>(undefined);

  const search = async () => {
    if (!query.trim() && !path.trim()) return;
    setLoading(true);
    setError(undefined);
    try {
      setResult(
        await call("query_raw_memories", {
          ...(query.trim() ? { query: query.trim() } : {}),
          ...(path.trim() ? { paths: [path.trim()] } : {}),
          mode,
          limit: 20,
          include_superseded: superseded,
          ...(agent.trim() ? { agent: agent.trim() } : {}),
          ...(kind ? { kind: kind as Schemas["Kind"] } : {}),
          ...(checkStatus ? { check_status: checkStatus as "passed" | "failed" | "unverified" } : {}),
          ...(reviewState ? { review_state: reviewState as "pending" | "approved" | "rejected" } : {}),
          ...(asOf ? { as_of: new Date(asOf).toISOString() } : {}),
        }),
      );
    } catch (caught) {
      setError(caught);
      setResult(undefined);
    } finally {
      setLoading(false);
    }
  };

  return (
    <section aria-labelledby="search-title">
      <h1 id="search-title">Search</h1>
      <form
        role="search"
        class="filters"
        onSubmit={(event) => {
          event.preventDefault();
          void search();
        }}
      >
        <label class="wide">
          Search memories
          <input type="search" name="query" value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
        </label>
        <label class="wide">
          Cites file or folder
          <input
            name="path"
            value={path}
            onInput={(e) => setPath(e.currentTarget.value)}
            placeholder="src/auth/refresh.ts"
            autocomplete="off"
            spellcheck={false}
          />
        </label>
        <ChoiceField
          label="Mode"
          name="mode"
          value={mode}
          set={(value) => setMode(value as Schemas["SearchMode"])}
          choices={["hybrid", "lexical", "semantic"]}
          required
        />
        <TextField label="Agent" name="agent" value={agent} set={setAgent} />
        <ChoiceField label="Kind" name="kind" value={kind} set={setKind} choices={["turn", "decision", "attempt", "lesson", "note"]} />
        <ChoiceField
          label="Check status"
          name="check_status"
          value={checkStatus}
          set={setCheckStatus}
          choices={["passed", "failed", "unverified"]}
        />
        <ChoiceField
          label="Review"
          name="review_state"
          value={reviewState}
          set={setReviewState}
          choices={["pending", "approved", "rejected"]}
        />
        <label>
          As of
          <input type="datetime-local" name="as_of" value={asOf} onInput={(e) => setAsOf(e.currentTarget.value)} />
        </label>
        <label class="check">
          <input type="checkbox" name="superseded" checked={superseded} onChange={(e) => setSuperseded(e.currentTarget.checked)} />
          Include superseded
        </label>
        <button type="submit">Search</button>
      </form>
      <ErrorNote error={error} />
      {loading ? <Loading /> : null}
      {result && !loading ? (
        result.hits.length === 0 ? (
          <Empty>Nothing here: no memory matches (confidence {result.confidence}).</Empty>
        ) : (
          <>
            <p class="muted">
              {result.hits.length} hits, best confidence {result.confidence}
            </p>
            <ol class="rows">
              {result.hits.map((hit) => (
                <MemoryRow
                  key={hit.memory.id}
                  memory={hit.memory}
                  opens
                  extra={
                    <span class={`confidence confidence-${hit.confidence}`}>
                      {hit.confidence} · {hit.matched_by.join(" + ")}
                    </span>
                  }
                />
              ))}
            </ol>
          </>
        )
      ) : null}
    </section>
  );
}
