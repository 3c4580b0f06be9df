/**
 * One chat, as every layer names it: the channel it is on and the channel's own id for it (a
 * forum topic's includes its thread: core/group.ts). Its key, `channel:chatId`, is what sessions,
 * memory scopes, reminders, usage rows, the journal and the logs file it under; it is written and
 * read here only, so no one spells the shape again.
 */

export interface Chat {
  channel: string;
  chatId: string;
}

/** `{ channel: 'console', chatId: 'local' }` → `console:local`. Any value with the two fields will do (an InboundMessage). */
export function chatKey(chat: Chat): string {
  return `${chat.channel}:${chat.chatId}`;
}

/**
 * A key read back: the channel is what comes before the first colon, the chat id all the rest
 * (it may hold colons itself: a forum topic's `-100123:7`). Undefined when either part is empty.
 */
export function parseChatKey(key: string): Chat | undefined {
  const at = key.indexOf(':');
  if (at <= 0 || at === key.length - 1) return undefined;
  return { channel: key.slice(0, at), chatId: key.slice(at + 1) };
}

/**
 * What a chat id alone tells of its chat, as its channel reads it: the memory page's stand-in
 * while no name was seen for it. `parent` is a forum topic's group (its chat id on the channel).
 */
export interface ChatShape {
  kind: 'private' | 'group' | 'topic';
  /** The stand-in name: "Private chat", "Group", "Topic 7", "Terminal". */
  stand: string;
  parent?: string | undefined;
}

/** A channel's reading of its chat ids (the page's stand-ins); a channel without one shows `channel chatId`. */
export type ChatShapeReader = (chatId: string) => ChatShape;
