/**
 * Albums (Telegram media groups) end to end: the real telegraf client against the emulator
 * (with the proxy standing in for getFile and downloads), the real openai SDK against the fake
 * LLM server. An album's items reach the bot in one getUpdates batch, as they usually do from
 * Telegram: the test holds polling while it sends them, so arrival is not left to timing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTelegramBot, type EmuUser, type TelegramEmulator } from '../../helpers/telegram.js';
import { png } from '../../helpers/images.js';
import { waitFor } from '../../helpers/wait.js';

const OWNER = 111;
const FRIEND = 222;
/** Long enough for one batch of items to be routed on a busy machine; the test waits it once per album. */
const ENV = { TELEGRAM_ALLOWED_USERS: `${OWNER},${FRIEND}`, LLM_MODEL: 'gpt-4o', ALBUM_WAIT_MS: '1000' };

const photo = (id: string) => ({
  photo: [
    { file_id: `${id}_s`, file_unique_id: `u_${id}_s`, width: 90, height: 68, file_size: 900 },
    { file_id: `${id}_l`, file_unique_id: `u_${id}_l`, width: 640, height: 480, file_size: 40_000 },
  ],
});

/** Holds the bot's polls (answered empty) while `send` runs, so what it sends arrives in one batch. */
async function inOneBatch(tg: TelegramEmulator, send: () => Promise<void>): Promise<void> {
  let held = true;
  let gated = 0;
  tg.intercept('getUpdates', () => (held ? (gated++, { json: { ok: true, result: [] } }) : undefined));
  // The poller asks one poll at a time: once a held one was answered, none is in flight that could take part of the batch.
  await waitFor(() => gated > 0, 10_000, 'a held poll');
  await send();
  held = false;
}

/** Files for photos `ids` (their large size), each a distinct PNG; returns the base64 of each. */
function addPhotos(tg: TelegramEmulator, ids: string[]): string[] {
  return ids.map((id, i) => {
    const bytes = png(320 + i, 240);
    tg.addFile(`${id}_l`, bytes, `photos/${id}.png`);
    return bytes.toString('base64');
  });
}

async function album(user: EmuUser, group: string, ids: string[], caption?: string): Promise<void> {
  for (const [i, id] of ids.entries()) await user.send({ ...photo(id), media_group_id: group, ...(i === 0 && caption ? { caption } : {}) });
}

/** The image parts of the last user message of a recorded request. */
function imageUrls(body: any): string[] {
  const content = body.messages.at(-1).content;
  return Array.isArray(content) ? content.filter((p: any) => p.type === 'image_url').map((p: any) => p.image_url.url) : [];
}

test('an album of 3 photos with a caption: one reply, one LLM request with the 3 images and the caption, one user turn with 3 placeholders', async () => {
  const bot = await startTelegramBot({ env: ENV });
  try {
    const owner = bot.tg.user({ userId: OWNER });
    const b64 = addPhotos(bot.tg, ['p1', 'p2', 'p3']);
    await inOneBatch(bot.tg, () => album(owner, 'g100', ['p1', 'p2', 'p3'], 'our trip, which one is best?'));
    await bot.tg.waitForBotMessages(OWNER, 1);
    // A later message is answered next: nothing else came for the album in between.
    await owner.say('thanks');
    const replies = (await bot.tg.waitForBotMessages(OWNER, 2)).map((m) => m.text);
    assert.deepEqual(replies, ['echo: [Photo] our trip, which one is best?\n[Photo]\n[Photo]', 'echo: thanks']);

    const requests = bot.llm.chatRequests();
    assert.equal(requests.length, 2);
    const last = requests[0]!.body.messages.at(-1);
    assert.deepEqual(last.content[0], { type: 'text', text: '[Photo] our trip, which one is best?\n[Photo]\n[Photo]' });
    assert.deepEqual(
      imageUrls(requests[0]!.body),
      b64.map((b) => `data:image/png;base64,${b}`),
      'all three, in album order',
    );
    assert.deepEqual(imageUrls(requests[1]!.body), [], 'a later request has the placeholders only');

    const session = await bot.sessionFile(OWNER);
    const users = session.messages.filter((m: { role: string }) => m.role === 'user');
    assert.equal(users.length, 2);
    assert.equal(users[0].content, '[Photo] our trip, which one is best?\n[Photo]\n[Photo]');
    assert.deepEqual(users[0].attachments, [
      { kind: 'photo', fileId: 'p1_l' },
      { kind: 'photo', fileId: 'p2_l' },
      { kind: 'photo', fileId: 'p3_l' },
    ]);
    assert.equal(session.messages.filter((m: { role: string }) => m.role === 'assistant').length, 2);
  } finally {
    await bot.close();
  }
});

