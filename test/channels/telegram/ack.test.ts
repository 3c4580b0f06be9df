import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTelegramBot } from '../../helpers/telegram.js';
import { waitFor } from '../../helpers/wait.js';

const GROUP = -1004;

test('in a group the message being answered gets 👀; not in private chats; a refused reaction changes nothing', async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: '111', TELEGRAM_ALLOWED_GROUPS: String(GROUP) } });
  try {
    // The emulator has no setMessageReaction: the proxy stands in for it (ok, then a refusal).
    bot.tg.intercept('setMessageReaction', (c) =>
      c.index === 0
        ? { json: { ok: true, result: true } }
        : { status: 400, json: { ok: false, error_code: 400, description: 'Bad Request: REACTION_INVALID' } },
    );
    const alice = bot.tg.user({ userId: 301, chatId: GROUP, type: 'supergroup', chatTitle: 'Team', firstName: 'Alice' });
    await alice.say('chatting among ourselves');
    await alice.say('@TestNameBot how are you?');
    const [answer] = await bot.tg.waitForBotMessages(GROUP, 1);
    const reactions = bot.tg.callsOf('setMessageReaction');
    assert.equal(reactions.length, 1, 'only the message addressed to the bot');
    assert.deepEqual(reactions[0]!.body, {
      chat_id: String(GROUP),
      message_id: answer!.raw.reply_parameters.message_id,
      reaction: [{ type: 'emoji', emoji: '👀' }],
    });

    await alice.say('@TestNameBot again?');
    await bot.tg.waitForBotMessages(GROUP, 2);
    assert.equal(bot.tg.botMessages(GROUP)[1]!.text, 'echo: again?', 'answered although the reaction was refused');
    await waitFor(() => bot.logs.lines().some((l) => /setMessageReaction failed \(cosmetic, ignored\)/.test(l.msg)), 2000, 'the refusal logged');

    await bot.tg.user({ userId: 111 }).say('private hello');
    await bot.tg.waitForBotMessages(111, 1);
    assert.equal(bot.tg.callsOf('setMessageReaction').length, 2, 'no reaction in a private chat');
  } finally {
    await bot.close();
  }
});

test('TELEGRAM_ACK_REACTION set but empty: no reaction', async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: '111', TELEGRAM_ALLOWED_GROUPS: String(GROUP), TELEGRAM_ACK_REACTION: '' } });
  try {
    await bot.tg.user({ userId: 301, chatId: GROUP, type: 'supergroup', chatTitle: 'Team' }).say('@TestNameBot hi');
    await bot.tg.waitForBotMessages(GROUP, 1);
    assert.equal(bot.tg.callsOf('setMessageReaction').length, 0);
  } finally {
    await bot.close();
  }
});
