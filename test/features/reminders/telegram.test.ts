/**
 * Reminders on Telegram (real telegraf against the Bot API emulator, real daemon, fake LLM):
 * an allowed user's reminder arrives in their chat at its time; a stranger and an unlisted
 * group never reach the model, so they can never schedule anything.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTelegramBot } from '../../helpers/telegram.js';
import { lastUserText } from '../../helpers/fake-llm.js';
import { toolUser } from '../../helpers/reminders.js';
import { waitFor } from '../../helpers/wait.js';

const OWNER = 111;

test("an allowed user's reminder arrives in their Telegram chat; a stranger and an unlisted group cannot schedule", async () => {
  const bot = await startTelegramBot({
    env: { TELEGRAM_ALLOWED_USERS: String(OWNER) },
    responder: toolUser((t) =>
      /remind/.test(t) ? [{ name: 'schedule_message', args: { at: new Date(Date.now() + 1500).toISOString(), text: `from: ${t}` } }] : [],
    ),
  });
  try {
    await bot.app.parts.reminders.start({ telegram: (chatId, text) => bot.channel.send(chatId, text) });
    await bot.tg.user({ userId: 222, userName: 'mallory' }).say('remind me to open the door');
    await bot.tg.user({ userId: OWNER, chatId: -2002, type: 'group', chatTitle: 'Other' }).say('@TestNameBot remind us to pay');
    await bot.tg.user({ userId: OWNER }).say('remind me to stand up');

    const [confirm, reminder] = await bot.tg.waitForBotMessages(OWNER, 2);
    assert.match(confirm!.text, /Scheduled reminder #1/);
    assert.equal(reminder!.text, '⏰ Reminder: from: remind me to stand up');
    await waitFor(async () => (await bot.sessionFile(OWNER)).messages.some((m: { content: string }) => m.content.startsWith('⏰')), 5000, 'the session');

    assert.deepEqual([...new Set(bot.llm.chatRequests().map(lastUserText))], ['remind me to stand up'], 'only the owner reached the model');
    assert.deepEqual(await bot.app.parts.reminders.list('telegram', '222'), []);
    assert.deepEqual(await bot.app.parts.reminders.list('telegram', '-2002'), []);
  } finally {
    await bot.close();
  }
});
