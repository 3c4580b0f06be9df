/**
 * Forum topics: in a supergroup with topics, each topic is its own conversation, so its session
 * is `telegram:{chatId}:{threadId}` and everything sent back (replies, typing, files) carries
 * the topic's `message_thread_id`. The "General" topic (no thread id) is the group's own
 * session `telegram:{chatId}`. The session chat id is the one place the topic is written down;
 * whatever only has that id (recovery after a restart, an outbound send) reads it back here.
 */
import type { Message } from 'telegraf/types';
import { splitTopic, type TopicAddress } from '../../core/group.js';
import type { ChatShape } from '../../core/chat.js';

/** Telegram's chat id, and the forum topic when the message came from one. */
export type ChatAddress = TopicAddress;

/** The topic a message belongs to; undefined outside forum topics (and for "General"). */
export function topicOf(m: Message & Record<string, any>): number | undefined {
  // A reply chain in an ordinary group also has a message_thread_id: only real topics count.
  if (m.is_topic_message !== true) return undefined;
  const id: unknown = m.message_thread_id;
  return typeof id === 'number' && Number.isInteger(id) && id > 0 ? id : undefined;
}

/** The session's chat id for a chat and (optional) topic. */
export function sessionChatId(address: ChatAddress): string {
  return address.threadId === undefined ? address.chatId : `${address.chatId}:${address.threadId}`;
}

/** Reads a session chat id back into where Telegram should send (inverse of sessionChatId). */
export function parseSessionChatId(id: string): ChatAddress {
  return splitTopic(id);
}

/** What a session chat id tells of its chat (the memory page's stand-in): a forum topic of its group, a group (negative ids), else a private chat. */
export function chatShape(id: string): ChatShape {
  const at = parseSessionChatId(id);
  if (at.threadId !== undefined) return { kind: 'topic', stand: `Topic ${at.threadId}`, parent: at.chatId };
  return at.chatId.startsWith('-') ? { kind: 'group', stand: 'Group' } : { kind: 'private', stand: 'Private chat' };
}
