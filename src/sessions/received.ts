/**
 * A user's message as the session keeps it, and the one rule for "already recorded?": a message
 * can reach the session twice — recovered from the journal after a kill, or redelivered by a
 * channel — and must be recorded (and counted in `messagesReceived`) once, and answered once.
 * The session writer's `receive` is the only caller that records a user's message.
 */
import type { InboundMessage } from '../core/message.js';
import { storedAttachment } from '../media/attachments.js';
import { makeMessage, type Session, type SessionMessage } from './model.js';

/**
 * The session's copy of a message: the newest user message with its source id and its text,
 * or with its source id and its file (a voice note's text becomes its transcript, a photo the
 * model could not see gets a note: the file id is what stays).
 */
export function findRecorded(messages: SessionMessage[], msg: InboundMessage): SessionMessage | undefined {
  const file = (msg.audio ?? msg.image)?.fileId;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'user' || m.sourceId === undefined || m.sourceId !== msg.messageId) continue;
    if (m.content === msg.text || (file !== undefined && m.attachment?.fileId === file)) return m;
  }
  return undefined;
}

/** True when an assistant answer (not a tool call) follows `user` in the session. */
export function answered(messages: SessionMessage[], user: SessionMessage): boolean {
  const i = messages.indexOf(user);
  return messages.slice(i + 1).some((m) => m.role === 'assistant' && !(m.toolCalls && m.toolCalls.length > 0));
}

/**
 * The answer that follows `user` in the session (not a tool call, a reminder or a /stop's
 * marker): what a run that died before sending it had saved.
 */
export function answerOf(messages: SessionMessage[], user: SessionMessage): SessionMessage | undefined {
  const i = messages.indexOf(user);
  for (const m of messages.slice(i + 1)) {
    if (m.role === 'user') return undefined;
    if (m.role === 'assistant' && !(m.toolCalls && m.toolCalls.length > 0) && !m.reminder) return m.stopped ? undefined : m;
  }
  return undefined;
}

/**
 * True when a later user message follows `user` in the session: the chat moved on without
 * answering it (it was given up after restarts, skipped by /stop, refused by a limit — and the
 * user was told). A turn's own message is always the session's last user message; a copy of
 * `user` handled now (a channel sending it again after a kill, journaled a second time) would
 * break that: the model would answer the later message, and the exchange would pair this
 * question with that answer — a note line and index rows no reply matches.
 */
export function passed(messages: SessionMessage[], user: SessionMessage): boolean {
  const i = messages.indexOf(user);
  return messages.slice(i + 1).some((m) => m.role === 'user');
}

/** The session message for an inbound one; its time is when the channel received it. */
export function userMessageOf(msg: InboundMessage): SessionMessage {
  return makeMessage('user', msg.text, {
    timestamp: msg.receivedAt.toISOString(),
    ...(msg.messageId ? { sourceId: msg.messageId } : {}),
    ...(msg.userName ? { senderName: msg.userName } : {}),
    ...(msg.image ? { attachment: storedAttachment(msg.image) } : {}),
    ...(msg.audio ? { attachment: storedAttachment(msg.audio) } : {}),
    ...(msg.images ? { attachments: msg.images.map(storedAttachment) } : {}),
  });
}

/** What `SessionWriter.receive` found or did. */
export interface Received {
  /** The session's copy of the message (found, or recorded now). */
  message: SessionMessage;
  /** Recorded now (owed to the log until the next commit); false: the session had it already. */
  fresh: boolean;
  /** An answer to it is in the session already: it must not be answered again. */
  answered: boolean;
  /** A later user message follows it (`passed`): the chat moved on; it is not answered now either. */
  passed: boolean;
}

/** `SessionWriter.receive` for any store: found in the session, or recorded (through `record`) and counted once. */
export function receiveInto(session: Session, msg: InboundMessage, record: (m: SessionMessage) => void): Received {
  const found = findRecorded(session.messages, msg);
  if (found) return { message: found, fresh: false, answered: answered(session.messages, found), passed: passed(session.messages, found) };
  const message = userMessageOf(msg);
  session.metadata.messagesReceived++;
  record(message);
  return { message, fresh: true, answered: false, passed: false };
}
