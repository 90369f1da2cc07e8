import { isBrief, type Memory, type MemoryBrief } from "../api.js";
import { when } from "../format.js";
import { memoryHref, sessionHref } from "../routes.js";
import { Flags } from "../widgets.js";

/** A memory as one row of a listing: when, who, which session, what kind, its flags, a few words. */
export function MemoryRow({
  memory,
  extra,
  after,
}: {
  memory: MemoryBrief | Memory;
  /** Shown in the row's head (a hit's confidence). */
  extra?: preact.ComponentChildren;
  /** Shown below the row's text (a review's controls). */
  after?: preact.ComponentChildren;
}) {
  const text = isBrief(memory) ? memory.text : `${memory.prompt} → ${memory.response}`;
  const flags = isBrief(memory) ? memory.flags : undefined;
  const kind = memory.kind && memory.kind !== "turn" ? memory.kind : undefined;
  return (
    <li class="row">
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
      <p class="row-text">{text}</p>
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
