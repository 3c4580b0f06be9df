/**
 * Voice notes end to end: the real telegraf client, the emulator with the proxy standing in for
 * getFile and the file download, the real openai SDK posting the audio to the fake server's
 * /audio/transcriptions.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTelegramBot } from '../../helpers/telegram.js';
import { lastUserText } from '../../helpers/fake-llm.js';

const OWNER = 111;
const voice = (fileId: string, extra: Record<string, unknown> = {}) => ({
  voice: { file_id: fileId, file_unique_id: `u_${fileId}`, duration: 2, mime_type: 'audio/ogg', ...extra },
});

test('a voice note is answered from its transcript, echoed first with SHOW_TRANSCRIPT, stored with a voice marker', async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER), SHOW_TRANSCRIPT: 'true' } });
  try {
    bot.tg.addFile('vn1', Buffer.from('OggS AUDIO:remind me to buy milk'));
    await bot.tg.user({ userId: OWNER }).send(voice('vn1'));
    const msgs = await bot.tg.waitForBotMessages(OWNER, 2);
    assert.deepEqual(
      msgs.map((m) => m.text),
      ['🎤 remind me to buy milk', 'echo: [Voice message, transcribed] remind me to buy milk'],
    );
    const [upload] = bot.llm.transcriptionRequests();
    assert.match(String(upload!.body), /name="model"\r\n\r\nwhisper-1\r\n/, 'TRANSCRIPTION_MODEL default');
    assert.match(String(upload!.body), /filename="voice\.ogg"/);
    assert.equal(lastUserText(bot.llm.chatRequests()[0]!), '[Voice message, transcribed] remind me to buy milk');
    const session = await bot.sessionFile(OWNER);
    assert.equal(session.messages[0].content, '[Voice message, transcribed] remind me to buy milk');
  } finally {
    await bot.close();
  }
});

test('no transcription: one clear line, the file id kept in the session, the model not asked; too big is refused before download', async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER) } });
  try {
    const owner = bot.tg.user({ userId: OWNER });
    // The server refuses the audio (the fake answers 400 to anything it cannot "decode").
    bot.tg.addFile('vn2', Buffer.from('not audio at all'));
    await owner.send(voice('vn2'));
    const [refused] = await bot.tg.waitForBotMessages(OWNER, 1);
    assert.equal(
      refused!.text,
      "I couldn't transcribe your voice message (the speech-to-text service refused it). It is saved in our conversation; please type what you said if you need an answer now.",
    );
    assert.equal(bot.tg.botMessages(OWNER).length, 1, 'one line, no second reply');

    // Over the Bot API's 20 MB: refused from the size Telegram announces, nothing downloaded.
    bot.tg.addFile('big', Buffer.from('AUDIO:never read'), 'music/big.mp3', { announcedSize: 21 * 1024 * 1024 });
    await owner.send({ audio: { file_id: 'big', file_unique_id: 'u_big', duration: 900, mime_type: 'audio/mpeg' } });
    const msgs = await bot.tg.waitForBotMessages(OWNER, 2);
    assert.match(msgs[1]!.text, /^Your audio file is larger than 20 MB, the most a bot can download from Telegram\./);
    assert.equal(bot.tg.callsOf('file').length, 1, 'only the first note was downloaded');

    // The session keeps both, with their file ids, and then the conversation goes on normally.
    await owner.say('hello');
    await bot.tg.waitForBotMessages(OWNER, 3);
    const session = await bot.sessionFile(OWNER);
    assert.deepEqual(
      session.messages.map((m: { content: string }) => m.content),
      ['[Voice message, 2 s, not transcribed; Telegram file_id: vn2]', '[Audio file, 900 s, not transcribed; Telegram file_id: big]', 'hello', 'echo: hello'],
    );
    assert.equal(bot.llm.chatRequests().length, 1, 'only "hello" reached the model');
    assert.equal(bot.llm.transcriptionRequests().length, 1);
  } finally {
    await bot.close();
  }
});

test('TRANSCRIPTION_MODEL=off: a voice note is kept and the user told, nothing downloaded', async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER), TRANSCRIPTION_MODEL: 'off' } });
  try {
    bot.tg.addFile('vn3', Buffer.from('AUDIO:hi'));
    await bot.tg.user({ userId: OWNER }).send(voice('vn3'));
    const [line] = await bot.tg.waitForBotMessages(OWNER, 1);
    assert.match(line!.text, /^I can't transcribe voice messages here \(no speech-to-text is set up\)\./);
    assert.equal(bot.tg.callsOf('getFile').length, 0);
    assert.match((await bot.sessionFile(OWNER)).messages[0].content, /file_id: vn3/);
  } finally {
    await bot.close();
  }
});
