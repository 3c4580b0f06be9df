/**
 * Photos end to end: the real telegraf client, the emulator with the proxy standing in for
 * getFile and the file download, the real openai SDK posting to the fake server, which records
 * what the model was sent.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { startTelegramBot } from '../../helpers/telegram.js';
import { png } from '../../helpers/images.js';
import { imagePlaceholder, imageRefusal, withImageNote } from '../../../src/media/attachments.js';
import type { ImageRef } from '../../../src/core/message.js';

const OWNER = 111;
const sizes = (prefix: string) => ({
  photo: [
    { file_id: `${prefix}_s`, file_unique_id: `u_${prefix}_s`, width: 90, height: 68, file_size: 900 },
    { file_id: `${prefix}_l`, file_unique_id: `u_${prefix}_l`, width: 1280, height: 960, file_size: 90_000 },
    { file_id: `${prefix}_xl`, file_unique_id: `u_${prefix}_xl`, width: 2560, height: 1920, file_size: 400_000 },
  ],
});

/** Every file the daemon wrote under the workspace that may hold conversation text. */
async function workspaceText(dir: string): Promise<string> {
  const out: string[] = [];
  for (const name of await readdir(dir, { recursive: true })) {
    const p = path.join(dir, name);
    if (/\.(json|jsonl|log|md)$/.test(name)) out.push(await readFile(p, 'utf8').catch(() => ''));
  }
  return out.join('\n');
}

test('a photo reaches a vision model as image content with its caption; the session keeps the file id and "[Photo]", never the bytes', async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER), LLM_MODEL: 'gpt-4o' } });
  try {
    const image = png(1280, 960);
    const base64 = image.toString('base64');
    bot.tg.addFile('cat_l', image, 'photos/file_7.png');
    const owner = bot.tg.user({ userId: OWNER });
    await owner.send({ ...sizes('cat'), caption: 'what is this?' });
    const [answer] = await bot.tg.waitForBotMessages(OWNER, 1);
    assert.equal(answer!.text, 'echo: [Photo] what is this?');
    assert.deepEqual(
      bot.tg.callsOf('getFile').map((c) => c.body.file_id),
      ['cat_l'],
      'the largest size within 2048 px, once',
    );

    const request = bot.llm.chatRequests()[0]!.body;
    assert.deepEqual(request.messages.at(-1), {
      role: 'user',
      content: [
        { type: 'text', text: '[Photo] what is this?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${base64}`, detail: 'high' } },
      ],
    });

    const session = await bot.sessionFile(OWNER);
    assert.equal(session.messages[0].content, '[Photo] what is this?');
    assert.deepEqual(session.messages[0].attachment, { kind: 'photo', fileId: 'cat_l' });
    // Nothing of the image is on disk: not in the session, its log, the journal or the notes.
    const written = await workspaceText(bot.workspace);
    assert.ok(written.includes('[Photo] what is this?'), 'the files were read');
    assert.ok(!written.includes(base64.slice(0, 64)) && !written.includes('base64'), 'no image bytes in the workspace');

    // The next turn sends the photo as its placeholder text only.
    await owner.say('and its colour?');
    await bot.tg.waitForBotMessages(OWNER, 2);
    const next = bot.llm.chatRequests()[1]!.body.messages as Array<{ role: string; content: unknown }>;
    assert.equal(next.filter((m) => Array.isArray(m.content)).length, 0, 'no image parts in a later request');
    assert.ok(next.some((m) => m.role === 'user' && m.content === '[Photo] what is this?'));
    assert.equal(bot.tg.callsOf('getFile').length, 1, 'not downloaded again');
  } finally {
    await bot.close();
  }
});

