/**
 * Reads one Telegram update into what the channel hands on — text, a voice note, an image, or
 * something it cannot read (named) — or ignores it (and why). Pure, so every rule here has a
 * unit test. Nothing here answers the user: the intake does, for every message alike.
 *
 * - Voice notes and audio files are 'audio' (transcribed in the turn: systems/transcription.ts).
 * - Photos and image documents are 'image' (shown to the model when it reads images: photos.ts);
 *   one of an album carries its media_group_id, and the intake answers the album as one message.
 * - Text and captions are text. Stickers and other media without a caption are 'unsupported'
 *   (the intake says what it cannot read). Service messages (joins, pins, …) are ignored.
 * - The sender (sender.ts): a person, or a chat — an anonymous group admin, a member posting as a
 *   channel. Bots and a linked channel's automatic forwards are ignored.
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
import { senderOf } from './sender.js';
import { quotedMessage, withQuote, type BotIdentity, type QuotedMessage } from './reply-context.js';
import { topicOf } from './topics.js';
import { audioOf } from './media.js';
import { imageOf } from './photos.js';
import type { AudioRef, ImageRef } from '../../core/message.js';

export type { BotIdentity };

export type Inbound =
  | { kind: 'ignore'; reason: string }
  | { kind: 'text'; sender: Sender; text: string; messageId: number; group: boolean; threadId?: number | undefined }
  | { kind: 'unsupported'; sender: Sender; what: string; messageId: number; group: boolean; threadId?: number | undefined }
  | { kind: 'audio'; sender: Sender; audio: AudioRef; caption: string | undefined; messageId: number; group: boolean; threadId?: number | undefined }
  | { kind: 'image'; sender: Sender; image: ImageRef; caption: string | undefined; quote: QuotedMessage | undefined; messageId: number; group: boolean; threadId?: number | undefined; albumId?: string | undefined };

/** Media the bot cannot read, as the user is told about them ("… not a sticker"). */
const MEDIA: Record<string, string> = {
  sticker: 'a sticker',
  voice: 'this voice message',
  photo: 'this photo',
  video: 'a video',
  video_note: 'a video message',
  audio: 'this audio file',
  document: 'this kind of file',
  animation: 'a GIF',
  location: 'a location',
  venue: 'a place',
  contact: 'a contact',
  poll: 'a poll',
  dice: 'a dice roll',
  story: 'a story',
  game: 'a game',
};

/** `albumAddressed`: whether an earlier item of this group album addressed the bot (album-groups.ts). */
export function readUpdate(update: Update, bot: BotIdentity, albumAddressed?: (chatId: string, albumId: string) => boolean): Inbound {
  if ('edited_message' in update) return { kind: 'ignore', reason: 'edited message (ignored by design)' };
  if (!('message' in update) || !update.message) {
    const type = Object.keys(update).find((k) => k !== 'update_id') ?? 'unknown';
    return { kind: 'ignore', reason: `update type ${type} is not handled` };
  }
  const m = update.message as Message & Record<string, any>;
  if (m.is_automatic_forward) return { kind: 'ignore', reason: "a linked channel's post forwarded into its discussion group" };
  // A person, an anonymous admin (the group posting as itself) or a member posting as a channel.
  const sender = senderOf(m);
  if (!sender) return { kind: 'ignore', reason: m.from ? 'message from a bot' : 'message without a sender' };
  const chatType = m.chat.type;
  const group = chatType === 'group' || chatType === 'supergroup';
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
    const media = Object.keys(MEDIA).find((k) => k in m);
    if (media) return { kind: 'unsupported', sender, what: MEDIA[media]!, messageId: m.message_id, group, threadId: topicOf(m) };
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
