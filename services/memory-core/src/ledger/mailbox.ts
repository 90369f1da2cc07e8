import { createHash, randomBytes } from "node:crypto";
import type { Metadata } from "../store/chroma-store.js";
import { auditAppend } from "./audit-log.js";
import { MAIL_PREFIX, type Ledger } from "./ledger.js";
import type { AppendRequest, Sequences } from "./sequences.js";

/**
 * The mailbox: messages between the agents of a workspace, kept in the ledger's `ledger-mail` collection and found
 * by id, never by a filter (which scans a collection on this Chroma).
 *
 *   mail:<message id>                  the message: sender, recipient, subject, body, references, content digest
 *   mail:read:<agent>:<message id>     the agent has read the message (the first mark of an id stays: insert-if-absent)
 *   seq:mail:to:<agent>:<n>            the agent's direct messages, oldest first (sequences.ts)
 *   seq:mail:team:<n>                  the workspace's team messages
 *   seq:mail:from:<agent>:<n>          what the agent sent
 *   seq:mail:read:<agent>:<n>          one slot per message the agent marked read, in its inbox
 *
 * An agent's inbox is its direct stream and the team stream merged newest first, read from their ends a few slots
 * at a time; its unread count is what the three lengths say (direct + team - marked), found from the sequences'
 * length hints without reading any message. A team message is marked read for its sender as it is sent.
 */

export const TEAM = "team";

/** A message as stored. */
export interface StoredMessage {
  id: string;
  from: string;
  to: string;
  subject: string;
  body: string;
  memoryIds: string[];
  sessionIds: string[];
  /** A digest of what was sent (recipient, subject, body, references): what a replay with the same key must match. */
  digest: string;
  sentAt: number;
  writeId: string;
  /** Its slots are appended: it is in its recipients' inboxes and its sender's sent box. */
  posted: boolean;
}

export type NewMessage = Omit<StoredMessage, "id" | "digest" | "sentAt" | "writeId" | "posted">;

/** A slot of an inbox or a sent box: the message it names and when it was appended. */
export interface BoxSlot {
  messageId: string;
  at: number;
}

const messageRecordId = (id: string) => `${MAIL_PREFIX}${id}`;
const readMarkId = (reader: string, id: string) => `${MAIL_PREFIX}read:${reader}:${id}`;
export const directStream = (agent: string) => `${MAIL_PREFIX}to:${agent}`;
export const TEAM_STREAM = `${MAIL_PREFIX}team`;
export const sentStream = (agent: string) => `${MAIL_PREFIX}from:${agent}`;
const readStream = (agent: string) => `${MAIL_PREFIX}read:${agent}`;
/** The stream a message to `to` is appended to. */
export const inboxStreamOf = (to: string) => (to === TEAM ? TEAM_STREAM : directStream(to));

/** The id a message sent with an idempotency key has, whatever its content: a retry finds it. */
export const keyedMessageId = (from: string, key: string) =>
  `m_${createHash("sha256").update(`${from}\u0000${key}`, "utf8").digest("hex").slice(0, 32)}`;
export const newMessageId = () => `m_${randomBytes(16).toString("hex")}`;

export function messageDigest(m: Pick<NewMessage, "to" | "subject" | "body" | "memoryIds" | "sessionIds">): string {
  return createHash("sha256")
    .update(JSON.stringify([m.to, m.subject, m.body, [...m.memoryIds].sort(), [...m.sessionIds].sort()]), "utf8")
    .digest("hex");
}

export class Mailbox {
  constructor(
    private readonly ledger: Ledger,
    private readonly sequences: Sequences,
    private readonly now: () => number = Date.now,
  ) {}

  /** The messages of these ids that exist. */
  async messages(workspace: string, ids: readonly string[]): Promise<Map<string, StoredMessage>> {
    const found = await this.ledger.get(workspace, [...new Set(ids)].map(messageRecordId));
    return new Map(found.map((r) => [r.id.slice(MAIL_PREFIX.length), messageOf(r.id.slice(MAIL_PREFIX.length), r.metadata)]));
  }

