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

test('media it cannot read is "unsupported", named, with its caption if any; voice and audio are "audio"', () => {
  const video = readUpdate(msg({ video: { file_id: 'x' }, caption: ' what is this? ' }), BOT);
  assert.deepEqual(video.kind === 'unsupported' && [video.what, video.label, video.caption], ['a video', 'Video', 'what is this?']);
  const pdf = readUpdate(msg({ document: { file_id: 'p', file_name: 'q3\nreport.pdf', mime_type: 'application/pdf' }, caption: 'read this' }), BOT);
  assert.deepEqual(pdf.kind === 'unsupported' && [pdf.what, pdf.label, pdf.caption], ['this kind of file', 'File: q3 report.pdf', 'read this']);
  const voice = readUpdate(msg({ voice: { file_id: 'v', duration: 3, mime_type: 'audio/ogg' } }), BOT);
  assert.deepEqual(voice.kind === 'audio' && voice.audio, {
    kind: 'voice',
    fileId: 'v',
    fileSize: undefined,
    duration: 3,
    mimeType: 'audio/ogg',
    fileName: undefined,
  });
  const song = readUpdate(msg({ audio: { file_id: 'a', file_name: 'song.mp3' }, caption: 'lyrics?' }), BOT);
  assert.equal(song.kind === 'audio' && `${song.audio.kind} ${song.audio.fileName} ${song.caption}`, 'audio song.mp3 lyrics?');
  for (const media of [{ sticker: { file_id: 's' } }, { video_note: { file_id: 'v' } }]) {
    assert.equal(readUpdate(msg(media), BOT).kind, 'unsupported', JSON.stringify(media));
  }
  assert.equal(readUpdate(msg({ new_chat_members: [] }), BOT).kind, 'ignore', 'service messages get no answer');
});

test('a photo is "image": the largest size within 2048 px and 10 MB, its caption and quote; image documents too, other documents are not', () => {
  const sizes = [
    { file_id: 's', width: 90, height: 67, file_size: 1_000 },
    { file_id: 'l', width: 1280, height: 960, file_size: 150_000 },
    { file_id: 'xl', width: 2560, height: 1920, file_size: 600_000 },
    { file_id: 'm', width: 320, height: 240, file_size: 20_000 },
  ];
  const photo = readUpdate(
    msg({
      photo: sizes,
      caption: ' what is this? ',
      reply_to_message: { message_id: 1, date: 0, chat: { id: 42, type: 'private' }, from: { id: 42, is_bot: false, first_name: 'Ann' }, text: 'my garden' },
    }),
    BOT,
  );
  assert.equal(photo.kind, 'image');
  if (photo.kind !== 'image') return;
  assert.deepEqual(photo.image, { kind: 'photo', fileId: 'l', fileSize: 150_000, width: 1280, height: 960, mimeType: 'image/jpeg' });
  assert.equal(photo.caption, 'what is this?');
  assert.equal(photo.quote?.text, 'my garden');
  const bare = readUpdate(msg({ photo: sizes.slice(0, 1) }), BOT);
  assert.equal(bare.kind === 'image' && bare.caption, undefined, 'a photo without a caption is still an image');
  const heavy = readUpdate(
    msg({
      photo: [
        { file_id: 'a', width: 100, height: 100, file_size: 11 * 1024 * 1024 },
        { file_id: 'b', width: 50, height: 50 },
      ],
    }),
    BOT,
  );
  assert.equal(heavy.kind === 'image' && heavy.image.fileId, 'b', 'over 10 MB is passed over');
  const doc = readUpdate(msg({ document: { file_id: 'd', file_name: 'plan.PNG', mime_type: 'Image/PNG', file_size: 5000 } }), BOT);
  assert.deepEqual(doc.kind === 'image' && doc.image, { kind: 'document', fileId: 'd', fileSize: 5000, mimeType: 'image/png', fileName: 'plan.PNG' });
  assert.equal(readUpdate(msg({ document: { file_id: 'p', mime_type: 'application/pdf' } }), BOT).kind, 'unsupported');
  const inGroup = readUpdate(msg({ photo: sizes, caption: '@MemBot what is it?', caption_entities: [{ type: 'mention', offset: 0, length: 7 }] }, group), BOT);
  assert.equal(inGroup.kind === 'image' && inGroup.caption, 'what is it?');
  assert.equal(readUpdate(msg({ photo: sizes, caption: 'not for the bot' }, group), BOT).kind, 'ignore');
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

test('an album item carries its media_group_id; in a group a further item counts as addressed only when its album already addressed the bot', () => {
  const sizes = [{ file_id: 'p', file_unique_id: 'u', width: 800, height: 600 }];
  const item = readUpdate(msg({ photo: sizes, media_group_id: 'g1', caption: 'look' }), BOT);
  assert.equal(item.kind === 'image' && item.albumId, 'g1');
  assert.equal((readUpdate(msg({ photo: sizes }), BOT) as { albumId?: string }).albumId, undefined, 'a photo alone has none');

  const addressed = new Set(['-100123:g2']);
  const known = (chat: string, album: string) => addressed.has(`${chat}:${album}`);
  assert.equal(readUpdate(msg({ photo: sizes, media_group_id: 'g2' }, group), BOT).kind, 'ignore', 'without the album memory: not addressed');
  const later = readUpdate(msg({ photo: sizes, media_group_id: 'g2' }, group), BOT, known);
  assert.equal(later.kind === 'image' && later.albumId, 'g2');
  assert.equal(readUpdate(msg({ photo: sizes, media_group_id: 'g3' }, group), BOT, known).kind, 'ignore', 'another album of the group');
  assert.equal(
    readUpdate(msg({ text: 'chatter', media_group_id: 'g2' }, { id: -100999, type: 'group' }), BOT, known).kind,
    'ignore',
    'the same album id in another group',
  );
});

test('a command for another bot is ignored: alone, as a reply to this bot, after a mention of this bot, in a private chat', () => {
  const fromBot = { message_id: 5, date: 0, chat: group, from: { id: BOT.id, is_bot: true, first_name: 'MemBot' }, text: 'hello' };
  const cases: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
    ['alone in a group', { text: '/new@OtherBot' }, group],
    ['as a reply to this bot', { text: '/new@OtherBot', reply_to_message: fromBot }, group],
    ['after a mention of this bot', { text: '@MemBot /status@OtherBot', entities: [{ type: 'mention', offset: 0, length: 7 }] }, group],
    ['in a private chat', { text: '/forget@OtherBot my address' }, { id: 42, type: 'private' }],
    ['/start for another bot', { text: '/start@OtherBot' }, { id: 42, type: 'private' }],
  ];
  for (const [what, fields, chat] of cases) {
    const r = readUpdate(msg(fields, chat), BOT);
    assert.equal(r.kind, 'ignore', what);
  }
  // Its own name, in any case, is still its own command.
  const own = readUpdate(msg({ text: '/new@membot', reply_to_message: fromBot }, group), BOT);
  assert.equal(own.kind === 'text' && own.text, '/new@membot');
});
