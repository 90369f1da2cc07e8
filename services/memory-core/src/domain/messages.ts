import { randomUUID } from "node:crypto";
import type { OperationInput, OperationOutput } from "@cairn/openapi";
import type { Principal } from "../auth/principal.js";
import { CairnError, forbidden, notFound, validationFailed } from "../errors.js";
import {
  directStream,
  keyedMessageId,
  messageDigest,
  newMessageId,
  sentStream,
  TEAM,
  TEAM_STREAM,
  type BoxSlot,
  type Mailbox,
  type NewMessage,
  type StoredMessage,
} from "../ledger/mailbox.js";
import { assertWithinListing, countsFrom, encodeCountsCursor, type Listing } from "../records/cursor.js";

type SendResult = OperationOutput<"send_message">;
type Inbox = OperationOutput<"query_inbox">;
type Message = Inbox["messages"][number];

/** Slots of a stream read at a time, with their messages and read marks: one lookup of each per chunk. */
const CHUNK = 25;
/**
 * Slots one `query_inbox` call examines at most, whatever its `limit` and however many messages the box holds:
 * a page that this leaves short comes with a `next_cursor` to go on from.
 */
const SCAN_PER_CALL = 200;
/**
 * A replay finds a message stored but not yet in its recipients' inboxes: its sender is still posting it, or
 * stopped between storing and posting. Past this age, the replay posts it.
 */
const POST_GRACE_MS = 30_000;

/**
 * Agents messaging agents of their workspace (ledger/mailbox.ts keeps the messages). A direct message is read by
 * its recipient, its sender and the workspace's admins; a team message by every agent of the workspace. Read
 * marks are per reader. `members` names the agents a message can be sent to (the workspace's tokens).
 */
export class MessageService {
  constructor(
    private readonly mailbox: Mailbox,
    private readonly members: (workspace: string) => ReadonlySet<string>,
    private readonly now: () => number = Date.now,
  ) {}

  async send(principal: Principal, input: OperationInput<"send_message">): Promise<{ created: boolean; result: SendResult }> {
    const { workspace, agent } = principal;
    if (input.to === agent) {
      throw validationFailed(
        [{ path: "to", message: "names you: a message goes to another agent or to `team`" }],
        "Name another agent of your workspace, or `team` for all of them.",
      );
    }
    if (input.to !== TEAM && !this.members(workspace).has(input.to)) {
      throw notFound(
        `No agent named ${input.to} in this workspace; nothing was sent.`,
        "Send to an agent of your workspace (query_team_status lists those at work) or to `team` for all of them.",
      );
    }
    const message: NewMessage = {
      from: agent,
      to: input.to,
      subject: input.subject,
      body: input.body,
      memoryIds: input.memory_ids ?? [],
      sessionIds: input.session_ids ?? [],
    };
    const digest = messageDigest(message);
    const key = input.idempotency_key;
    const id = key !== undefined ? keyedMessageId(agent, key) : newMessageId();
    if (key !== undefined) {
      const earlier = (await this.mailbox.messages(workspace, [id])).get(id);
      if (earlier) return this.replay(workspace, earlier, digest);
    }
    const writeId = randomUUID();
    const stored = await this.mailbox.store(workspace, id, message, writeId);
    if (stored.writeId !== writeId) return this.replay(workspace, stored, digest);
    await this.mailbox.post(workspace, stored);
    return { created: true, result: sendResult(stored, false) };
  }

  private async replay(workspace: string, earlier: StoredMessage, digest: string): Promise<{ created: boolean; result: SendResult }> {
    if (earlier.digest !== digest) {
      throw new CairnError(
        "idempotency_conflict",
        409,
        `Message ${earlier.id} was sent earlier under this idempotency key with another recipient, subject, body or references; nothing was sent.`,
        "Use a new idempotency_key for a new message; resend the original unchanged to get its record back.",
      );
    }
    if (!earlier.posted && this.now() - earlier.sentAt > POST_GRACE_MS) await this.mailbox.post(workspace, earlier);
    return { created: false, result: sendResult(earlier, true) };
  }