  /**
   * Stores the message under `id` unless a message holds that id already, and answers the one stored: this
   * write's (its `writeId`) or the earlier one.
   */
  async store(workspace: string, id: string, message: NewMessage, writeId: string): Promise<StoredMessage> {
    const metadata: Metadata = {
      from: message.from,
      to: message.to,
      subject: message.subject,
      body: message.body,
      memory_ids: message.memoryIds.join(","),
      session_ids: JSON.stringify(message.sessionIds),
      digest: messageDigest(message),
      sent_at: this.now(),
      write_id: writeId,
      posted: false,
    };
    await this.ledger.insertIfAbsent(workspace, [{ id: messageRecordId(id), metadata }]);
    const stored = (await this.messages(workspace, [id])).get(id);
    return stored ?? messageOf(id, metadata);
  }

  /**
   * Appends the message to its recipient's stream and its sender's, with the audit entry of its sending (and,
   * for a team message, its sender's read mark), then marks it posted.
   */
  async post(workspace: string, message: StoredMessage): Promise<void> {
    const requests: AppendRequest[] = [
      { stream: inboxStreamOf(message.to), payload: { message_id: message.id } },
      { stream: sentStream(message.from), payload: { message_id: message.id } },
      auditAppend({ action: "send_message", actor: message.from, messageIds: [message.id], to: message.to }),
    ];
    if (message.to === TEAM) {
      const marked = await this.mark(workspace, message.from, [message.id], message.writeId);
      if (marked.length > 0) requests.push({ stream: readStream(message.from), payload: { message_id: message.id } });
    }
    await this.sequences.appendAcross(workspace, requests, message.writeId);
    await this.ledger.update(workspace, [{ id: messageRecordId(message.id), metadata: { ...recordOf(message), posted: true } }]);
  }

  /** Which of these messages `reader` has marked read. */
  async readBy(workspace: string, reader: string, ids: readonly string[]): Promise<Set<string>> {
    const present = await this.ledger.present(
      workspace,
      ids.map((id) => readMarkId(reader, id)),
    );
    return new Set(ids.filter((id) => present.has(readMarkId(reader, id))));
  }

  /**
   * Marks these messages of `reader`'s inbox read, with one slot each in its read stream and one audit entry for
   * those this call marked; answers those (the others were marked before).
   */
  async markRead(workspace: string, reader: string, ids: readonly string[], writeId: string): Promise<string[]> {
    const marked = await this.mark(workspace, reader, ids, writeId);
    if (marked.length === 0) return marked;
    await this.sequences.appendAcross(
      workspace,
      [
        ...marked.map((id) => ({ stream: readStream(reader), payload: { message_id: id } })),
        auditAppend({ action: "ack_messages", actor: reader, messageIds: marked }),
      ],
      writeId,
    );
    return marked;
  }

  /** Leaves read marks; answers the ids whose mark is this write's. */
  private async mark(workspace: string, reader: string, ids: readonly string[], writeId: string): Promise<string[]> {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return [];
    await this.ledger.insertIfAbsent(
      workspace,
      unique.map((id) => ({ id: readMarkId(reader, id), metadata: { write_id: writeId } })),
    );
    const won = new Set(
      (
        await this.ledger.get(
          workspace,
          unique.map((id) => readMarkId(reader, id)),
        )
      )
        .filter((r) => r.metadata.write_id === writeId)
        .map((r) => r.id),
    );
    return unique.filter((id) => won.has(readMarkId(reader, id)));
  }

  /**
   * Stores messages from a backup under their ids, as they were sent, unless a message holds the id already, and
   * posts those this call stored one at a time, oldest first: each takes its slots after the ones before it, and
   * with a later time, so an inbox merges its direct and team streams in the order they were sent. Answers those.
   */
  async restore(workspace: string, messages: readonly StoredMessage[], writeId: string): Promise<StoredMessage[]> {
    if (messages.length === 0) return [];
    await this.ledger.insertIfAbsent(
      workspace,
      messages.map((m) => ({ id: messageRecordId(m.id), metadata: recordOf({ ...m, writeId, posted: false }) })),
    );
    const stored = await this.messages(
      workspace,
      messages.map((m) => m.id),
    );
    const ours = [...stored.values()].filter((m) => m.writeId === writeId).sort((a, b) => a.sentAt - b.sentAt || (a.id < b.id ? -1 : 1));
    for (const m of ours) await this.post(workspace, m);
    return ours;
  }

