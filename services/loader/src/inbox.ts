import { requestCairn } from "./cairn-request.js";

/**
 * Unread messages for the session-start and prompt hooks: the agent's unread messages (`query_inbox` with
 * `unread_only`), one line each — who, when, subject, id — at most five, within a budget of bytes, until the agent
 * marks them read with `ack_messages`. The server answers unread ones newest first and reads at most a bounded
 * number of its records per call, so this costs one request whatever the inbox holds.
 */

/** The lines given at most, and the bytes of the block they make at most (header included). */
export const INBOX_LINES = 5;
export const INBOX_BYTES = 600;
const HEADER = "Unread Cairn messages (times UTC; open with query_inbox detail full, then ack_messages):";
/** The fewest characters of a subject worth a line. */
const SUBJECT_MIN = 12;

export interface UnreadMessage {
  id: string;
  from: string;
  to: string;
  subject: string;
  sent_at: string;
}

export interface Unread {
  /** The newest unread messages the server's first page found. */
  messages: UnreadMessage[];
  /** How many are unread in all. */
  count: number;
}

/** The newest unread messages and their count; throws when Cairn answers otherwise than 200. */
export async function unreadMessages(cairn: URL, token: string, deadline: number): Promise<Unread> {
  const response = await requestCairn(cairn, token, `/v1/messages?unread_only=true&limit=${INBOX_LINES}`, deadline);
  if (!response.ok) throw new Error(`Cairn answered ${response.status} for the inbox`);
  const page = (await response.json()) as { messages: UnreadMessage[]; unread: number };
  return { messages: page.messages.slice(0, INBOX_LINES), count: page.unread };
}

/**
 * The block of lines for these messages, none when there are none. `fits` says whether a block can be given (a hook
 * measures what it prints, JSON and all). Each subject is cut to the same share of what the budget leaves, so the
 * fifth message is named as well as the first; when a share would leave too few words, the oldest are left out.
 */
export function inboxBlock(unread: Unread, fits: (lines: string[]) => boolean = byteBudget(INBOX_BYTES)): string[] {
  const { messages } = unread;
  // The server reads a bounded stretch of the inbox per call: unread messages behind many read ones are counted
  // but not on its first page. Saying how many more there are keeps them from waiting unseen.
  const rest = (shown: number) =>
    unread.count > shown ? [`- and ${unread.count - shown} more unread: query_inbox with unread_only, following next_cursor`] : [];
  if (messages.length === 0) return unread.count > 0 ? [HEADER, ...rest(0)] : [];
  for (let n = Math.min(INBOX_LINES, messages.length); n > 0; n--) {
    const shown = messages.slice(0, n);
    let share = Math.max(...shown.map((m) => subjectOf(m).length));
    while (share >= SUBJECT_MIN) {
      const lines = [HEADER, ...shown.map((m) => lineOf(m, share)), ...rest(n)];
      if (fits(lines)) return lines;
      share = Math.floor(share * 0.9);
    }
  }
  return [];
}

const subjectOf = (m: UnreadMessage) => m.subject.replace(/\s+/g, " ").trim();

/** Who, when, subject (cut to `share` characters), id. */
function lineOf(m: UnreadMessage, share: number): string {
  const subject = subjectOf(m);
  const cut = subject.length > share ? `${subject.slice(0, share - 1).trimEnd()}…` : subject;
  return `- ${m.id} ${m.sent_at.slice(0, 16).replace("T", " ")} ${m.from}${m.to === "team" ? " to team" : ""}: ${cut}`;
}

const byteBudget = (bytes: number) => (lines: string[]) => Buffer.byteLength(lines.join("\n")) <= bytes;
