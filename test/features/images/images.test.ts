/**
 * The Images system (15) in the real daemon with a channel of the tests' own: the channel's
 * downloader is registered as Telegram's is, the fake LLM records what the model was sent.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { FileInbox } from '../../../src/queue/file-inbox.js';
import { createTurn } from '../../../src/turn/turn.js';
import type { InboundMessage } from '../../../src/core/message.js';
import { silentLogger } from '../../../src/core/log.js';
import { imagePart } from '../../../src/llm/vision.js';
import { readImageInfo } from '../../../src/media/image-info.js';
import type { Download } from '../../../src/media/attachments.js';
import { startTestBot, type TestBot } from '../../helpers/app.js';
import { lastUserText, text, type Responder } from '../../helpers/fake-llm.js';
import { png } from '../../helpers/images.js';

function photoMessage(chatId: string, text: string, fileId: string, messageId: string): InboundMessage {
  return {
    channel: 'test',
    chatId,
    userId: `u-${chatId}`,
    userName: 'Tester',
    text,
    messageId,
    receivedAt: new Date('2026-11-20T10:00:00Z'),
    image: { kind: 'photo', fileId, width: 300, height: 200 },
  };
}

/** The tests' channel downloader: files by id, each download counted. */
function serveFiles(bot: TestBot, files: Record<string, Buffer>): string[] {
  const fetched: string[] = [];
  bot.app.parts.media.register('test', async (fileId): Promise<Download> => {
    fetched.push(fileId);
    const bytes = files[fileId];
    return bytes ? { ok: true, bytes, filePath: `photos/${fileId}.png` } : { ok: false, reason: 'failed', detail: 'getFile 400 Bad Request: invalid file_id' };
  });
  return fetched;
}

const imageParts = (bot: TestBot) =>
  bot.llm
    .chatRequests()
    .map((r) =>
      (r.body.messages as Array<{ content: unknown }>).flatMap((m) =>
        Array.isArray(m.content) ? m.content.filter((p: { type: string }) => p.type === 'image_url') : [],
      ),
    );

test('after a restart the journaled photo is downloaded again by its file id and answered with the image; one that cannot be is answered with one line', async () => {
  const image = png(300, 200);
  const bot = await startTestBot({
    env: { LLM_MODEL: 'gpt-4o' },
    prepare: async (ws) => {
      const earlier = new FileInbox(path.join(ws, 'inbox.jsonl'));
      await earlier.accept(photoMessage('1', '[Photo] before the crash', 'kept_file', '11')).durable;
      await earlier.accept(photoMessage('2', '[Photo]', 'expired_file', '21')).durable;
      await earlier.shutdown();
    },
  });
  try {
    const fetched = serveFiles(bot, { kept_file: image });
    const replies = new Map<string, string[]>();
    await bot.app.recover((msg) => async (text) => void replies.set(msg.chatId, [...(replies.get(msg.chatId) ?? []), text]));
    assert.deepEqual(fetched.sort(), ['expired_file', 'kept_file']);
    assert.deepEqual(replies.get('1'), ['echo: [Photo] before the crash']);
    assert.deepEqual(imageParts(bot), [[{ type: 'image_url', image_url: { url: `data:image/png;base64,${image.toString('base64')}`, detail: 'high' } }]]);
    assert.deepEqual(replies.get('2'), [
      "I couldn't look at your photo (it could not be downloaded). It is saved in our conversation; please send it again if you need an answer about it.",
    ]);
    assert.equal(bot.llm.chatRequests().length, 1, 'no LLM call for the photo that could not be loaded');
    await bot.app.parts.sessions.flush();
    const s2 = await bot.app.parts.sessions.getOrCreate('test', '2');
    assert.deepEqual(
      s2.messages.map((m) => [m.content, m.attachment]),
      [['[Photo]', { kind: 'photo', fileId: 'expired_file' }]],
    );
    assert.deepEqual((await new FileInbox(path.join(bot.workspace, 'inbox.jsonl')).unfinished()).entries, [], 'both closed');
  } finally {
    await bot.close();
  }
});

