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

/** A labelled text field of a form: its value, and what typing sets. */
export function TextField(props: { label: string; name: string; value: string; set: (value: string) => void }) {
  return (
    <label>
      {props.label}
      <input name={props.name} value={props.value} onInput={(e) => props.set(e.currentTarget.value)} autocomplete="off" />
    </label>
  );
}

/** A labelled choice of a form among `choices`, headed by "any" (the empty value) unless `required`. */
export function ChoiceField(props: {
  label: string;
  name: string;
  value: string;
  set: (value: string) => void;
  choices: readonly string[];
  required?: boolean;
}) {
  return (
    <label>
      {props.label}
      <select name={props.name} value={props.value} onChange={(e) => props.set(e.currentTarget.value)}>
        {props.required ? null : <option value="">any</option>}
        {props.choices.map((choice) => (
          <option key={choice} value={choice}>
            {choice}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The button that reads the next page of a paged list, while there is one and none is being read. */
export function MoreButton({
  pages,
  children,
}: {
  pages: { more?: (() => void) | undefined; loading: boolean };
  children: ComponentChildren;
}) {
  return pages.more && !pages.loading ? (
    <button type="button" onClick={pages.more}>
      {children}
    </button>
  ) : null;
}
