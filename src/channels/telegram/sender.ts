/**
 * Who sent a message, as access control and roles see it (access.ts, roles.ts).
 *
 * Usually a person: `from`. A message can also be sent on behalf of a chat (`sender_chat`); its
 * `from` is then one of Telegram's stand-in accounts, shared by everyone, so the sender is that
 * chat and its id stands for the user id:
 * - the group itself: one of its anonymous admins (only an admin can post as the group; which one
 *   Telegram does not say — `author_signature` carries their custom title, if any);
 * - a channel: a member posting as their channel. A linked channel's posts that Telegram forwards
 *   into its discussion group (`is_automatic_forward`) are the channel's broadcast, not someone
 *   talking to the bot: inbound.ts ignores them before they get here.
 * Null for a bot, or a message that names no sender at all.
 */
import type { Message } from 'telegraf/types';
import type { Sender } from './access.js';

interface ChatRef {
  id: number;
  type: string;
  title?: string;
  username?: string;
}

export function senderOf(m: Message & Record<string, any>): Sender | null {
  const chatId = String(m.chat.id);
  const chatType = m.chat.type;
  const as = m.sender_chat as ChatRef | undefined;
  if (as && String(as.id) === chatId) {
    const signature = typeof m.author_signature === 'string' && m.author_signature.trim() ? m.author_signature.trim() : undefined;
    return { userId: chatId, name: signature ?? 'Anonymous admin', chatId, chatType, asChat: 'group' };
  }
  if (as?.type === 'channel') return { userId: String(as.id), username: as.username, name: as.title, chatId, chatType, asChat: 'channel' };
  if (!m.from || m.from.is_bot) return null;
  return {
    userId: String(m.from.id),
    username: m.from.username,
    name: [m.from.first_name, m.from.last_name].filter(Boolean).join(' ') || undefined,
    chatId,
    chatType,
  };
}
