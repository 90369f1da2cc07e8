import { useCallback, useEffect, useMemo, useState } from "preact/hooks";
import { apiFor, type Caller } from "./api.js";
import { InboxPage } from "./pages/inbox.js";
import { MemoryPage } from "./pages/memory.js";
import { Search } from "./pages/search.js";
import { ReviewPage } from "./pages/review.js";
import { SessionPage } from "./pages/session.js";
import { StatusPage } from "./pages/status.js";
import { TeamPage } from "./pages/team.js";
import { Timeline } from "./pages/timeline.js";
import { parseRoute, timelineHref, type Route } from "./routes.js";
import { ErrorNote } from "./widgets.js";

/** The token lives in this tab only (sessionStorage): closing the tab signs out. */
const TOKEN_KEY = "cairn.token";

export function App() {
  const [token, setToken] = useState<string | null>(() => sessionStorage.getItem(TOKEN_KEY));
  const [caller, setCaller] = useState<Caller | undefined>(undefined);
  const [route, setRoute] = useState<Route>(() => parseRoute(location.hash));
  const call = useMemo(() => (token ? apiFor(token) : undefined), [token]);
  /** The signed-in agent's unread messages, for the nav: read again on every page the console opens. */
  const [unread, setUnread] = useState<number | undefined>(undefined);

  useEffect(() => {
    const onHash = () => setRoute(parseRoute(location.hash));
    addEventListener("hashchange", onHash);
    return () => removeEventListener("hashchange", onHash);
  }, []);

  const signOut = useCallback(() => {
    sessionStorage.removeItem(TOKEN_KEY);
    setToken(null);
    setCaller(undefined);
  }, []);

  useEffect(() => {
    if (!call) return;
    call("get_caller", {}).then(setCaller, signOut);
  }, [call, signOut]);

  useEffect(() => {
    if (!call || !caller) return;
    // A count the nav cannot read leaves the nav without one; the Inbox page shows the error.
    call("query_inbox", { limit: 1 }).then(
      (inbox) => setUnread(inbox.unread),
      () => setUnread(undefined),
    );
  }, [call, caller, route]);

  if (!call || !caller) {
    return (
      <SignIn
        onSignedIn={(newToken, who) => {
          sessionStorage.setItem(TOKEN_KEY, newToken);
          setCaller(who);
          setToken(newToken);
        }}
      />
    );
  }
  return (
    <>
      <header class="top">
        <nav aria-label="Console">
          <a href={timelineHref()} aria-current={route.page === "timeline" ? "page" : undefined}>
            Timeline
          </a>
          <a href="#/search" aria-current={route.page === "search" ? "page" : undefined}>
            Search
          </a>
          <a href="#/team" aria-current={route.page === "team" ? "page" : undefined}>
            Team
          </a>
          <a href="#/inbox" aria-current={route.page === "inbox" ? "page" : undefined}>
            {unread ? `Inbox (${unread})` : "Inbox"}
          </a>
          {caller.role === "admin" ? (
            <>
              <a href="#/review" aria-current={route.page === "review" ? "page" : undefined}>
                Review
              </a>
              <a href="#/status" aria-current={route.page === "status" ? "page" : undefined}>
                Status
              </a>
            </>
          ) : null}
        </nav>
        <p class="who">
          {caller.agent} ({caller.role}) in {caller.workspace}
          <button type="button" class="link" onClick={signOut}>
            Sign out
          </button>
        </p>
      </header>
      <main>
        {route.page === "timeline" ? <Timeline call={call} caller={caller} agent={route.agent} /> : null}
        {route.page === "search" ? <Search call={call} /> : null}
        {route.page === "memory" ? <MemoryPage call={call} caller={caller} id={route.id} /> : null}
        {route.page === "session" ? <SessionPage call={call} id={route.id} /> : null}
        {route.page === "team" ? <TeamPage call={call} /> : null}
        {route.page === "inbox" ? <InboxPage call={call} caller={caller} onUnread={setUnread} /> : null}
        {route.page === "status" || route.page === "review" ? (
          caller.role !== "admin" ? (
            <p role="alert" class="error">
              This page is for admin tokens.
            </p>
          ) : route.page === "status" ? (
            <StatusPage call={call} />
          ) : (
            <ReviewPage call={call} />
          )
        ) : null}
      </main>
    </>
  );
}

function SignIn({ onSignedIn }: { onSignedIn: (token: string, caller: Caller) => void }) {
  const [draft, setDraft] = useState("");
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  /** Never rejects: a refused token is shown as the error. */
  const signIn = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const token = draft.trim();
      onSignedIn(token, await apiFor(token)("get_caller", {}));
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="sign-in">
      <h1>Cairn</h1>
      <p>What your agents remember: browse, search and correct it.</p>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void signIn();
        }}
      >
        <label>
          Token
          <input type="password" name="token" value={draft} onInput={(e) => setDraft(e.currentTarget.value)} autocomplete="off" required />
        </label>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        <ErrorNote error={error} />
      </form>
    </main>
  );
}
