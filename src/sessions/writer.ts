/**
 * The one owner of a turn's writes to its session (`SessionStore.writer`). A turn, a command, a
 * compaction, a reminder: whoever changes a session's messages does it through one of these,
 * so the store's protocol — record → commit → checkpoint — is kept by the store, not by callers:
 *
 *   receive  records a user's message unless the session has it already (received.ts: the one
 *            "already recorded?" rule), counting it in `messagesReceived` once;
 *   record   adds a message in memory only, owed to the log: for words already durable
 *            elsewhere (the user's message is in the inbox journal), so a turn's messages reach
 *            the disk in one write with its answer;
 *   commit   makes everything owed durable: one fsynced line in the session log (wal.ts); the
 *            session file is rewritten in the background (a checkpoint);
 *   append   record + commit;
 *   revise   gives a message of the session its final text (a voice note's transcript, a photo
 *            the model could not see): one still owed is written with it; one already on disk
 *            (a message recovered after a restart) has its file rewritten now;
 *   replace  sets the messages (compaction, forget) and rewrites the file now; a message
 *            dropped is no longer owed, so the next log line cannot bring it back; a
 *            compaction's record (`messagesCompacted`, `lastCompaction`) comes with it; given
 *            the copy the new list was made from, what the session gained since (a /stop's
 *            marker written while a compaction waited for its summary) is kept after it;
 *   clear    /new: no messages and a new conversation id, written now;
 *   setModel /model: the chat's model (undefined: back to LLM_MODEL), written now.
 */
import type { InboundMessage } from '../core/message.js';
import { newConversationId, type CompactionRecord, type Session, type SessionMessage } from './model.js';
import type { Received } from './received.js';

export interface SessionWriter {
  readonly session: Session;
  /** The user's message: found in the session, or recorded now (owed, like `record`). */
  receive(msg: InboundMessage): Received;
  record(message: SessionMessage): void;
  /**
   * Keeps the session log's lines until released: for work that derives from what it logs (a
   * turn's note line and index rows, a reminder's note line) and must be done, or rebuilt from
   * the log after a crash, before the log forgets them.
   */
  hold(): () => void;
  /** Makes what was recorded durable; nothing to do when nothing is owed. */
  commit(): Promise<void>;
  append(message: SessionMessage): Promise<void>;
  revise(message: SessionMessage, content: string): Promise<void>;
  /** `basedOn`: the messages `messages` was made from; a message recorded since stays, after them. */
  replace(messages: SessionMessage[], compaction?: CompactionRecord, basedOn?: readonly SessionMessage[]): Promise<void>;
  clear(): Promise<void>;
  setModel(model: string | undefined): Promise<void>;
}

/**
 * `replace` on the session in memory, for any store: the new list, then what was added since the
 * copy it was made from; a compaction's record. Returns the owed messages that are still there,
 * in the form they now have (a compaction may flag one): one dropped must not come back with the
 * next log line.
 */
export function replaceIn(
  session: Session,
  owed: readonly SessionMessage[],
  messages: SessionMessage[],
  compaction?: CompactionRecord,
  basedOn?: readonly SessionMessage[],
): SessionMessage[] {
  const known = basedOn ? new Set([...basedOn, ...messages].map((m) => m.id)) : undefined;
  const since = known ? session.messages.filter((m) => !known.has(m.id)) : [];
  session.messages = [...messages, ...since];
  if (compaction) {
    session.metadata.messagesCompacted += compaction.removed;
    session.metadata.lastCompaction = compaction;
  }
  const now = new Map(session.messages.map((m) => [m.id, m]));
  return owed.flatMap((m) => now.get(m.id) ?? []);
}

/** `clear` (/new) on the session in memory: no messages, a new conversation. */
export function clearIn(session: Session): void {
  session.messages = [];
  session.metadata.conversationId = newConversationId();
}

/** `setModel` on the session in memory. */
export function setModelIn(session: Session, model: string | undefined): void {
  if (model === undefined) delete session.metadata.model;
  else session.metadata.model = model;
}
