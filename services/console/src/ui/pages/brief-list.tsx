import { isBrief, type Memory, type MemoryBrief } from "../api.js";
import { when } from "../format.js";
import { memoryHref, sessionHref } from "../routes.js";
import { Flags } from "../widgets.js";

/** Where a click on a row is the click of something inside it, not a wish to open the row's memory. */
const INTERACTIVE = "a, button, input, select, textarea, label, form, summary";

/**
 * A memory as one row of a listing: when, who, which session, what kind, its flags, a few words. With `opens`, a
 * click anywhere on the row that is not on a link or a control (nor the end of selecting its text) opens the
 * memory; the row's time stays the link a keyboard reaches.
 */
export function MemoryRow({
  memory,
  extra,
  after,
  opens = false,
  hideText = false,
}: {
  memory: MemoryBrief | Memory;
  /** Shown in the row's head (a hit's confidence). */
  extra?: preact.ComponentChildren;
  /** Shown below the row's text (a review's controls). */
  after?: preact.ComponentChildren;
  /** The whole row opens the memory. */
  opens?: boolean;
  /** Leave out the row's few words (`after` shows the memory's fields instead). */
  hideText?: boolean;
}) {
  const text = isBrief(memory) ? memory.text : `${memory.prompt} → ${memory.response}`;
  const flags = isBrief(memory) ? memory.flags : undefined;
  const kind = memory.kind && memory.kind !== "turn" ? memory.kind : undefined;
  return (
    <li
      class={opens ? "row row-opens" : "row"}
      onClick={
        opens
          ? (event) => {
              const target = event.target as Element | null;
              if (target?.closest(INTERACTIVE)) return;
              if (String(globalThis.getSelection?.() ?? "") !== "") return;
              location.hash = memoryHref(memory.id);
            }
          : undefined
      }
    >
      <div class="row-head">
        <a href={memoryHref(memory.id)} class="row-link">
          {/* When it happened, for imported history (a commit's time), else when it was stored. */}
          <time dateTime={memory.occurred_at ?? memory.recorded_at} title={`stored ${when(memory.recorded_at)}`}>
            {when(memory.occurred_at ?? memory.recorded_at)}
          </time>
        </a>
        <span class="agent">{memory.agent}</span>
        <a href={sessionHref(memory.session_id)} class="session">
          {memory.session_id}
        </a>
        {kind ? <span class="kind">{kind}</span> : null}
        <Flags flags={flags} />
        {extra}
      </div>
      {hideText ? null : <p class="row-text">{text}</p>}
      {isBrief(memory) && memory.cites ? (
        <p class="row-cites muted">
          cites{" "}
          {memory.cites.map((path, i) => (
            <span key={path}>
              {i > 0 ? ", " : ""}
              <code>{path}</code>
            </span>
          ))}
        </p>
      ) : null}
      {after}
    </li>
  );
}