  async inbox(principal: Principal, input: OperationInput<"query_inbox">): Promise<Inbox> {
    const { workspace } = principal;
    const owner = input.agent ?? principal.agent;
    if (owner !== principal.agent && principal.role !== "admin") throw forbidden("Only an admin reads another agent's messages.");
    const listing: Listing = { name: "inbox", workspace, scope: [input.box, owner, input.unread_only ? 1 : 0] };
    const unread = await this.mailbox.unread(workspace, owner);
    const full = input.detail === "full";
    if (input.box === "sent") {
      const page = await this.sentPage(workspace, owner, input, listing, full);
      return { ...page, unread };
    }
    return { ...(await this.inboxPage(workspace, owner, input, listing, unread, full)), unread };
  }

  /** What `owner` sent, newest first; each read by its sender. */
  private async sentPage(
    workspace: string,
    owner: string,
    input: OperationInput<"query_inbox">,
    listing: Listing,
    full: boolean,
  ): Promise<Omit<Inbox, "unread">> {
    const stream = sentStream(owner);
    const length = await this.mailbox.length(workspace, stream);
    let end = length;
    if (input.cursor !== undefined) {
      [end] = countsFrom(input.cursor, "cursor", listing, 1) as [number];
      assertWithinListing(end, length, "cursor");
    }
    if (input.unread_only) return { messages: [], next_cursor: null };
    const seqs = descending(end, Math.min(input.limit, end));
    const slots = await this.mailbox.slots(workspace, stream, seqs);
    const messages = await this.mailbox.messages(
      workspace,
      [...slots.values()].map((s) => s.messageId),
    );
    const page: Message[] = [];
    for (const seq of seqs) {
      const m = messages.get(slots.get(seq)?.messageId ?? "");
      if (m) page.push(messageView(m, true, full));
    }
    const next = end - seqs.length;
    return { messages: page, next_cursor: next > 0 ? encodeCountsCursor(listing, [next]) : null };
  }

  /**
   * `owner`'s direct and team messages merged newest first, in two passes: the unread ones, then (unless
   * `unread_only`) the read ones. The cursor holds the pass, the place reached in each stream and how many unread
   * messages the first pass has passed (it ends once it has passed as many as the box holds).
   */
  private async inboxPage(
    workspace: string,
    owner: string,
    input: OperationInput<"query_inbox">,
    listing: Listing,
    unread: number,
    full: boolean,
  ): Promise<Omit<Inbox, "unread">> {
    const direct = directStream(owner);
    const [directLength, teamLength] = await Promise.all([
      this.mailbox.length(workspace, direct),
      this.mailbox.length(workspace, TEAM_STREAM),
    ]);
    let [pass, d, t, passed] = [0, directLength, teamLength, 0];
    if (input.cursor !== undefined) {
      [pass, d, t, passed] = countsFrom(input.cursor, "cursor", listing, 4) as [number, number, number, number];
      assertWithinListing(d, directLength, "cursor");
      assertWithinListing(t, teamLength, "cursor");
      assertWithinListing(pass, 1, "cursor");
    }
    const streams = [
      new BoxReader(this.mailbox, workspace, owner, direct, d),
      new BoxReader(this.mailbox, workspace, owner, TEAM_STREAM, t),
    ];
    const page: Message[] = [];
    const shown = new Set<string>();
    let scanned = 0;
    let done = false;
    while (page.length < input.limit && scanned < SCAN_PER_CALL) {
      const firstPassOver = pass === 0 && passed >= unread;
      const heads = firstPassOver ? [] : await Promise.all(streams.map((s) => s.head()));
      const newest = heads.reduce<{ reader: BoxReader; head: Head } | undefined>((best, head, i) => {
        if (!head) return best;
        return !best || head.slot.at > best.head.slot.at ? { reader: streams[i]!, head } : best;
      }, undefined);
      if (!newest) {
        if (pass === 0 && !input.unread_only) {
          pass = 1;
          streams[0]!.restart(directLength);
          streams[1]!.restart(teamLength);
          continue;
        }
        done = true;
        break;
      }
      newest.reader.take();
      scanned++;
      const { message, read } = newest.head;
      if (!message || shown.has(message.id)) continue;
      if (pass === 0 && !read) passed++;
      if ((pass === 0) === read) continue;
      shown.add(message.id);
      page.push(messageView(message, read, full));
    }
    const [dn, tn] = streams.map((s) => s.position) as [number, number];
    return { messages: page, next_cursor: done ? null : encodeCountsCursor(listing, [pass, dn, tn, passed]) };
  }

