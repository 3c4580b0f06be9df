import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Update } from 'telegraf/types';
import { readUpdate, type BotIdentity } from '../../../src/channels/telegram/inbound.js';

const BOT: BotIdentity = { id: 666, username: 'MemBot' };
let seq = 0;

function msg(fields: Record<string, unknown>, chat: Record<string, unknown> = { id: 42, type: 'private' }): Update {
  return {
    update_id: ++seq,
    message: { message_id: seq, date: 0, chat, from: { id: 42, is_bot: false, first_name: 'Ann', last_name: 'Lee', username: 'ann' }, ...fields },
  } as unknown as Update;
}

const group = { id: -100123, type: 'supergroup', title: 'Team' };

test('a private text message is text, with the sender and session chat id', () => {
  const r = readUpdate(msg({ text: '  hello  ' }), BOT);
  assert.equal(r.kind, 'text');
  if (r.kind !== 'text') return;
  assert.equal(r.text, 'hello');
  assert.deepEqual(r.sender, { userId: '42', username: 'ann', name: 'Ann Lee', chatId: '42', chatType: 'private' });
});

test('a caption is text; a sticker or photo without caption is "unsupported"; voice and audio are "audio"', () => {
  const photo = readUpdate(msg({ photo: [{ file_id: 'x' }], caption: 'what is this?' }), BOT);
  assert.equal(photo.kind === 'text' && photo.text, 'what is this?');
  const voice = readUpdate(msg({ voice: { file_id: 'v', duration: 3, mime_type: 'audio/ogg' } }), BOT);
  assert.deepEqual(voice.kind === 'audio' && voice.audio, { kind: 'voice', fileId: 'v', fileSize: undefined, duration: 3, mimeType: 'audio/ogg', fileName: undefined });
  const song = readUpdate(msg({ audio: { file_id: 'a', file_name: 'song.mp3' }, caption: 'lyrics?' }), BOT);
  assert.equal(song.kind === 'audio' && `${song.audio.kind} ${song.audio.fileName} ${song.caption}`, 'audio song.mp3 lyrics?');
  for (const media of [{ sticker: { file_id: 's' } }, { video_note: { file_id: 'v' } }, { photo: [{ file_id: 'p' }] }]) {
    assert.equal(readUpdate(msg(media), BOT).kind, 'unsupported', JSON.stringify(media));
  }
  assert.equal(readUpdate(msg({ new_chat_members: [] }), BOT).kind, 'ignore', 'service messages get no answer');
});

test('edited messages and other update types are ignored', () => {
  const edited = { update_id: 999, edited_message: { message_id: 1, date: 0, chat: { id: 42, type: 'private' }, text: 'fixed typo' } } as unknown as Update;
  const r = readUpdate(edited, BOT);
  assert.equal(r.kind, 'ignore');
  assert.match((r as { reason: string }).reason, /edited/);
  assert.equal(readUpdate({ update_id: 1000, callback_query: {} } as unknown as Update, BOT).kind, 'ignore');
  assert.equal(readUpdate(msg({ text: 'hi', from: { id: 7, is_bot: true, first_name: 'Other' } }), BOT).kind, 'ignore', 'bots are not answered');
});

test('/start is answered like /help', () => {
  for (const t of ['/start', '/start@MemBot', '/start deep-link-payload']) {
    const r = readUpdate(msg({ text: t }), BOT);
    assert.equal(r.kind === 'text' && r.text, '/help', t);
  }
  const other = readUpdate(msg({ text: '/status' }), BOT);
  assert.equal(other.kind === 'text' && other.text, '/status');
});

test('in a group only messages addressed to the bot count, and the mention is taken out', () => {
  assert.equal(readUpdate(msg({ text: 'just chatting' }, group), BOT).kind, 'ignore');
  assert.equal(readUpdate(msg({ text: 'mail me at x@MemBotnet.org' }, group), BOT).kind, 'ignore', 'not a mention of @MemBot');
  assert.equal(readUpdate(msg({ sticker: { file_id: 's' } }, group), BOT).kind, 'ignore', 'stickers in a group are not answered');

  const mention = readUpdate(msg({ text: '@membot, what time is it?' }, group), BOT);
  assert.equal(mention.kind, 'text');
  assert.equal(mention.kind === 'text' && mention.text, 'what time is it?');
  assert.equal(mention.kind === 'text' && mention.sender.chatId, String(group.id), 'one session per group');

  const reply = readUpdate(msg({ text: 'and tomorrow?', reply_to_message: { message_id: 5, from: { id: BOT.id, is_bot: true } } }, group), BOT);
  assert.equal(reply.kind === 'text' && reply.text, 'and tomorrow?');

  const entity = readUpdate(msg({ text: 'hey you', entities: [{ type: 'text_mention', offset: 4, length: 3, user: { id: BOT.id } }] }, group), BOT);
  assert.equal(entity.kind, 'text');

  assert.equal(readUpdate(msg({ text: '/status' }, group), BOT).kind, 'text');
  assert.equal(readUpdate(msg({ text: '/status@MemBot' }, group), BOT).kind, 'text');
  assert.equal(readUpdate(msg({ text: '/status@OtherBot' }, group), BOT).kind, 'ignore', 'a command for another bot');

  const stickerReply = readUpdate(msg({ sticker: { file_id: 's' }, reply_to_message: { message_id: 5, from: { id: BOT.id, is_bot: true } } }, group), BOT);
  assert.equal(stickerReply.kind, 'unsupported');
});
