/**
 * What a Telegram message says about its chat, for the chat names the memory page shows
 * (sessions/names.ts): a private chat is named after the user (first and last name, else
 * @username), a group after its title, a forum topic after the topic's name. Telegram sends a
 * topic's name only inside its "topic created" message, which every message of the topic
 * replies to unless it answers another one: when it is not there the name is left out, and
 * the name seen before is kept (the page says "Topic N" until one is seen).
 */
import type { Message } from 'telegraf/types';
import type { ChatLabel } from '../../core/message.js';

export function chatLabelOf(m: Message & Record<string, any>, threadId: number | undefined): ChatLabel {
  const chat = m.chat as { id: number; type: string; title?: string; first_name?: string; last_name?: string; username?: string };
  if (chat.type === 'private') {
    const from = (m.from ?? chat) as { first_name?: string; last_name?: string; username?: string };
    const name = [from.first_name, from.last_name].filter(Boolean).join(' ') || (from.username ? `@${from.username}` : undefined);
    return { kind: 'private', name };
  }
  if (threadId === undefined) return { kind: 'group', name: chat.title };
  const created = m.reply_to_message?.forum_topic_created ?? m.forum_topic_created;
  const name: unknown = created?.name;
  return { kind: 'topic', name: typeof name === 'string' ? name : undefined, group: { chatId: String(chat.id), name: chat.title } };
}
