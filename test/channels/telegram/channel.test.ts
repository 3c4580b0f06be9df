/**
 * The Telegram channel end to end: the real telegraf client against the Bot API emulator, the
 * real daemon (createApp) and the fake LLM.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTelegramBot } from '../../helpers/telegram.js';
import { lastUserText, promptKind, text } from '../../helpers/fake-llm.js';
import { runPair } from '../../../src/cli/pair.js';
import { waitFor } from '../../helpers/wait.js';

const OWNER = 111;

test("a message gets the model's reply, with a typing indicator, in session telegram:{chatId}", async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER) } });
  try {
    await bot.tg.user({ userId: OWNER }).say('hello there');
    const [reply] = await bot.tg.waitForBotMessages(OWNER, 1);
    assert.equal(reply!.text, 'echo: hello there');
    assert.equal(reply!.parseMode, 'HTML');
    assert.equal(bot.llm.chatRequests().length, 1);
    assert.equal(lastUserText(bot.llm.chatRequests()[0]!), 'hello there');

    const typing = bot.tg.callsOf('sendChatAction');
    assert.ok(typing.length >= 1, 'typing was shown');
    assert.deepEqual(typing[0]!.body, { chat_id: String(OWNER), action: 'typing' });
    // The emulator answers 500 to sendChatAction and setMyCommands: shrugged off, logged.
    assert.ok(bot.logs.lines().some((l) => /sendChatAction failed \(cosmetic, ignored\)/.test(l.msg)));
    const commands = bot.tg.callsOf('setMyCommands')[0]!.body.commands.map((c: { command: string }) => c.command);
    assert.deepEqual(commands.sort(), ['compact', 'export', 'forget', 'help', 'memory', 'model', 'new', 'reminders', 'start', 'status', 'stop', 'why']);

    const session = await bot.sessionFile(OWNER);
    assert.deepEqual(
      session.messages.map((m: { content: string }) => m.content),
      ['hello there', 'echo: hello there'],
    );
  } finally {
    await bot.close();
  }
});

test('/status, /new and /start work as on the console, without asking the model', async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER) } });
  try {
    const owner = bot.tg.user({ userId: OWNER });
    await owner.say('remember me');
    await bot.tg.waitForBotMessages(OWNER, 1);
    await owner.say('/status full');
    const status = (await bot.tg.waitForBotMessages(OWNER, 2))[1]!.text;
    assert.match(status, /Session: telegram:111/);
    assert.match(status, /Messages: 2 in session/);

    await owner.say('/new');
    await bot.tg.waitForBotMessages(OWNER, 3);
    await owner.say('/status full');
    assert.match((await bot.tg.waitForBotMessages(OWNER, 4))[3]!.text, /Messages: 0 in session/, '/new cleared the session');

    await owner.say('/start');
    const help = (await bot.tg.waitForBotMessages(OWNER, 5))[4]!.text;
    assert.match(help, /\/status/);
    assert.match(help, /\/new/);
    // (/new may ask the model to consolidate memory; no command is answered by the model.)
    assert.deepEqual(
      bot.llm
        .chatRequests()
        .filter((r) => promptKind(r) === 'chat')
        .map(lastUserText),
      ['remember me'],
      'only the first message went to the model as a chat',
    );
  } finally {
    await bot.close();
  }
});

test('a stranger gets a pairing code and never reaches the model; after `pair approve` they are served', async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER) } });
  try {
    const stranger = bot.tg.user({ userId: 222, userName: 'mallory' });
    await stranger.say('hi, who are you?');
    const [codeMsg] = await bot.tg.waitForBotMessages(222, 1);
    const code = /pairing code: ([A-Z2-9]{8})/.exec(codeMsg!.text)?.[1];
    assert.ok(code, `a code in: ${codeMsg!.text}`);
    assert.equal(codeMsg!.parseMode, undefined, 'sent as plain text');

    await stranger.say('hello??');
    // The owner is served meanwhile, which also shows the stranger's second message was handled.
    await bot.tg.user({ userId: OWNER }).say('ping');
    await bot.tg.waitForBotMessages(OWNER, 1);
    await waitFor(() => bot.tg.callsOf('getUpdates').length > 3, 5000, 'more polls');
    assert.equal(bot.tg.botMessages(222).length, 1, 'the code is sent once');
    assert.deepEqual(bot.llm.chatRequests().map(lastUserText), ['ping'], 'no LLM request for the stranger');
    const logged = bot.logs.lines().find((l) => l.code === code);
    assert.equal(logged?.userId, '222', 'the daemon logs the user id and the code');

    const out: string[] = [];
    assert.equal(await runPair(['approve', code], bot.workspace, { out: (l) => out.push(l), err: (l) => out.push(l) }), 0);
    assert.match(out.join('\n'), /Approved 222 \(@mallory/);

    await stranger.say('now can we talk?');
    const msgs = await bot.tg.waitForBotMessages(222, 2);
    assert.equal(msgs[1]!.text, 'echo: now can we talk?');

    assert.equal(await runPair(['revoke', '222'], bot.workspace, { out: () => undefined, err: () => undefined }), 0);
    await stranger.say('still there?');
    const after = await bot.tg.waitForBotMessages(222, 3);
    assert.match(after[2]!.text, /pairing code/, 'revoked: back to pairing');
    assert.equal(bot.llm.chatRequests().length, 2);
  } finally {
    await bot.close();
  }
});

test('a 10,000-character answer arrives as ordered chunks of at most 4096 characters', async () => {
  const paras = Array.from({ length: 40 }, (_, i) => `Part ${String(i).padStart(2, '0')}: ${'lorem ipsum dolor '.repeat(14).trim()}.`);
  const answer = paras.join('\n\n');
  assert.ok(answer.length > 10_000);
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER) }, responder: () => text(answer) });
  try {
    await bot.tg.user({ userId: OWNER }).say('tell me everything');
    await waitFor(
      () =>
        bot.tg.botMessages(OWNER).join('').length > 0 &&
        bot.tg
          .botMessages(OWNER)
          .map((m) => m.text)
          .join('\n\n').length >= answer.length,
      10_000,
      'the whole answer',
    );
    const chunks = bot.tg.botMessages(OWNER).map((m) => m.text);
    assert.ok(chunks.length >= 3, `${chunks.length} chunks: ${chunks.map((c) => c.length)}`);
    for (const c of chunks) assert.ok(c.length <= 4096, `chunk of ${c.length}`);
    assert.equal(chunks.join('\n\n'), answer, 'in order, nothing lost, split between paragraphs');
  } finally {
    await bot.close();
  }
});

test('stickers, video notes and other documents without caption get one line naming them, from the intake (photos: photos.test.ts); edited messages are ignored', async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER) } });
  try {
    const owner = bot.tg.user({ userId: OWNER });
    // An edit of an earlier message, as Telegram would send it.
    bot.tg.intercept('getUpdates', (call) =>
      call.index === 2
        ? {
            transform: (json) => ({
              ...json,
              result: [
                {
                  update_id: 9000,
                  edited_message: {
                    message_id: 1,
                    date: 0,
                    chat: { id: OWNER, type: 'private' },
                    from: { id: OWNER, is_bot: false, first_name: 'O' },
                    text: 'edited',
                  },
                },
              ],
            }),
          }
        : undefined,
    );
    await waitFor(() => bot.tg.callsOf('getUpdates').length > 3, 5000, 'the edit to be polled');
    await owner.send({ sticker: { file_id: 'stk', width: 1, height: 1 } });
    await owner.send({ video_note: { file_id: 'v', duration: 1, length: 1 } });
    await owner.send({ document: { file_id: 'd', file_name: 'report.pdf', mime_type: 'application/pdf' } });
    await owner.say('and this?');
    const msgs = await bot.tg.waitForBotMessages(OWNER, 4);
    assert.deepEqual(
      msgs.slice(0, 3).map((m) => m.text),
      ['a sticker', 'a video message', 'this kind of file'].map(
        (what) => `I can read text, voice messages and photos, not ${what}, so nothing was sent to the model. Please say it in words.`,
      ),
    );
    assert.equal(msgs[3]!.text, 'echo: and this?');
    assert.deepEqual(bot.llm.chatRequests().map(lastUserText), ['and this?'], 'the edit reached nobody');
  } finally {
    await bot.close();
  }
});

test('groups: only allowed groups, only when mentioned or replied to, one session per group', async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER), TELEGRAM_ALLOWED_GROUPS: '-1001' } });
  try {
    const alice = bot.tg.user({ userId: 301, chatId: -1001, type: 'supergroup', chatTitle: 'Team', firstName: 'Alice' });
    const bob = bot.tg.user({ userId: 302, chatId: -1001, type: 'supergroup', chatTitle: 'Team', firstName: 'Bob' });
    const outsider = bot.tg.user({ userId: OWNER, chatId: -2002, type: 'group', chatTitle: 'Other' });

    await alice.say('just talking among us');
    await outsider.say('@TestNameBot hello from an unlisted group');
    await alice.say('@TestNameBot what is 2+2?');
    const [first] = await bot.tg.waitForBotMessages(-1001, 1);
    assert.equal(first!.text, 'echo: what is 2+2?', 'the mention is taken out of the text');
    assert.ok(first!.raw.reply_parameters?.message_id, 'in a group the bot answers the message it was asked in');

    const botMessageId = bot.tg.server.storage.botMessages.at(-1)!.messageId;
    await bob.say('and 3+3?', { reply_to_message: { message_id: botMessageId, from: { id: 666, is_bot: true, first_name: 'Bot' } } });
    const msgs = await bot.tg.waitForBotMessages(-1001, 2);
    assert.equal(msgs[1]!.text, 'echo: and 3+3?');

    assert.deepEqual(bot.llm.chatRequests().map(lastUserText), ['what is 2+2?', 'and 3+3?']);
    // The owner in a group the bot does not serve is only told how to turn it on (unserved-group.test.ts); the model never sees it.
    assert.match((await bot.tg.waitForBotMessages(-2002, 1))[0]!.text, /^This group isn't served yet, so I stay quiet here\./);
    const session = await bot.sessionFile(-1001);
    assert.deepEqual(
      session.messages.filter((m: { role: string }) => m.role === 'user').map((m: { senderName: string }) => m.senderName),
      ['Alice', 'Bob'],
      'one session for the group, senders kept apart',
    );
  } finally {
    await bot.close();
  }
});

test('a command for another bot is never run here: /new@otherbot as a reply to the bot, "@thisbot /status@otherbot" — no reply, the group conversation kept', async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER), TELEGRAM_ALLOWED_GROUPS: '-1001' } });
  try {
    const owner = bot.tg.user({ userId: OWNER, chatId: -1001, type: 'supergroup', chatTitle: 'Team', firstName: 'Olga' });
    await owner.say('@TestNameBot the plum code is 4471');
    await bot.tg.waitForBotMessages(-1001, 1);
    const botMessageId = bot.tg.server.storage.botMessages.at(-1)!.messageId;
    // Meant for another bot in the group: Telegram sends it as a reply to this bot's message.
    await owner.say('/new@OtherBot', { reply_to_message: { message_id: botMessageId, from: { id: 666, is_bot: true, first_name: 'Bot' } } });
    await owner.say('@TestNameBot /status@OtherBot', { entities: [{ type: 'mention', offset: 0, length: 12 }] });
    await owner.say('/start@OtherBot');
    // Updates are read in order: once this one is answered, the ones before it were seen.
    await owner.say('@TestNameBot what is the plum code?');
    // One chat's queue answers in order: a command run before it would have answered first.
    const msgs = await bot.tg.waitForBotMessages(-1001, 2);
    assert.deepEqual(
      bot.tg.botMessages(-1001).map((m) => m.text),
      ['echo: the plum code is 4471', 'echo: what is the plum code?'],
      `nothing answered the other bot's commands: ${JSON.stringify(msgs.map((m) => m.text))}`,
    );
    const session = await bot.sessionFile(-1001);
    assert.deepEqual(
      session.messages.map((m: { content: string }) => m.content),
      ['the plum code is 4471', 'echo: the plum code is 4471', 'what is the plum code?', 'echo: what is the plum code?'],
      'the conversation was not cleared, and the commands were not kept as words',
    );
    assert.equal(bot.tg.callsOf('setMessageReaction').length, 2, 'no 👀 on a message for another bot');
  } finally {
    await bot.close();
  }
});

test('a file it cannot read, with a caption: the caption is answered, the reply says the file was not read, and the model is told a file came that it never saw', async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER) } });
  try {
    const owner = bot.tg.user({ userId: OWNER });
    await owner.send({
      document: { file_id: 'pdf1', file_unique_id: 'u_pdf1', file_name: 'report.pdf', mime_type: 'application/pdf', file_size: 48_000 },
      caption: 'read this',
    });
    await owner.send({ video: { file_id: 'vid1', file_unique_id: 'u_vid1', width: 1, height: 1, duration: 3 }, caption: 'what happens here?' });
    const msgs = await bot.tg.waitForBotMessages(OWNER, 2);
    const seen = bot.llm.chatRequests().map(lastUserText);
    assert.deepEqual(seen, [
      '[File: report.pdf; attached, but not read: the bot cannot open this kind of file] read this',
      '[Video; attached, but not read: the bot cannot open this kind of file] what happens here?',
    ]);
    assert.deepEqual(
      msgs.map((m) => m.text),
      [
        `echo: ${seen[0]}\n\nℹ️ I can't open this kind of file (I read text, voice messages and photos), so I answered from your words only.`,
        `echo: ${seen[1]}\n\nℹ️ I can't open a video (I read text, voice messages and photos), so I answered from your words only.`,
      ],
    );
    const session = await bot.sessionFile(OWNER);
    assert.equal(session.messages[0].content, seen[0], 'later turns see that a file came and was not read');
  } finally {
    await bot.close();
  }
});
