/**
 * Reads one Telegram update into what the channel hands on — text, a voice note, an image, or
 * something it cannot read (named) — or ignores it (and why). Pure, so every rule here has a
 * unit test. Nothing here answers the user: the intake does, for every message alike.
 *
 * - Voice notes and audio files are 'audio' (transcribed in the turn: features/voice/transcription.ts).
 * - Photos and image documents are 'image' (shown to the model when it reads images: photos.ts);
 *   one of an album carries its media_group_id, and the intake answers the album as one message.
 * - Text is text. Stickers, videos, PDFs and other media it cannot read are 'unsupported', named:
 *   without a caption the intake says what it cannot read; with one the caption is answered,
 *   after a placeholder that tells the model a file it could not read came with it (and the
 *   reply says so: dispatch/turn-run.ts). Service messages (joins, pins, …) are ignored.
 * - The sender (sender.ts): a person, or a chat — an anonymous group admin, a member posting as a
 *   channel. Bots and a linked channel's automatic forwards are ignored.
 * - Edited messages are ignored: the answer to the original already exists, and answering the
 *   edit would give the user a second reply to one question.
 * - In groups only messages addressed to the bot count: a mention of @bot, a reply to one of
 *   its messages, or a command (`/status`, `/status@bot`). The mention is taken out of the text.
 * - A command for another bot (`/new@otherbot`) is ignored in every chat, also as a reply to
 *   this bot or after a mention of it: it is the other bot's to answer.
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
import { parseCommand } from '../../core/command-line.js';

export type { BotIdentity };

export type Inbound =
  | { kind: 'ignore'; reason: string }
  | { kind: 'text'; sender: Sender; text: string; messageId: number; group: boolean; threadId?: number | undefined }
  | {
      kind: 'unsupported';
      sender: Sender;
      what: string;
      label: string;
      caption: string | undefined;
      quote: QuotedMessage | undefined;
      messageId: number;
      group: boolean;
      threadId?: number | undefined;
    }
  | { kind: 'audio'; sender: Sender; audio: AudioRef; caption: string | undefined; messageId: number; group: boolean; threadId?: number | undefined }
  | {
      kind: 'image';
      sender: Sender;
      image: ImageRef;
      caption: string | undefined;
      quote: QuotedMessage | undefined;
      messageId: number;
      group: boolean;
      threadId?: number | undefined;
      albumId?: string | undefined;
    };

/** Media the bot cannot read: as the user is told about them ("… not a sticker"), and as the model sees them beside a caption. */
const MEDIA: Record<string, [what: string, label: string]> = {
  sticker: ['a sticker', 'Sticker'],
  voice: ['this voice message', 'Voice message'],
  photo: ['this photo', 'Photo'],
  video: ['a video', 'Video'],
  video_note: ['a video message', 'Video message'],
  audio: ['this audio file', 'Audio file'],
  document: ['this kind of file', 'File'],
  animation: ['a GIF', 'GIF'],
  location: ['a location', 'Location'],
  venue: ['a place', 'Place'],
  contact: ['a contact', 'Contact'],
  poll: ['a poll', 'Poll'],
  dice: ['a dice roll', 'Dice roll'],
  story: ['a story', 'Story'],
  game: ['a game', 'Game'],
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
  const media = Object.keys(MEDIA).find((k) => k in m);
  if (media) {
    const [what, label] = MEDIA[media]!;
    const name: unknown = m[media]?.file_name;
    const named = typeof name === 'string' && name.trim() ? `${label}: ${name.replace(/\s+/g, ' ').trim().slice(0, 80)}` : label;
    return { kind: 'unsupported', sender, what, label: named, caption, quote: quotedMessage(m, bot), messageId: m.message_id, group, threadId: topicOf(m) };
  }
  if (raw === undefined || raw.trim() === '') return { kind: 'ignore', reason: 'service message' };

  let text = group ? stripMention(raw, bot.username) : raw.trim();
  // A command for another bot is that bot's, however it reached this one (a reply to this bot,
  // a mention of it before the command): neither run here nor answered.
  const forBot = parseCommand(text)?.bot;
  if (forBot && forBot.toLowerCase() !== bot.username.toLowerCase()) return { kind: 'ignore', reason: 'command for another bot' };
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