test("an image's token cost counts against the context: at most half the limit goes to one image", async () => {
  // gpt-4o-mini bills 2,833 + 5,667 per tile: 300×200 is one tile (8,500 tokens), 1024×1024
  // four (25,501). With a limit of 30,000, an image may take 15,000.
  const bot = await startTestBot({ env: { LLM_MODEL: 'gpt-4o-mini' }, runtimeConfig: { compaction: { maxContextTokens: 30_000 } } });
  try {
    serveFiles(bot, { small: png(300, 200), big: png(1024, 1024) });
    const small = await bot.send('7', '[Photo] small', { image: { kind: 'photo', fileId: 'small' } });
    assert.deepEqual(small, ['echo: [Photo] small']);
    assert.equal(imageParts(bot).flat().length, 1);
    const attached = bot.logs.lines().find((l) => /image attached/.test(String(l.msg)));
    assert.equal(attached?.tokens, 8500);

    const big = await bot.send('7', '[Photo] big', { image: { kind: 'photo', fileId: 'big' } });
    assert.deepEqual(big, [
      "echo: [Photo] big\n\nℹ️ I couldn't look at your photo (it would take ~25,501 tokens, more than the 15,000 this chat's context leaves for an image), so I answered from your words only.",
    ]);
    assert.equal(imageParts(bot).flat().length, 1, 'the big one was not sent');
  } finally {
    await bot.close();
  }
});

test("AutoCompaction (18) counts the turn's image: the same session is left alone without it and compacted with it", async () => {
  const bot = await startTestBot({ env: { LLM_MODEL: 'gpt-4o' }, runtimeConfig: { compaction: { maxContextTokens: 20_000, keepLastMessages: 2 } } });
  try {
    for (let i = 0; i < 6; i++) await bot.send('9', `note ${i}: ${'plenty of words here '.repeat(40)}`);
    const { compactor, sessions } = bot.app.parts;
    const session = await sessions.getOrCreate('test', '9');
    const before = session.messages.length;
    const { reserved: tokens, limit } = compactor.usage(session);
    assert.ok(tokens < limit * 0.8, `the history alone (${tokens}) is under the threshold`);
    const turn = createTurn({
      inbound: photoMessage('9', '[Photo]', 'f', '99'),
      writes: sessions.writer(session),
      log: silentLogger(),
      userMessage: session.messages.at(-2)!,
      reply: async () => undefined,
    });
    assert.equal(await compactor.beforeTurn(turn.writes, turn.log, turn.images[0]?.tokens ?? 0), null);
    assert.equal(session.messages.length, before);

    // An image that takes the request just over 80 %.
    const bytes = png(300, 200);
    const made = imagePart(bytes, readImageInfo(bytes)!, { kind: 'tiles', base: 85, tile: 170 });
    turn.images = [{ ...made, tokens: Math.ceil(limit * 0.8) - tokens + 1, info: readImageInfo(bytes)!, bytes: bytes.length }];
    const result = await compactor.beforeTurn(turn.writes, turn.log, turn.images[0]?.tokens ?? 0);
    assert.ok(result && result.removed > 0, 'compacted because of the image');
    assert.ok(session.messages.length < before);
  } finally {
    await bot.close();
  }
});

/** A text-only server told it reads images (LLM_VISION=true): any request with an image is refused. */
const refusesImages: Responder = (req) =>
  JSON.stringify(req.body.messages).includes('image_url')
    ? { status: 400, json: { error: { message: 'Invalid content type. image_url is only supported by certain models.', type: 'invalid_request_error' } } }
    : text(`echo: ${lastUserText(req)}`);

test('a server that refuses the image (LLM_VISION=true on a text-only server): asked once more without it, the reply says so', async () => {
  const bot = await startTestBot({
    env: { LLM_MODEL: 'local-text-model', LLM_VISION: 'true' },
    responder: refusesImages,
  });
  try {
    serveFiles(bot, { p: png(300, 200) });
    const replies = await bot.send('5', '[Photo] what is it?', { image: { kind: 'photo', fileId: 'p' } });
    assert.deepEqual(replies, [
      'echo: [Photo] what is it?\n\nℹ️ The model refused the image, so I answered from your words only. It is saved in our conversation.',
    ]);
    assert.equal(bot.llm.chatRequests().length, 2);
    assert.equal(imageParts(bot)[1]!.length, 0, 'the second request has no image');
  } finally {
    await bot.close();
  }
});

test("an album's pictures refused by the server: asked once more without them, one note for all of them", async () => {
  const bot = await startTestBot({
    env: { LLM_MODEL: 'local-text-model', LLM_VISION: 'true' },
    responder: refusesImages,
  });
  try {
    serveFiles(bot, { a: png(300, 200), b: png(200, 300) });
    const images = [
      { kind: 'photo' as const, fileId: 'a' },
      { kind: 'photo' as const, fileId: 'b' },
    ];
    const replies = await bot.send('6', '[Photo] which?\n[Photo]', { images });
    assert.deepEqual(replies, [
      'echo: [Photo] which?\n[Photo]\n\nℹ️ The model refused the pictures, so I answered from your words only. They are saved in our conversation.',
    ]);
    assert.equal(imageParts(bot)[0]!.length, 2, 'the first request carried both');
    assert.equal(imageParts(bot)[1]!.length, 0);
  } finally {
    await bot.close();
  }
});
