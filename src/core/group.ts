/**
 * Groups and their forum topics. A topic is its own conversation (its own session and memory),
 * written `{group}:{topic}` in a chat id — `-100123:7`, key `telegram:-100123:7` — while what
 * belongs to the group as a whole goes by the group: the flood limit, DAILY_TOKEN_BUDGET, and what
 * purge takes with a group. This file is the one place a chat id is read that way (the Telegram
 * channel writes it: channels/telegram/topics.ts).
 */
import { chatKey, parseChatKey } from './chat.js';

/** A chat id read back as the group's own chat id and, for a forum topic, the topic's thread id. */
export interface TopicAddress {
  chatId: string;
  threadId?: number | undefined;
}

const TOPIC = /^(-?\d+):(\d+)$/;

/** `-100123:7` → the group `-100123` and topic 7; any other chat id is its own group. */
export function splitTopic(chatId: string): TopicAddress {
  const m = TOPIC.exec(chatId);
  return m ? { chatId: m[1]!, threadId: Number(m[2]) } : { chatId };
}

/** The key (`channel:chatId`) of the group a chat key belongs to: the key itself unless it is a forum topic's. */
export function groupOf(key: string): string {
  const chat = parseChatKey(key);
  return chat ? chatKey({ channel: chat.channel, chatId: splitTopic(chat.chatId).chatId }) : key;
}

/** True when the key is a forum topic's (it shares limits with the rest of its group). */
export function isTopic(key: string): boolean {
  return groupOf(key) !== key;
}
