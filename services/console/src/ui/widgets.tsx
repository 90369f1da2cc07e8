import type { ComponentChildren } from "preact";
import { ApiError } from "@cairn/openapi/rest";

/** An error as the API gave it: what went wrong and, when there is one, the hint on what to do. */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const api = error instanceof ApiError ? error : undefined;
  return (
    <div class="error" role="alert">
      <strong>{api ? `${api.detail}` : String(error)}</strong>
      {api?.hint ? <p>{api.hint}</p> : null}
      {api ? <p class="muted">{api.code}</p> : null}
    </div>
  );
}

export function Loading() {
  return (
    <p class="muted" role="status">
      Loading…
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="empty">{children}</p>;
}

export function Flags({ flags }: { flags: readonly string[] | undefined }) {
  if (!flags || flags.length === 0) return null;
  return (
    <span class="flags">
      {flags.map((flag) => (
        <span key={flag} class={`flag flag-${flag}`}>
          {flag.replace("_", " ")}
        </span>
      ))}
    </span>
  );
}