test('a text-only model: one line, no LLM call and no download, the photo kept with its file id and caption', async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER), LLM_MODEL: 'gpt-3.5-turbo' } });
  try {
    const owner = bot.tg.user({ userId: OWNER });
    await owner.send({ ...sizes('dog'), caption: 'my new dog' });
    const [line] = await bot.tg.waitForBotMessages(OWNER, 1);
    assert.equal(
      line!.text,
      "The model I use reads text only, so I can't look at your photo. It is saved in our conversation; describe it in words if you need an answer now.",
    );
    assert.equal(bot.tg.callsOf('getFile').length, 0);
    await owner.say('hello');
    await bot.tg.waitForBotMessages(OWNER, 2);
    const session = await bot.sessionFile(OWNER);
    assert.equal(session.messages[0].content, '[Photo; not shown to the model; Telegram file_id: dog_l] my new dog');
    assert.deepEqual(session.messages[0].attachment, { kind: 'photo', fileId: 'dog_l' });
    assert.equal(bot.llm.chatRequests().length, 1, 'only "hello" reached the model');
    assert.equal(bot.tg.botMessages(OWNER)[1]!.text, 'echo: hello');
    await owner.say('/status full');
    const status = (await bot.tg.waitForBotMessages(OWNER, 3))[2]!.text;
    assert.match(status, /Model: gpt-3\.5-turbo \(summaries: gpt-3\.5-turbo\) · text only/);
  } finally {
    await bot.close();
  }
});

test('image documents: a PNG goes as image/png; HEIC is refused up front; bytes that are no image, or a failed download, get one line without an LLM call or answer from the caption', async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER), LLM_MODEL: 'gpt-4o' } });
  try {
    const owner = bot.tg.user({ userId: OWNER });
    const plan = png(400, 300);
    bot.tg.addFile('doc_png', plan, 'documents/plan.png');
    await owner.send({
      document: { file_id: 'doc_png', file_unique_id: 'u1', file_name: 'plan.png', mime_type: 'image/png', file_size: plan.length },
      caption: 'is this readable?',
    });
    const [first] = await bot.tg.waitForBotMessages(OWNER, 1);
    assert.equal(first!.text, 'echo: [Image: plan.png] is this readable?');
    const parts = bot.llm.chatRequests()[0]!.body.messages.at(-1).content;
    assert.equal(parts[1].image_url.url, `data:image/png;base64,${plan.toString('base64')}`);

    await owner.send({ document: { file_id: 'doc_heic', file_unique_id: 'u2', file_name: 'IMG_1.HEIC', mime_type: 'image/heic', file_size: 2000 } });
    const second = (await bot.tg.waitForBotMessages(OWNER, 2))[1]!;
    assert.equal(
      second.text,
      'I can read JPEG, PNG, GIF and WebP images, and this file is image/heic. It is saved in our conversation; send it as a photo instead (Telegram converts it).',
    );

    // Claims to be a JPEG, is not one: downloaded, measured, refused before any LLM call.
    bot.tg.addFile('doc_fake', Buffer.from('this is not a picture'), 'documents/fake.jpg');
    await owner.send({ document: { file_id: 'doc_fake', file_unique_id: 'u3', file_name: 'fake.jpg', mime_type: 'image/jpeg', file_size: 21 } });
    const third = (await bot.tg.waitForBotMessages(OWNER, 3))[2]!;
    assert.equal(
      third.text,
      "I couldn't look at your image (it is not a JPEG, PNG, GIF or WebP image). It is saved in our conversation; please send it again if you need an answer about it.",
    );

    // Telegram cannot give the file (getFile refused): the caption is still answered, with a note.
    bot.tg.intercept('getFile', (call) =>
      call.body?.file_id === 'gone_l' ? { status: 400, json: { ok: false, error_code: 400, description: 'Bad Request: invalid file_id' } } : undefined,
    );
    await owner.send({ ...sizes('gone'), caption: 'what breed?' });
    const fourth = (await bot.tg.waitForBotMessages(OWNER, 4))[3]!;
    assert.equal(fourth.text, "echo: [Photo] what breed?\n\nℹ️ I couldn't look at your photo (it could not be downloaded), so I answered from your words only.");
    assert.equal(bot.llm.chatRequests().length, 2, 'the PNG and the captioned photo; nothing for HEIC or the fake');
    assert.ok(!Array.isArray(bot.llm.chatRequests()[1]!.body.messages.at(-1).content), 'no image part when none was loaded');

    const session = await bot.sessionFile(OWNER);
    const kept = session.messages.filter((m: { role: string }) => m.role === 'user');
    assert.deepEqual(
      kept.map((m: { content: string; attachment: unknown }) => [m.content, m.attachment]),
      [
        ['[Image: plan.png] is this readable?', { kind: 'document', fileId: 'doc_png' }],
        ['[Image: IMG_1.HEIC; not shown to the model; Telegram file_id: doc_heic]', { kind: 'document', fileId: 'doc_heic' }],
        ['[Image: fake.jpg]', { kind: 'document', fileId: 'doc_fake' }],
        ['[Photo] what breed?', { kind: 'photo', fileId: 'gone_l' }],
      ],
    );
  } finally {
    await bot.close();
  }
});

