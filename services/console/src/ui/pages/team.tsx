import { useEffect, useState } from "preact/hooks";
import type { Call, Schemas } from "../api.js";
import { when } from "../format.js";
import { memoryHref, sessionHref, timelineHref } from "../routes.js";
import { Empty, ErrorNote, Loading } from "../widgets.js";

/** Each agent's newest turn and the next step it wrote, most recently active first: the team at a glance. */
export function TeamPage({ call }: { call: Call }) {
  const [team, setTeam] = useState<Schemas["TeamStatus"] | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);

  useEffect(() => {
    call("query_team_status", { limit: 100 }).then(setTeam, setError);
  }, [call]);

  return (
    <section aria-labelledby="team-title">
      <h1 id="team-title">Team</h1>
      <ErrorNote error={error} />
      {!team && !error ? <Loading /> : null}
      {team && team.agents.length === 0 ? <Empty>No agent has written anything here yet.</Empty> : null}
      {team && team.agents.length > 0 ? (
        <ol class="rows">
          {team.agents.map((a) => (
            <li key={a.agent} class="row">
              <div class="row-head">
                <a href={timelineHref(a.agent)} class="agent">
                  {a.agent}
                </a>
                <a href={memoryHref(a.memory_id)}>
                  <time dateTime={a.recorded_at}>{when(a.recorded_at)}</time>
                </a>
                <a href={sessionHref(a.session_id)} class="session">
                  {a.session_id}
                </a>
                {a.failed_checks.length > 0 ? <span class="flag flag-checks_failed">{a.failed_checks.length} failing</span> : null}
              </div>
              <p class="row-text">{a.task}</p>
              <p class="row-text">{a.next_step ? `Next: ${a.next_step}` : <span class="muted">No next step written.</span>}</p>
              {a.failed_checks.length > 0 ? (
                <ul class="plain">
                  {a.failed_checks.map((f) => (
                    <li key={f.memory_id}>
                      <a href={memoryHref(f.memory_id)}>{f.checks.join(", ") || f.memory_id}</a> failed
                    </li>
                  ))}
                </ul>
              ) : null}
            </li>
          ))}
        </ol>
      ) : null}
      {team?.more ? <p class="muted">More agents than shown: the most recently active hundred are listed.</p> : null}
    </section>
  );
}
