import { Fragment } from "preact";
import { useEffect, useState } from "preact/hooks";
import type { Call, Schemas } from "../api.js";
import { when } from "../format.js";
import { Empty, ErrorNote, Loading } from "../widgets.js";

type Readiness = { status: string; checks: Record<string, string> };

/** For admins: whether Cairn and its Chroma are up, and the workspace's integrity with its counts, checked on request. */
export function StatusPage({ call }: { call: Call }) {
  const [readiness, setReadiness] = useState<Readiness | undefined>(undefined);
  const [status, setStatus] = useState<Schemas["StoreStatus"] | undefined>(undefined);
  const [report, setReport] = useState<{ at: string; report: Schemas["IntegrityReport"] } | undefined>(undefined);
  const [verifying, setVerifying] = useState(false);
  const [error, setError] = useState<unknown>(undefined);

  useEffect(() => {
    call("get_store_status", {}).then(setStatus, setError);
    // /readyz answers 503 with the same body while a part is down: both are shown.
    fetch("/readyz")
      .then((res) => res.json() as Promise<Readiness>)
      .then(setReadiness, (caught) => setError(caught));
  }, [call]);

  const verify = async () => {
    setVerifying(true);
    setError(undefined);
    try {
      setReport({ at: new Date().toISOString(), report: await call("verify_store", {}) });
      setStatus(await call("get_store_status", {}));
    } catch (caught) {
      setError(caught);
    } finally {
      setVerifying(false);
    }
  };

  return (
    <section aria-labelledby="status-title">
      <h1 id="status-title">Status</h1>
      <h2>Service</h2>
      {readiness ? (
        <dl class="fields">
          <dt>Ready</dt>
          <dd>{readiness.status === "ready" ? "yes" : "no"}</dd>
          {Object.entries(readiness.checks).map(([name, state]) => (
            <Fragment key={name}>
              <dt>{name === "chroma" ? "Chroma reachable" : name}</dt>
              <dd class={state === "ok" ? "status-passed" : "status-failed"}>{state}</dd>
            </Fragment>
          ))}
        </dl>
      ) : error ? null : (
        <Loading />
      )}
      <h2>Workspace</h2>
      {status ? (
        <dl class="fields" aria-label="Workspace status">
          <dt>Workspace</dt>
          <dd>{status.workspace}</dd>
          <dt>Turns</dt>
          <dd>{status.turns}</dd>
          <dt>Summaries</dt>
          <dd>{status.summaries}</dd>
          <dt>Last verified</dt>
          <dd>
            {status.last_verify
              ? `${when(status.last_verify.at)} by ${status.last_verify.by}: ${status.last_verify.healthy ? "healthy" : "problems found"}`
              : "never"}
          </dd>
        </dl>
      ) : null}
      <h2>Integrity</h2>
      <p class="muted">Counts every record and checks the logs against them; on a large workspace it takes a while.</p>
      <button type="button" onClick={() => void verify()} disabled={verifying}>
        Verify now
      </button>
      <ErrorNote error={error} />
      {verifying ? <Loading /> : null}
      {report && !verifying ? <IntegrityResult at={report.at} report={report.report} /> : null}
      {!report && !verifying ? <Empty>Run a check to see its details here.</Empty> : null}
    </section>
  );
}

function IntegrityResult({ at, report }: { at: string; report: Schemas["IntegrityReport"] }) {
  return (
    <div aria-label="Integrity report">
      <p>
        Workspace {report.workspace}, verified {when(at)}: <strong>{report.healthy ? "healthy" : "problems found"}</strong>
      </p>
      <table>
        <thead>
          <tr>
            <th scope="col">Collection</th>
            <th scope="col">Records</th>
            <th scope="col">Embedding</th>
          </tr>
        </thead>
        <tbody>
          {report.collections.map((c) => (
            <tr key={c.collection}>
              <td>{c.collection}</td>
              <td>{c.count}</td>
              <td>{c.stamp ? `${c.stamp.model} (${c.stamp.dimension})${c.stamp_matches ? "" : ", differs"}` : "none"}</td>
            </tr>
          ))}
          <tr>
            <td>tombstones</td>
            <td>{report.tombstones}</td>
            <td />
          </tr>
        </tbody>
      </table>
      {report.problems.length > 0 ? (
        <ul class="plain">
          {report.problems.map((p, i) => (
            <li key={i}>
              {p.check} in {p.collection}
              {p.id ? ` (${p.id})` : ""}: {p.detail}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