test('a text-only model: one line for the whole album, no LLM call and no download; the session keeps the 3 file ids', async () => {
  const bot = await startTelegramBot({ env: { ...ENV, LLM_MODEL: 'gpt-3.5-turbo' } });
  try {
    const owner = bot.tg.user({ userId: OWNER });
    await inOneBatch(bot.tg, () => album(owner, 'g200', ['d1', 'd2', 'd3'], 'my dogs'));
    await bot.tg.waitForBotMessages(OWNER, 1);
    await owner.say('hello');
    const replies = (await bot.tg.waitForBotMessages(OWNER, 2)).map((m) => m.text);
    assert.deepEqual(replies, [
      "The model I use reads text only, so I can't look at your 3 photos. They are saved in our conversation; describe them in words if you need an answer now.",
      'echo: hello',
    ]);
    assert.equal(bot.llm.chatRequests().length, 1, 'only "hello" reached the model');
    assert.equal(bot.tg.callsOf('getFile').length, 0);
    const session = await bot.sessionFile(OWNER);
    const album0 = session.messages[0];
    assert.equal(album0.content, '[Photo] my dogs\n[Photo]\n[Photo]');
    assert.deepEqual(
      album0.attachments.map((a: { fileId: string }) => a.fileId),
      ['d1_l', 'd2_l', 'd3_l'],
    );
  } finally {
    await bot.close();
  }
});

test('an album with one picture Telegram cannot give: the other two reach the model, and the reply says which one was not seen', async () => {
  const bot = await startTelegramBot({ env: ENV });
  try {
    const owner = bot.tg.user({ userId: OWNER });
    addPhotos(bot.tg, ['k1', 'k3']);
    bot.tg.intercept('getFile', (call) =>
      call.body?.file_id === 'k2_l' ? { status: 400, json: { ok: false, error_code: 400, description: 'Bad Request: invalid file_id' } } : undefined,
    );
    await inOneBatch(bot.tg, () => album(owner, 'g300', ['k1', 'k2', 'k3'], 'compare these'));
    const [reply] = await bot.tg.waitForBotMessages(OWNER, 1);
    assert.equal(
      reply!.text,
      "echo: [Photo] compare these\n[Photo]\n[Photo]\n\nℹ️ I couldn't look at picture 2 of 3 (it could not be downloaded), so I answered from the other pictures.",
    );
    assert.equal(imageUrls(bot.llm.chatRequests()[0]!.body).length, 2);
    await owner.say('ok');
    assert.equal((await bot.tg.waitForBotMessages(OWNER, 2))[1]!.text, 'echo: ok', 'one reply for the album');
  } finally {
    await bot.close();
  }
});

