/**
 * Limits per group, not per forum topic (issue 25, item 4), and /compact over the budget (item 7),
 * through the real daemon, telegraf and the Bot API stand-in: the topics of one group share its
 * RATE_LIMIT_PER_MINUTE and its DAILY_TOKEN_BUDGET (sessions and memory stay per topic); another
 * group keeps its own; the owners' exemption still holds.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTelegramBot, type EmuUser, type TelegramTestBot } from '../helpers/telegram.js';

const GROUP = -100123;
const OTHER = -100456;
const OWNER = 111;
const MEMBER = 301;
const topic = (id: number) => ({ is_topic_message: true, message_thread_id: id });

async function groupBot(env: Record<string, string>): Promise<TelegramTestBot> {
  return startTelegramBot({ env: { TELEGRAM_ALLOWED_USERS: String(OWNER), TELEGRAM_ALLOWED_GROUPS: `${GROUP},${OTHER}`, ...env } });
}

/** Sends `text` as `who` (in a topic when given); the bot's next message in that chat. */
async function ask(bot: TelegramTestBot, who: EmuUser, text: string, thread?: number): Promise<{ text: string; thread: number | undefined }> {
  const n = bot.tg.botMessages(who.chatId).length;
  await who.say(text, thread === undefined ? {} : topic(thread));
  const m = (await bot.tg.waitForBotMessages(who.chatId, n + 1))[n]!;
  return { text: m.text, thread: m.raw.message_thread_id };
}

const inGroup = (bot: TelegramTestBot, userId: number, chatId = GROUP) => bot.tg.user({ userId, chatId, type: 'supergroup', chatTitle: 'Forum' });

test('RATE_LIMIT_PER_MINUTE counts the whole group: two topics share one limit; another group has its own', async () => {
  const bot = await groupBot({ RATE_LIMIT_PER_MINUTE: '2' });
  try {
    const member = inGroup(bot, MEMBER);
    assert.deepEqual(await ask(bot, member, '@TestNameBot one', 7), { text: 'echo: one', thread: 7 });
    assert.deepEqual(await ask(bot, member, '@TestNameBot two', 9), { text: 'echo: two', thread: 9 });
    const over = await ask(bot, member, '@TestNameBot three', 9);
    assert.equal(over.thread, 9, 'the line goes to the topic the message came from');
    assert.match(over.text, /^That is more than 2 messages in a minute in this group \(its topics together\), so I saved this one without answering it/);
    assert.equal(bot.llm.chatRequests().length, 2, 'the third message never reached the model');
    // Its words are kept in its own topic's session.
    assert.deepEqual(
      (await bot.sessionFile(`${GROUP}%3A9`)).messages.map((m: { content: string }) => m.content),
      ['two', 'echo: two', 'three'],
    );

    assert.deepEqual(
      await ask(bot, inGroup(bot, MEMBER, OTHER), '@TestNameBot hello'),
      { text: 'echo: hello', thread: undefined },
      'another group is not limited by this one',
    );
  } finally {
    await bot.close();
  }
});

test('DAILY_TOKEN_BUDGET counts the whole group: once its topics together used it, every topic gets the line; owners stay exempt; /status shows the group total', async () => {
  // Every fake answer reports 15 tokens: two answers (30) pass a budget of 20.
  const bot = await groupBot({ DAILY_TOKEN_BUDGET: '20' });
  try {
    const member = inGroup(bot, MEMBER);
    assert.equal((await ask(bot, member, '@TestNameBot one', 7)).text, 'echo: one');
    assert.equal((await ask(bot, member, '@TestNameBot two', 9)).text, 'echo: two', '15 of 20 used: still under');
    const before = bot.llm.requests.length;
    const refused = await ask(bot, member, '@TestNameBot three', 11);
    assert.equal(refused.thread, 11);
    assert.match(
      refused.text,
      /^This group \(its topics together\) has used its daily budget of 20 tokens \(30 today\), so your message was saved but not sent to the model\. The budget resets at midnight \(UTC\), in (\d+ h )?\d+ min\.$/,
    );
    assert.equal(bot.llm.requests.length, before, 'nothing reached the model');

    const owner = inGroup(bot, OWNER);
    assert.equal((await ask(bot, owner, '@TestNameBot owner here', 11)).text, 'echo: owner here', 'the owner has no budget');
    assert.match(
      (await ask(bot, owner, '/status full', 7)).text,
      /^Tokens today: 15 \(answers 15, .* · daily budget 20 for the whole group \(45 used by its topics together, 100\.0%\)$/m,
    );
    assert.match((await ask(bot, member, '/status', 7)).text, /^Tokens today: 15 in this topic, 45 in the group, of its daily budget of 20 \(100\.0%\)$/m);
    assert.equal((await ask(bot, inGroup(bot, MEMBER, OTHER), '@TestNameBot hello')).text, 'echo: hello', 'another group has its own budget');
  } finally {
    await bot.close();
  }
});

test('/compact over the daily budget says the budget, what was used and when it resets — not "the model was unavailable" — and compacts nothing', async () => {
  const bot = await startTelegramBot({ env: { TELEGRAM_DM_POLICY: 'open', DAILY_TOKEN_BUDGET: '20' } });
  try {
    const user = bot.tg.user({ userId: 404 });
    for (const words of ['one', 'two']) await user.say(words);
    await bot.tg.waitForBotMessages(404, 2);
    const before = bot.llm.requests.length;
    await user.say('/compact 1');
    const reply = (await bot.tg.waitForBotMessages(404, 3))[2]!.text;
    assert.match(
      reply,
      /^\/compact needs the model to write the summary, and this chat has used its daily budget of 20 tokens \(30 today\), so nothing was compacted\. The budget resets at midnight \(UTC\), in (\d+ h )?\d+ min\.$/,
    );
    assert.doesNotMatch(reply, /unavailable/);
    assert.equal(bot.llm.requests.length, before, 'no LLM call');
    assert.equal((await bot.sessionFile(404)).messages.length, 4, 'the conversation is as it was');
  } finally {
    await bot.close();
  }
});