  /**
   * Read marks from a backup left again, each with its slot in its reader's read stream (so unread counts add up),
   * without an audit entry: they record no new reading. Answers how many this call left.
   */
  async restoreReadMarks(workspace: string, marks: ReadonlyArray<{ reader: string; messageId: string }>, writeId: string): Promise<number> {
    const byReader = new Map<string, string[]>();
    for (const { reader, messageId } of marks) byReader.set(reader, [...(byReader.get(reader) ?? []), messageId]);
    let left = 0;
    for (const [reader, ids] of byReader) {
      const marked = await this.mark(workspace, reader, ids, writeId);
      if (marked.length === 0) continue;
      await this.sequences.appendAcross(
        workspace,
        marked.map((id) => ({ stream: readStream(reader), payload: { message_id: id } })),
        writeId,
      );
      left += marked.length;
    }
    return left;
  }

  /** How many messages to `reader` (its own and the team's) it has not marked read: three stream lengths. */
  async unread(workspace: string, reader: string): Promise<number> {
    const [direct, team, read] = await Promise.all([
      this.sequences.length(workspace, directStream(reader)),
      this.sequences.length(workspace, TEAM_STREAM),
      this.sequences.length(workspace, readStream(reader)),
    ]);
    return Math.max(0, direct + team - read);
  }

  async length(workspace: string, stream: string): Promise<number> {
    return this.sequences.length(workspace, stream);
  }

  /** The slots of `stream` at these positions that exist, by position. */
  async slots(workspace: string, stream: string, seqs: readonly number[]): Promise<Map<number, BoxSlot>> {
    const found = await this.sequences.read(workspace, stream, seqs);
    return new Map([...found].map(([seq, slot]) => [seq, { messageId: String(slot.message_id), at: Number(slot.recorded_at) }]));
  }
}

/** An entry of `ledger-mail` as a backup holds it: a message, or an agent's read mark of one. */
export type MailEntry = { kind: "message"; message: StoredMessage } | { kind: "read"; reader: string; messageId: string };

/** What an entry of `ledger-mail` is: a message, a read mark, or (undefined) a slot of one of its streams. */
export function mailEntryOf(id: string, fields: Metadata): MailEntry | undefined {
  if (!id.startsWith(MAIL_PREFIX)) return undefined;
  const rest = id.slice(MAIL_PREFIX.length);
  if (!rest.startsWith("read:")) return { kind: "message", message: messageOf(rest, fields) };
  // Agents' names hold no `:`, message ids none either: the last one parts them.
  const at = rest.lastIndexOf(":");
  return { kind: "read", reader: rest.slice("read:".length, at), messageId: rest.slice(at + 1) };
}

function recordOf(m: StoredMessage): Metadata {
  return {
    from: m.from,
    to: m.to,
    subject: m.subject,
    body: m.body,
    memory_ids: m.memoryIds.join(","),
    session_ids: JSON.stringify(m.sessionIds),
    digest: m.digest,
    sent_at: m.sentAt,
    write_id: m.writeId,
    posted: m.posted,
  };
}

function messageOf(id: string, f: Metadata): StoredMessage {
  let sessionIds: string[] = [];
  try {
    const parsed: unknown = JSON.parse(String(f.session_ids ?? "[]"));
    if (Array.isArray(parsed)) sessionIds = parsed.map(String);
  } catch {
    sessionIds = [];
  }
  return {
    id,
    from: String(f.from),
    to: String(f.to),
    subject: String(f.subject),
    body: String(f.body),
    memoryIds: String(f.memory_ids ?? "")
      .split(",")
      .filter(Boolean),
    sessionIds,
    digest: String(f.digest),
    sentAt: Number(f.sent_at),
    writeId: String(f.write_id),
    posted: f.posted === true,
  };
}