  async ack(principal: Principal, input: OperationInput<"ack_messages">): Promise<OperationOutput<"ack_messages">> {
    const { workspace, agent } = principal;
    const ids = [...new Set(input.message_ids)];
    const messages = await this.mailbox.messages(workspace, ids);
    const readable = (m: StoredMessage | undefined): m is StoredMessage =>
      m !== undefined && m.posted && (m.to === agent || m.to === TEAM || m.from === agent || principal.role === "admin");
    const visible = ids.filter((id) => readable(messages.get(id)));
    // A message addressed to another (one the caller sent; another's, for an admin) is not in the caller's inbox:
    // it reads it without a mark to leave.
    const addressed = visible.filter((id) => {
      const m = messages.get(id)!;
      return m.to === agent || m.to === TEAM;
    });
    const marked = await this.mailbox.markRead(workspace, agent, addressed, randomUUID());
    return { read: visible, marked: marked.length, not_found: ids.filter((id) => !readable(messages.get(id))) };
  }

  /** The messages to `agent` (its own and the team's) it has not marked read. */
  unread(workspace: string, agent: string): Promise<number> {
    return this.mailbox.unread(workspace, agent);
  }
}

interface Head {
  slot: BoxSlot;
  message: StoredMessage | undefined;
  read: boolean;
}

/**
 * One stream of an inbox read from a place back to its start, a chunk of slots at a time with their messages and
 * the reader's marks; `position` is how many slots are left to take.
 */
class BoxReader {
  private buffer: Head[] = [];
  private fetched: number;
  constructor(
    private readonly mailbox: Mailbox,
    private readonly workspace: string,
    private readonly owner: string,
    private readonly stream: string,
    public position: number,
  ) {
    this.fetched = position;
  }

  restart(position: number): void {
    this.position = position;
    this.fetched = position;
    this.buffer = [];
  }

  async head(): Promise<Head | undefined> {
    if (this.buffer.length === 0 && this.fetched > 0) await this.fill();
    return this.buffer[0];
  }

  take(): void {
    this.buffer.shift();
    this.position--;
  }

  private async fill(): Promise<void> {
    const seqs = descending(this.fetched, Math.min(CHUNK, this.fetched));
    this.fetched -= seqs.length;
    const slots = await this.mailbox.slots(this.workspace, this.stream, seqs);
    const ids = [...slots.values()].map((s) => s.messageId);
    const [messages, read] = await Promise.all([
      this.mailbox.messages(this.workspace, ids),
      this.mailbox.readBy(this.workspace, this.owner, ids),
    ]);
    // A position the stream holds no slot at (only a store damaged by hand) is passed over as a slot of no message.
    this.buffer = seqs.map((seq) => {
      const slot = slots.get(seq) ?? { messageId: "", at: 0 };
      return { slot, message: messages.get(slot.messageId), read: read.has(slot.messageId) };
    });
  }
}

/** The `count` positions below `end`, highest first. */
const descending = (end: number, count: number) => Array.from({ length: count }, (_, i) => end - 1 - i);

function sendResult(m: StoredMessage, replayed: boolean): SendResult {
  return { id: m.id, from: m.from, to: m.to, sent_at: new Date(m.sentAt).toISOString(), replayed };
}

function messageView(m: StoredMessage, read: boolean, full: boolean): Message {
  return {
    id: m.id,
    from: m.from,
    to: m.to,
    subject: m.subject,
    sent_at: new Date(m.sentAt).toISOString(),
    read,
    ...(full ? { body: m.body, memory_ids: m.memoryIds, session_ids: m.sessionIds } : {}),
  };
}
