/**
 * Voice notes meet the intake like any message (issue 25, item 2), end to end: the real
 * telegraf client against the Bot API emulator (the proxy stands in for getFile and the
 * download), the real daemon, the real openai SDK posting to the fake server's
 * /audio/transcriptions. Nothing is downloaded or transcribed for a note the limits refuse; a
 * transcription runs in its chat's turn, so it never holds up another chat, under its own
 * deadline; what it cost is in usage.db; the SHOW_TRANSCRIPT echo is capped and cleaned.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTelegramBot } from '../../helpers/telegram.js';
import { lastUserText } from '../../helpers/fake-llm.js';

import { tempDir } from '../../helpers/workspace.js';
import { FileSessionStore } from '../../../src/sessions/file-store.js';
import { makeMessage } from '../../../src/sessions/model.js';
import { FileInbox } from '../../../src/queue/file-inbox.js';
import { silentLogger } from '../../../src/core/log.js';
import type { InboundMessage } from '../../../src/core/message.js';
import path from 'node:path';
import { waitFor } from '../../helpers/wait.js';

const OWNER = 111;
const OTHER = 112;
const voice = (fileId: string, extra: Record<string, unknown> = {}) => ({
  voice: { file_id: fileId, file_unique_id: `u_${fileId}`, duration: 2, mime_type: 'audio/ogg', ...extra },
});
const placeholder = (fileId: string) => `[Voice message, 2 s, not transcribed; Telegram file_id: ${fileId}]`;

test('DAILY_TOKEN_BUDGET spent: a voice note gets the budget line before any download or transcription, and is kept with its file id', async () => {
  const bot = await startTelegramBot({
    env: { TELEGRAM_ALLOWED_USERS: String(OWNER), DAILY_TOKEN_BUDGET: '10', DAILY_TOKEN_BUDGET_EXEMPT_ALLOWED_USERS: 'false' },
  });
  try {
    const owner = bot.tg.user({ userId: OWNER });
    await owner.say('hello'); // 15 tokens: the budget is used
    await bot.tg.waitForBotMessages(OWNER, 1);
    bot.tg.addFile('vb1', Buffer.from('OggS AUDIO:spend more'));
    await owner.send(voice('vb1'));
    const [, line] = await bot.tg.waitForBotMessages(OWNER, 2);
    assert.match(line!.text, /^This chat has used its daily budget of 10 tokens/);
    assert.equal(bot.tg.callsOf('getFile').length, 0, 'not downloaded');
    assert.equal(bot.llm.transcriptionRequests().length, 0, 'not transcribed');
    const session = await bot.sessionFile(OWNER);
    assert.equal(session.messages.at(-1).content, placeholder('vb1'));
    assert.deepEqual(session.messages.at(-1).attachment, { kind: 'voice', fileId: 'vb1' });
  } finally {
    await bot.close();
  }
});

test('RATE_LIMIT_PER_MINUTE: a voice note over the rate gets the rate line, and is never downloaded or transcribed', async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER), RATE_LIMIT_PER_MINUTE: '1' } });
  try {
    const owner = bot.tg.user({ userId: OWNER });
    bot.tg.addFile('vr1', Buffer.from('OggS AUDIO:first note'));
    bot.tg.addFile('vr2', Buffer.from('OggS AUDIO:second note'));
    await owner.send(voice('vr1'));
    await owner.send(voice('vr2'));
    const msgs = await bot.tg.waitForBotMessages(OWNER, 2);
    assert.deepEqual(msgs.map((m) => m.text).sort(), [
      'That is more than 1 messages in a minute, so I saved this one without answering it. Please send it again in a minute if you still need an answer.',
      'echo: [Voice message, transcribed] first note',
    ]);
    assert.deepEqual(
      bot.tg.callsOf('getFile').map((c) => c.body.file_id),
      ['vr1'],
    );
    assert.equal(bot.llm.transcriptionRequests().length, 1);
  } finally {
    await bot.close();
  }
});

test('a slow transcription never holds up another chat: its text is answered while the note is still being transcribed', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: `${OWNER},${OTHER}` } });
  bot.llm.setTranscriber(async () => {
    await gate;
    return { json: { text: 'finally heard' } };
  });
  try {
    bot.tg.addFile('vs1', Buffer.from('OggS AUDIO:slow'));
    await bot.tg.user({ userId: OWNER }).send(voice('vs1'));
    await waitFor(() => bot.llm.transcriptionRequests().length === 1, 5000, 'the transcription to start');
    await bot.tg.user({ userId: OTHER }).say('anyone there?');
    const [other] = await bot.tg.waitForBotMessages(OTHER, 1, 5000);
    assert.equal(other!.text, 'echo: anyone there?');
    assert.equal(bot.tg.botMessages(OWNER).length, 0, 'the note is still being transcribed');
    release();
    const [answer] = await bot.tg.waitForBotMessages(OWNER, 1);
    assert.equal(answer!.text, 'echo: [Voice message, transcribed] finally heard');
  } finally {
    release();
    await bot.close();
  }
});

test('TRANSCRIPTION_TIMEOUT_MS: a transcription that does not end in time gets one line; the note stays in the session with its file id and the chat goes on', async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER), TRANSCRIPTION_TIMEOUT_MS: '1000' } });
  bot.llm.setTranscriber(() => ({ hang: true }));
  try {
    const owner = bot.tg.user({ userId: OWNER });
    bot.tg.addFile('vt1', Buffer.from('OggS AUDIO:never heard'));
    await owner.send(voice('vt1', { duration: 7 }));
    const [line] = await bot.tg.waitForBotMessages(OWNER, 1, 8000);
    assert.equal(
      line!.text,
      "I couldn't transcribe your voice message within 1 second. It is saved in our conversation; please type what you said if you need an answer now.",
    );
    assert.equal(bot.llm.chatRequests().length, 0, 'the model was not asked');
    assert.ok(bot.logs.lines().some((l) => l.code === 'transcription.timeout'));
    await owner.say('still there?');
    const msgs = await bot.tg.waitForBotMessages(OWNER, 2);
    assert.equal(msgs[1]!.text, 'echo: still there?');
    const session = await bot.sessionFile(OWNER);
    assert.deepEqual(
      session.messages.map((m: { content: string }) => m.content),
      ['[Voice message, 7 s, not transcribed; Telegram file_id: vt1]', 'still there?', 'echo: still there?'],
    );
  } finally {
    await bot.close();
  }
});

test("the cost of each transcription lands in usage.db (kind transcription): the seconds or tokens the server reports, else the note's length", async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER) } });
  const usage: Array<Record<string, unknown> | undefined> = [
    undefined,
    { type: 'duration', seconds: 3.5 },
    { type: 'tokens', input_tokens: 40, output_tokens: 6, total_tokens: 46 },
  ];
  let n = 0;
  bot.llm.setTranscriber(() => {
    const u = usage[n++];
    return { json: { text: `note ${n}`, ...(u ? { usage: u } : {}) } };
  });
  try {
    const owner = bot.tg.user({ userId: OWNER });
    for (const id of ['vu1', 'vu2', 'vu3']) {
      bot.tg.addFile(id, Buffer.from('OggS AUDIO:x'));
      await owner.send(voice(id));
    }
    await bot.tg.waitForBotMessages(OWNER, 3);
    const rows = (await bot.app.parts.usage.rows({ chat: `telegram:${OWNER}` })).filter((r) => r.kind === 'transcription');
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.calls, 3);
    assert.equal(rows[0]!.audioSeconds, 2 + 3.5, "Telegram's 2 s for the first, the server's 3.5 s for the second");
    assert.equal(rows[0]!.promptTokens, 40);
    assert.equal(rows[0]!.completionTokens, 6);
  } finally {
    await bot.close();
  }
});

test('SHOW_TRANSCRIPT: the echo is cut at 3,500 characters with "…" and has no control characters; the stored transcript is cleaned too', async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER), SHOW_TRANSCRIPT: 'true' } });
  const long = `bell\u0007 and \u001b[31mred\u001b[0m ${'word '.repeat(1000)}`;
  bot.llm.setTranscriber(() => ({ json: { text: long } }));
  try {
    bot.tg.addFile('ve1', Buffer.from('OggS AUDIO:x'));
    await bot.tg.user({ userId: OWNER }).send(voice('ve1'));
    const msgs = await bot.tg.waitForBotMessages(OWNER, 2);
    const echo = msgs[0]!.text;
    const clean = long.trim().replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, '');
    assert.equal(echo, `🎤 ${clean.slice(0, 3500)}…`);
    assert.ok(!/[\u0000-\u0008\u000b-\u001f\u007f]/.test(echo));
    assert.ok(
      msgs[1]!.text.startsWith('echo: [Voice message, transcribed] bell and [31mred[0m word'),
      'the answer comes after the echo, from the cleaned words',
    );
    assert.ok(!/[\u0007\u001b]/.test(lastUserText(bot.llm.chatRequests()[0]!)), 'the model gets no control characters');
  } finally {
    await bot.close();
  }
});

test('after a restart, a voice note already in the session (untranscribed, or transcribed but unanswered) is not recorded twice', async () => {
  const ws = await tempDir();
  const note = (chat: number, fileId: string, messageId: string): InboundMessage => ({
    channel: 'telegram',
    chatId: String(chat),
    userId: String(chat),
    text: placeholder(fileId),
    messageId,
    receivedAt: new Date(),
    audio: { kind: 'voice', fileId, duration: 2, mimeType: 'audio/ogg' },
  });
  // What a killed run left: both notes journaled and open; one recorded untranscribed (its line
  // was sent), one recorded with its transcript (the turn was stopped before an answer).
  const sessions = new FileSessionStore(path.join(ws.dir, 'sessions'), silentLogger());
  await sessions.init();
  const record = async (chat: number, content: string, sourceId: string, fileId: string) => {
    const session = await sessions.getOrCreate('telegram', String(chat));
    await sessions.writer(session).append(makeMessage('user', content, { sourceId, attachment: { kind: 'voice', fileId } }));
  };
  await record(OWNER, placeholder('vk1'), '41', 'vk1');
  await record(OTHER, '[Voice message, transcribed] heard before', '42', 'vk2');
  await sessions.close();
  const inbox = new FileInbox(path.join(ws.dir, 'inbox.jsonl'));
  for (const m of [note(OWNER, 'vk1', '41'), note(OTHER, 'vk2', '42')]) await inbox.accept(m).durable;
  await inbox.shutdown();

  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: `${OWNER},${OTHER}` }, workspace: ws.dir });
  try {
    bot.tg.addFile('vk1', Buffer.from('OggS AUDIO:heard now'));
    assert.equal(await bot.app.recover((m) => bot.channel.replyFor(m)), 2);
    assert.equal((await bot.tg.waitForBotMessages(OWNER, 1))[0]!.text, 'echo: [Voice message, transcribed] heard now');
    assert.equal((await bot.tg.waitForBotMessages(OTHER, 1))[0]!.text, 'echo: [Voice message, transcribed] heard before');
    assert.equal(bot.llm.transcriptionRequests().length, 1, 'the transcribed one is not transcribed again');
    for (const [chat, content] of [
      [OWNER, '[Voice message, transcribed] heard now'],
      [OTHER, '[Voice message, transcribed] heard before'],
    ] as const) {
      const messages = (await bot.sessionFile(chat)).messages.map((m: { role: string; content: string }) => `${m.role}: ${m.content}`);
      assert.deepEqual(messages, [`user: ${content}`, `assistant: echo: ${content}`], `chat ${chat}: recorded once`);
    }
  } finally {
    await bot.close();
    await ws.cleanup();
  }
});