test('two albums from two chats, their items interleaved in one batch, stay two albums with one reply each', async () => {
  const bot = await startTelegramBot({ env: ENV });
  try {
    const owner = bot.tg.user({ userId: OWNER });
    const friend = bot.tg.user({ userId: FRIEND });
    addPhotos(bot.tg, ['a1', 'a2', 'b1', 'b2']);
    // The same media_group_id in both chats too: an album belongs to its chat.
    await inOneBatch(bot.tg, async () => {
      await owner.send({ ...photo('a1'), media_group_id: 'g400', caption: 'mine' });
      await friend.send({ ...photo('b1'), media_group_id: 'g400', caption: 'yours' });
      await owner.send({ ...photo('a2'), media_group_id: 'g400' });
      await friend.send({ ...photo('b2'), media_group_id: 'g400' });
    });
    await bot.tg.waitForBotMessages(OWNER, 1);
    await bot.tg.waitForBotMessages(FRIEND, 1);
    await owner.say('next');
    await friend.say('next');
    assert.deepEqual(
      (await bot.tg.waitForBotMessages(OWNER, 2)).map((m) => m.text),
      ['echo: [Photo] mine\n[Photo]', 'echo: next'],
    );
    assert.deepEqual(
      (await bot.tg.waitForBotMessages(FRIEND, 2)).map((m) => m.text),
      ['echo: [Photo] yours\n[Photo]', 'echo: next'],
    );
    const albums = bot.llm.chatRequests().filter((r) => imageUrls(r.body).length > 0);
    assert.equal(albums.length, 2);
    assert.ok(albums.every((r) => imageUrls(r.body).length === 2));
  } finally {
    await bot.close();
  }
});

test('a photo without media_group_id, in the same batch as an album, is answered alone and at once; a repeated update adds no reply', async () => {
  const bot = await startTelegramBot({ env: ENV });
  try {
    const owner = bot.tg.user({ userId: OWNER });
    addPhotos(bot.tg, ['solo', 'm1', 'm2']);
    await inOneBatch(bot.tg, async () => {
      await owner.send({ ...photo('solo'), caption: 'just this one' });
      await album(owner, 'g500', ['m1', 'm2'], 'and these two');
      // Every update is handed out twice in the batch, the way Telegram repeats one it thinks was not taken.
      bot.tg.intercept('getUpdates', () => ({ transform: (json) => ({ ...json, result: [...json.result, ...json.result] }) }));
    });
    const first = await bot.tg.waitForBotMessages(OWNER, 2);
    await owner.say('done');
    const replies = (await bot.tg.waitForBotMessages(OWNER, 3)).map((m) => m.text);
    assert.deepEqual(replies, ['echo: [Photo] just this one', 'echo: [Photo] and these two\n[Photo]', 'echo: done']);
    assert.equal(first.length, 2);
    const counts = bot.llm.chatRequests().map((r) => imageUrls(r.body).length);
    assert.deepEqual(counts, [1, 2, 0]);
  } finally {
    await bot.close();
  }
});

test('in a group, an album whose caption mentions the bot is answered once with all its pictures, one 👀; an album not addressed to the bot is left alone', async () => {
  const GROUP = -1007;
  const bot = await startTelegramBot({ env: { ...ENV, TELEGRAM_ALLOWED_GROUPS: String(GROUP) } });
  try {
    bot.tg.intercept('setMessageReaction', () => ({ json: { ok: true, result: true } }));
    const alice = bot.tg.user({ userId: 301, chatId: GROUP, type: 'supergroup', chatTitle: 'Team', firstName: 'Alice' });
    addPhotos(bot.tg, ['q1', 'q2', 'q3', 'n1', 'n2']);
    await inOneBatch(bot.tg, async () => {
      await album(alice, 'g600', ['n1', 'n2'], 'holiday pics for the team');
      await album(alice, 'g601', ['q1', 'q2', 'q3'], '@TestNameBot which one is sharpest?');
    });
    const [answer] = await bot.tg.waitForBotMessages(GROUP, 1);
    await alice.say('@TestNameBot thanks');
    const replies = (await bot.tg.waitForBotMessages(GROUP, 2)).map((m) => m.text);
    assert.deepEqual(replies, ['echo: [Photo] which one is sharpest?\n[Photo]\n[Photo]', 'echo: thanks']);
    assert.equal(imageUrls(bot.llm.chatRequests()[0]!.body).length, 3);
    const reactions = bot.tg.callsOf('setMessageReaction').map((c) => c.body.message_id);
    assert.equal(reactions.length, 2, 'the album once, and "thanks"');
    assert.equal(reactions[0], answer!.raw.reply_parameters.message_id, 'the album reply answers its captioned item, which got the 👀');
  } finally {
    await bot.close();
  }
});

