/**
 * Reads one Telegram update into what the channel should do with it: pass text on, answer
 * "text only", or ignore it (and why). Pure, so every rule here has a unit test.
 *
 * - Voice notes and audio files are 'audio' (transcribed by the channel: media.ts).
 * - Photos and image documents are 'image' (shown to the model when it reads images: photos.ts);
 *   one of an album carries its media_group_id, and the intake answers the album as one message.
 * - Text and captions are text. Stickers and other media without a caption get
 *   the "I can read text only" answer. Service messages (joins, pins, …) are ignored.
 * - Edited messages are ignored: the answer to the original already exists, and answering the
 *   edit would give the user a second reply to one question.
 * - In groups only messages addressed to the bot count: a mention of @bot, a reply to one of
 *   its messages, or a command (`/status`, `/status@bot`; not `/status@otherbot`). The mention
 *   is taken out of the text.
 * - `/start` (Telegram's first message to any bot) is answered like `/help`.
 * - A reply carries the message it answers, as a marked quote (reply-context.ts).
 * - A message in a forum topic carries the topic's thread id (its own session: topics.ts).
 */
import type { Update, Message } from 'telegraf/types';
import type { Sender } from './access.js';
import { quotedMessage, withQuote, type BotIdentity, type QuotedMessage } from './reply-context.js';
import { topicOf } from './topics.js';
import { audioOf, type AudioRef } from './media.js';
import { imageOf } from './photos.js';
import type { ImageRef } from '../../core/message.js';

export type { BotIdentity };

export type Inbound =
  | { kind: 'ignore'; reason: string }
  | { kind: 'text'; sender: Sender; text: string; messageId: number; group: boolean; threadId?: number | undefined }
  | { kind: 'unsupported'; sender: Sender; messageId: number; group: boolean; threadId?: number | undefined }
  | { kind: 'audio'; sender: Sender; audio: AudioRef; caption: string | undefined; messageId: number; group: boolean; threadId?: number | undefined }
  | { kind: 'image'; sender: Sender; image: ImageRef; caption: string | undefined; quote: QuotedMessage | undefined; messageId: number; group: boolean; threadId?: number | undefined; albumId?: string | undefined };

export const TEXT_ONLY_REPLY = 'I can read text only (for now).';

const MEDIA_KEYS = ['sticker', 'voice', 'photo', 'video', 'video_note', 'audio', 'document', 'animation', 'location', 'venue', 'contact', 'poll', 'dice', 'story', 'game'];

/** `albumAddressed`: whether an earlier item of this group album addressed the bot (album-groups.ts). */
export function readUpdate(update: Update, bot: BotIdentity, albumAddressed?: (chatId: string, albumId: string) => boolean): Inbound {
  if ('edited_message' in update) return { kind: 'ignore', reason: 'edited message (ignored by design)' };
  if (!('message' in update) || !update.message) {
    const type = Object.keys(update).find((k) => k !== 'update_id') ?? 'unknown';
    return { kind: 'ignore', reason: `update type ${type} is not handled` };
  }
  const m = update.message as Message & Record<string, any>;
  if (!m.from) return { kind: 'ignore', reason: 'message without a sender' };
  if (m.from.is_bot) return { kind: 'ignore', reason: 'message from a bot' };
  const chatType = m.chat.type;
  const group = chatType === 'group' || chatType === 'supergroup';
  const sender: Sender = {
    userId: String(m.from.id),
    username: m.from.username,
    name: [m.from.first_name, m.from.last_name].filter(Boolean).join(' ') || undefined,
    chatId: String(m.chat.id),
    chatType,
  };
  const raw: string | undefined = typeof m.text === 'string' ? m.text : typeof m.caption === 'string' ? m.caption : undefined;

  const albumId = typeof m.media_group_id === 'string' && m.media_group_id !== '' ? m.media_group_id : undefined;
  if (group && !isAddressed(m, raw ?? '', bot) && !(albumId && albumAddressed?.(sender.chatId, albumId))) {
    return { kind: 'ignore', reason: 'group message not addressed to the bot' };
  }

  // Media with a caption: the caption is the user's words about it.
  const caption = raw === undefined ? undefined : (group ? stripMention(raw, bot.username) : raw.trim()) || undefined;
  const audio = audioOf(m);
  if (audio) {
    return { kind: 'audio', sender, audio, caption, messageId: m.message_id, group, threadId: topicOf(m) };
  }
  const image = imageOf(m);
  if (image) {
    return { kind: 'image', sender, image, caption, quote: quotedMessage(m, bot), messageId: m.message_id, group, threadId: topicOf(m), albumId };
  }
  if (raw === undefined || raw.trim() === '') {
    if (MEDIA_KEYS.some((k) => k in m)) return { kind: 'unsupported', sender, messageId: m.message_id, group, threadId: topicOf(m) };
    return { kind: 'ignore', reason: 'service message' };
  }

  let text = group ? stripMention(raw, bot.username) : raw.trim();
  if (text === '') text = '/help';
  if (/^\/start(@\w+)?(\s|$)/i.test(text)) text = '/help';
  text = withQuote(text, quotedMessage(m, bot));
  return { kind: 'text', sender, text, messageId: m.message_id, group, threadId: topicOf(m) };
}

function isAddressed(m: Message & Record<string, any>, text: string, bot: BotIdentity): boolean {
  if (m.reply_to_message?.from?.id === bot.id) return true;
  const entities: Array<{ type: string; offset: number; length: number; user?: { id: number } }> = m.entities ?? m.caption_entities ?? [];
  const at = `@${bot.username}`.toLowerCase();
  for (const e of entities) {
    if (e.type === 'text_mention' && e.user?.id === bot.id) return true;
    if (e.type === 'mention' && text.slice(e.offset, e.offset + e.length).toLowerCase() === at) return true;
  }
  if (mentionPattern(bot.username).test(text)) return true;
  const cmd = /^\/[A-Za-z0-9_]+(?:@(\w+))?/.exec(text.trim());
  if (cmd) return !cmd[1] || cmd[1].toLowerCase() === bot.username.toLowerCase();
  return false;
}

function mentionPattern(username: string): RegExp {
  return new RegExp(`(^|[^\\w@])@${username.replace(/[^\w]/g, '')}(?!\\w)`, 'i');
}

function stripMention(text: string, username: string): string {
  const re = new RegExp(`(^|[^\\w@])@${username.replace(/[^\w]/g, '')}(?!\\w)[,:]?`, 'gi');
  return text
    .replace(re, '$1')
    .replace(/[ \t]{2,}/g, ' ')
    .trim();
}
