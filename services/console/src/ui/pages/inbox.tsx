import { useCallback, useEffect, useState } from "preact/hooks";
import type { Call, Caller, Schemas } from "../api.js";
import { when } from "../format.js";
import { usePages } from "../pages-hook.js";
import { memoryHref, sessionHref } from "../routes.js";
import { ChoiceField, Empty, ErrorNote, Loading, MoreButton, TextField } from "../widgets.js";

type Message = Schemas["Message"];
type Box = "inbox" | "sent";

/** Messages a page: the API's default, so the bodies a page carries stay small. */
const PAGE = 10;
/** The most ids `ack_messages` takes in one call. */
const ACK_PER_CALL = 100;

/** A key for one draft, so that sending it again (a retry, a second click) sends nothing twice. */
const draftKey = (): string => {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `console-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
};

/** Ids typed into one field, split on spaces and commas, each once. */
const idList = (text: string): string[] => [...new Set(text.split(/[\s,]+/).filter(Boolean))];

/**
 * The signed-in agent's messages, unread first, then newest first, and what it sent; each opens to its body and
 * is marked read there, or every unread one shown is. A form sends a message to an agent of the workspace or to
 * the team. An admin also reads a given agent's messages (marking them read is the agent's to do).
 */
export function InboxPage({ call, caller, onUnread }: { call: Call; caller: Caller; onUnread: (unread: number) => void }) {
  const [box, setBox] = useState<Box>("inbox");
  /** Whose messages: empty for the caller's own. */
  const [owner, setOwner] = useState("");
  const [unread, setUnread] = useState<number | undefined>(undefined);
  const [team, setTeam] = useState<string[] | undefined>(undefined);
  const [teamError, setTeamError] = useState<unknown>(undefined);
  const own = owner === "";

  useEffect(() => {
    call("query_team_status", { limit: 100 }).then(
      (status) => setTeam(status.agents.map((a) => a.agent)),
      (caught) => {
        setTeam([]);
        setTeamError(caught);
      },
    );
  }, [call]);

  const counted = useCallback(
    (count: number) => {
      setUnread(count);
      if (own) onUnread(count);
    },
    [own, onUnread],
  );

  // There is no read of one message: a page is asked for whole (`detail: full`), its bodies shown as rows open.
  const pages = usePages<Message>(
    useCallback(
      async (cursor: string | null) => {
        const page = await call("query_inbox", {
          box,
          limit: PAGE,
          detail: "full",
          ...(owner ? { agent: owner } : {}),
          ...(cursor ? { cursor } : {}),
        });
        counted(page.unread);
        return { items: page.messages, next: page.next_cursor };
      },
      [call, box, owner, counted],
    ),
  );
  // A message marked read between two pages can come again on the later one: each is shown once.
  const shown = pages.items.filter((m, i, all) => all.findIndex((other) => other.id === m.id) === i);
  const canMark = own && box === "inbox";
  const unreadShown = canMark ? shown.filter((m) => !m.read).map((m) => m.id) : [];

  const [marking, setMarking] = useState(false);
  const [markError, setMarkError] = useState<unknown>(undefined);
  /** Marks `ids` read, a call per hundred; what the API says is read is shown read. Never rejects. */
  const markRead = async (ids: string[]) => {
    setMarking(true);
    setMarkError(undefined);
    let left = unread ?? 0;
    try {
      for (let at = 0; at < ids.length; at += ACK_PER_CALL) {
        const answer = await call("ack_messages", { message_ids: ids.slice(at, at + ACK_PER_CALL) });
        const read = new Set(answer.read);
        pages.update((m) => (read.has(m.id) ? { ...m, read: true } : m));
        left = Math.max(0, left - answer.marked);
        counted(left);
      }
    } catch (caught) {
      setMarkError(caught);
    } finally {
      setMarking(false);
    }
  };

  const whose = own ? undefined : owner;
  return (
    <section aria-labelledby="inbox-title">
      <h1 id="inbox-title">Inbox</h1>
      <div class="inbox-controls">
        <div class="buttons" role="group" aria-label="Box">
          <button type="button" aria-pressed={box === "inbox"} onClick={() => setBox("inbox")}>
            Received
          </button>
          <button type="button" aria-pressed={box === "sent"} onClick={() => setBox("sent")}>
            Sent
          </button>
        </div>
        {caller.role === "admin" ? (
          <label>
            Whose messages
            <select name="owner" value={owner} onChange={(e) => setOwner(e.currentTarget.value)}>
              <option value="">mine ({caller.agent})</option>
              {(team ?? [])
                .filter((agent) => agent !== caller.agent)
                .map((agent) => (
                  <option key={agent} value={agent}>
                    {agent}
                  </option>
                ))}
            </select>
          </label>
        ) : null}
      </div>
      {unread !== undefined ? (
        <p class="count" role="status" aria-label="Unread messages">
          {whose ? `${whose} has ${unread} unread` : `${unread} unread`}
        </p>
      ) : null}
      {unreadShown.length > 0 ? (
        <div class="buttons">
          <button type="button" disabled={marking} onClick={() => void markRead(unreadShown)}>
            Mark all shown read
          </button>
        </div>
      ) : null}
      <ErrorNote error={markError} />
      <ErrorNote error={pages.error} />
      {pages.loading ? <Loading /> : null}
      {!pages.loading && !pages.error && shown.length === 0 ? <Empty>{box === "sent" ? "Nothing sent yet." : "No messages."}</Empty> : null}
      {shown.length > 0 ? (
        <ol class="rows" aria-label={box === "sent" ? "Sent messages" : "Messages"}>
          {shown.map((message) => (
            <MessageRow
              key={message.id}
              message={message}
              box={box}
              canMark={canMark}
              marking={marking}
              onMark={() => void markRead([message.id])}
            />
          ))}
        </ol>
      ) : null}
      <MoreButton pages={pages}>More</MoreButton>
      <SendForm
        call={call}
        recipients={(team ?? []).filter((agent) => agent !== caller.agent)}
        teamError={teamError}
        onSent={() => {
          if (box === "sent" && own) pages.reload();
        }}
      />
    </section>
  );
}

function MessageRow({
  message,
  box,
  canMark,
  marking,
  onMark,
}: {
  message: Message;
  box: Box;
  canMark: boolean;
  marking: boolean;
  onMark: () => void;
}) {
  const [open, setOpen] = useState(false);
  const bodyId = `body-${message.id}`;
  return (
    <li class={message.read || box === "sent" ? "row message" : "row message message-unread"}>
      <div class="row-head">
        <span class="agent">{box === "sent" ? `to ${message.to}` : message.from}</span>
        {box === "inbox" && message.to === "team" ? <span class="kind">team</span> : null}
        <time dateTime={message.sent_at}>{when(message.sent_at)}</time>
        {box === "inbox" ? <span class={`flag flag-${message.read ? "read" : "unread"}`}>{message.read ? "read" : "unread"}</span> : null}
      </div>
      <button type="button" class="subject" aria-expanded={open} aria-controls={bodyId} onClick={() => setOpen(!open)}>
        {message.subject}
      </button>
      {open ? (
        <div id={bodyId} class="message-body">
          <p class="text">{message.body}</p>
          {(message.memory_ids ?? []).length > 0 || (message.session_ids ?? []).length > 0 ? (
            <p class="muted">
              Refers to{" "}
              {(message.memory_ids ?? []).map((id) => (
                <a key={id} href={memoryHref(id)} class="ref">
                  {id}
                </a>
              ))}
              {(message.session_ids ?? []).map((id) => (
                <a key={id} href={sessionHref(id)} class="ref">
                  session {id}
                </a>
              ))}
            </p>
          ) : null}
          {canMark && !message.read ? (
            <div class="buttons">
              <button type="button" disabled={marking} onClick={onMark}>
                Mark read
              </button>
            </div>
          ) : null}
        </div>
      ) : null}
    </li>
  );
}

/** A message to an agent of the workspace or to `team`, with references to memories and sessions if any. */
function SendForm({ call, recipients, teamError, onSent }: { call: Call; recipients: string[]; teamError: unknown; onSent: () => void }) {
  const [to, setTo] = useState("team");
  const [subject, setSubject] = useState("");
  const [body, setBody] = useState("");
  const [memories, setMemories] = useState("");
  const [sessions, setSessions] = useState("");
  const [key, setKey] = useState(draftKey);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [outcome, setOutcome] = useState<string | undefined>(undefined);

  /** Never rejects: a refused message is shown as the error, and the draft stays to be corrected. */
  const send = async () => {
    setBusy(true);
    setError(undefined);
    setOutcome(undefined);
    try {
      const memoryIds = idList(memories);
      const sessionIds = idList(sessions);
      const sent = await call("send_message", {
        to,
        subject,
        body,
        ...(memoryIds.length > 0 ? { memory_ids: memoryIds } : {}),
        ...(sessionIds.length > 0 ? { session_ids: sessionIds } : {}),
        idempotency_key: key,
      });
      setOutcome(`Sent to ${sent.to} (${sent.id}).`);
      setSubject("");
      setBody("");
      setMemories("");
      setSessions("");
      setKey(draftKey());
      onSent();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      class="actions send"
      aria-labelledby="send-title"
      onSubmit={(event) => {
        event.preventDefault();
        void send();
      }}
    >
      <h2 id="send-title">Send a message</h2>
      <ChoiceField label="To" name="to" value={to} set={setTo} choices={["team", ...recipients]} required />
      <TextField label="Subject" name="subject" value={subject} set={setSubject} />
      <label>
        Body
        <textarea name="body" rows={5} value={body} onInput={(e) => setBody(e.currentTarget.value)} />
      </label>
      <TextField label="Memory ids (optional)" name="memory_ids" value={memories} set={setMemories} />
      <TextField label="Session ids (optional)" name="session_ids" value={sessions} set={setSessions} />
      <div class="buttons">
        <button type="submit" disabled={busy || !subject.trim() || !body.trim()}>
          Send
        </button>
      </div>
      {outcome ? (
        <p class="outcome" role="status">
          {outcome}
        </p>
      ) : null}
      <ErrorNote error={teamError} />
      <ErrorNote error={error} />
    </form>
  );
}