test('a stranger sending an album is refused once, like any message; nothing reaches the model', async () => {
  const bot = await startTelegramBot({ env: { ...ENV, TELEGRAM_ALLOWED_USERS: String(OWNER), TELEGRAM_DM_POLICY: 'allowlist' } });
  try {
    const stranger = bot.tg.user({ userId: 999 });
    await inOneBatch(bot.tg, () => album(stranger, 'g700', ['s1', 's2', 's3'], 'hi there'));
    await bot.tg.waitForBotMessages(999, 1);
    await waitFor(() => bot.logs.lines().filter((l) => l.msg === 'message refused').length === 3, 10_000, 'all three items refused');
    assert.deepEqual(
      bot.tg.botMessages(999).map((m) => m.text),
      ['Sorry, this is a private bot.'],
    );
    assert.equal(bot.llm.chatRequests().length, 0);
    assert.equal(bot.tg.callsOf('getFile').length, 0);
  } finally {
    await bot.close();
  }
});

test('an album with a HEIC file: not downloaded, the photos answered with one note; an album with nothing readable and no caption: one line, no LLM call', async () => {
  const bot = await startTelegramBot({ env: ENV });
  try {
    const owner = bot.tg.user({ userId: OWNER });
    addPhotos(bot.tg, ['h1', 'h2']);
    const heic = (id: string) => ({ document: { file_id: id, file_unique_id: `u_${id}`, file_name: `${id}.HEIC`, mime_type: 'image/heic', file_size: 3000 } });
    await inOneBatch(bot.tg, async () => {
      await owner.send({ ...photo('h1'), media_group_id: 'g800' });
      await owner.send({ ...photo('h2'), media_group_id: 'g800' });
      await owner.send({ ...heic('doc1'), media_group_id: 'g800' });
    });
    const [first] = await bot.tg.waitForBotMessages(OWNER, 1);
    assert.equal(
      first!.text,
      "echo: [Photo]\n[Photo]\n[Image: doc1.HEIC]\n\nℹ️ I couldn't look at picture 3 of 3 (it is image/heic, and I can read JPEG, PNG, GIF and WebP), so I answered from the other pictures.",
    );
    assert.equal(imageUrls(bot.llm.chatRequests()[0]!.body).length, 2);
    assert.ok(!bot.tg.callsOf('getFile').some((c) => c.body.file_id === 'doc1'), 'the HEIC file is not downloaded');

    bot.tg.intercept('getFile', (call) =>
      call.body?.file_id === 'x1_l' ? { status: 400, json: { ok: false, error_code: 400, description: 'Bad Request: invalid file_id' } } : undefined,
    );
    await inOneBatch(bot.tg, async () => {
      await owner.send({ ...photo('x1'), media_group_id: 'g801' });
      await owner.send({ ...heic('doc2'), media_group_id: 'g801' });
    });
    const second = (await bot.tg.waitForBotMessages(OWNER, 2))[1]!;
    assert.equal(
      second.text,
      "I couldn't look at your 1 photo and 1 image (it could not be downloaded; it is image/heic, and I can read JPEG, PNG, GIF and WebP). They are saved in our conversation; please send them again if you need an answer about them.",
    );
    assert.equal(bot.llm.chatRequests().length, 1, 'the second album reached no model');
    // The album's turn saves its words after that line went out: the next message waits for it in the chat's queue.
    await owner.say('noted?');
    await bot.tg.waitForBotMessages(OWNER, 3);
    const session = await bot.sessionFile(OWNER);
    const kept = session.messages.filter((m: { role: string }) => m.role === 'user').at(-2);
    assert.equal(kept.content, '[Photo]\n[Image: doc2.HEIC]');
    assert.deepEqual(kept.attachments, [
      { kind: 'photo', fileId: 'x1_l' },
      { kind: 'document', fileId: 'doc2' },
    ]);
  } finally {
    await bot.close();
  }
});