test('what is refused before any download: text-only model, over 20 MB, formats the model cannot read (image/jpg is a JPEG); the note goes into the placeholder, after a quote', () => {
  const doc = (mimeType: string, fileSize = 1000): ImageRef => ({ kind: 'document', fileId: 'f1', fileName: 'x', mimeType, fileSize });
  assert.equal(imageRefusal(doc('image/jpg'), true), undefined);
  assert.equal(imageRefusal(doc('image/webp'), true), undefined);
  assert.match(imageRefusal(doc('image/tiff'), true)!, /this file is image\/tiff/);
  assert.match(imageRefusal(doc('image/png', 21 * 1024 * 1024), true)!, /^Your image is larger than 20 MB/);
  assert.match(imageRefusal(doc('image/png'), false)!, /^The model I use reads text only/);
  const note = 'not shown to the model; Telegram file_id: f1';
  assert.equal(
    withImageNote(imagePlaceholder(doc('image/png'), 'see'), doc('image/png'), note),
    '[Image: x; not shown to the model; Telegram file_id: f1] see',
  );
  // A quote that itself mentions [Photo] is left alone: the placeholder follows the quote.
  const photo: ImageRef = { kind: 'photo', fileId: 'p' };
  const quoted = '[Quoting a message by you]\n> here is a [Photo] of it\n\n[Photo] this one?';
  assert.equal(withImageNote(quoted, photo, 'n'), '[Quoting a message by you]\n> here is a [Photo] of it\n\n[Photo; n] this one?');
});

test('photos meet the flood limits before anything is decided or downloaded: a text-only model refuses no more than the rate allows; over the rate nothing is fetched', async () => {
  const rate = (n: number) =>
    `That is more than ${n} messages in a minute, so I saved this one without answering it. Please send it again in a minute if you still need an answer.`;
  const textOnly = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER), LLM_MODEL: 'gpt-3.5-turbo', RATE_LIMIT_PER_MINUTE: '2' } });
  try {
    const owner = textOnly.tg.user({ userId: OWNER });
    for (const p of ['a', 'b', 'c', 'd']) await owner.send({ ...sizes(p), caption: `photo ${p}` });
    const msgs = (await textOnly.tg.waitForBotMessages(OWNER, 4)).map((m) => m.text);
    assert.deepEqual(msgs.filter((t) => t.startsWith('The model I use reads text only')).length, 2);
    assert.deepEqual(msgs.filter((t) => t === rate(2)).length, 2, 'the rest get the rate line, not a refusal each');
    const kept = (await textOnly.sessionFile(OWNER)).messages.map((m: { content: string }) => m.content);
    assert.equal(kept.length, 4, 'all four kept');
  } finally {
    await textOnly.close();
  }
  const vision = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER), LLM_MODEL: 'gpt-4o', RATE_LIMIT_PER_MINUTE: '1' } });
  try {
    const owner = vision.tg.user({ userId: OWNER });
    vision.tg.addFile('e_l', png(64, 64), 'photos/e.png');
    vision.tg.addFile('f_l', png(64, 64), 'photos/f.png');
    await owner.send({ ...sizes('e'), caption: 'first' });
    await owner.send({ ...sizes('f'), caption: 'second' });
    const msgs = (await vision.tg.waitForBotMessages(OWNER, 2)).map((m) => m.text);
    assert.deepEqual(msgs.sort(), [rate(1), 'echo: [Photo] first']);
    assert.deepEqual(
      vision.tg.callsOf('getFile').map((c) => c.body.file_id),
      ['e_l'],
      'the photo over the rate is never fetched',
    );
  } finally {
    await vision.close();
  }
});
