/**
 * A group's reminder limits count the whole group, not each forum topic (issue 33, item 8): the
 * 50 pending reminders and REMINDERS_PER_CHAT_PER_HOUR are shared by a group's topics, as its
 * flood limit and daily budget are (core/group.ts) — one member cannot set 50 per topic. Through
 * the real daemon: telegraf against the Bot API stand-in with the fake model scheduling, and a
 * clock the test moves for the hour.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTelegramBot, type TelegramTestBot } from '../../helpers/telegram.js';
import { startTestBot } from '../../helpers/app.js';
import { toolUser } from '../../helpers/reminders.js';
import { MAX_PENDING_PER_CHAT } from '../../../src/features/reminders/service.js';

const GROUP = -100123;
const OTHER = -100456;
const OWNER = 111;
const MEMBER = 301;

test(`a member cannot pass the ${MAX_PENDING_PER_CHAT} pending reminders by spreading them over a group's topics; another group has its own`, async () => {
  const at = () => new Date(Date.now() + 86_400_000).toISOString();
  const bot: TelegramTestBot = await startTelegramBot({
    // No streamed preview: on a loaded machine the group's placeholder ("⏰ checking reminders…")
    // was still the message's text when read; the limits, not streaming, are under test here.
    env: { TELEGRAM_ALLOWED_USERS: String(OWNER), TELEGRAM_ALLOWED_GROUPS: `${GROUP},${OTHER}`, STREAMING: 'off' },
    responder: toolUser((t) => [{ name: 'schedule_message', args: { at: at(), text: t.replace('@TestNameBot ', '') } }]),
  });
  const ask = async (chatId: number, text: string, thread?: number) => {
    const member = bot.tg.user({ userId: MEMBER, chatId, type: 'supergroup', chatTitle: 'Forum' });
    const n = bot.tg.botMessages(chatId).length;
    await member.say(`@TestNameBot ${text}`, thread === undefined ? {} : { is_topic_message: true, message_thread_id: thread });
    return (await bot.tg.waitForBotMessages(chatId, n + 1))[n]!.text;
  };
  try {
    const { reminders } = bot.app.parts;
    // 49 already pending, spread over two topics.
    for (let i = 0; i < MAX_PENDING_PER_CHAT - 1; i++)
      assert.ok((await reminders.schedule('telegram', `${GROUP}:${i % 2 ? 7 : 9}`, { at: at(), text: `r${i}` })).ok);
    assert.match(
      await ask(GROUP, 'the fiftieth', 11),
      /Scheduled reminder #50 .*\nNow is .* This group \(its topics together\) has 50 pending reminders \(limit 50\)/,
    );
    const refused = await ask(GROUP, 'one too many', 13);
    assert.match(refused, /Error: not scheduled — this group already has 50 pending reminders in its topics together \(the limit\); cancel some first/);
    assert.deepEqual(await reminders.list('telegram', `${GROUP}:13`), [], 'a fourth topic got none');
    assert.match(await ask(GROUP, 'nor in the general topic'), /Error: not scheduled — this chat already has 50 pending reminders/);
    assert.match(await ask(OTHER, 'another group'), /Scheduled reminder #51 [\s\S]* This chat has 1 pending reminder \(limit 50\)/);
  } finally {
    await bot.close();
  }
});

test("REMINDERS_PER_CHAT_PER_HOUR counts a group's topics together: the hour's last message folds the rest, a third topic waits for the hour", async () => {
  let clock = Date.parse('2026-03-10T08:00:00Z');
  const bot = await startTestBot({ env: { REMINDERS_PER_CHAT_PER_HOUR: '3' }, appOptions: { now: () => clock } });
  const sent: Array<{ chatId: string; text: string }> = [];
  const { reminders } = bot.app.parts;
  try {
    for (const chatId of [`${GROUP}:7`, `${GROUP}:9`, `${GROUP}:11`, String(OTHER)]) {
      for (const n of [1, 2]) assert.ok((await reminders.schedule('test', chatId, { at: '2026-03-10T09:00:00Z', text: `${chatId} #${n}` })).ok);
    }
    await reminders.start({ test: async (chatId, text) => void sent.push({ chatId, text }) });
    clock = Date.parse('2026-03-10T09:00:01Z');
    await reminders.runDue();
    // Each topic's messages in order (topics are separate queues, so they may interleave).
    const to = (chatId: string) => sent.filter((s) => s.chatId === chatId).map((s) => s.text);
    assert.deepEqual(to(`${GROUP}:7`), [`⏰ Reminder: ${GROUP}:7 #1`, `⏰ Reminder: ${GROUP}:7 #2`]);
    assert.deepEqual(to(`${GROUP}:9`), [
      `⏰ 2 reminders together (this group gets at most 3 reminder messages an hour, its topics together):\n• ${GROUP}:9 #1\n• ${GROUP}:9 #2`,
    ]);
    assert.deepEqual(to(`${GROUP}:11`), []);
    assert.equal((await reminders.list('test', `${GROUP}:11`)).length, 2, 'the third topic waits, its reminders kept');
    assert.deepEqual(to(String(OTHER)), [`⏰ Reminder: ${OTHER} #1`, `⏰ Reminder: ${OTHER} #2`], 'another group has its own hour');

    clock = Date.parse('2026-03-10T10:00:02Z');
    assert.equal(await reminders.runDue(), 2);
    assert.deepEqual(
      to(`${GROUP}:11`),
      [`⏰ Reminder (late — it was due Tue 10 Mar 2026, 09:00): ${GROUP}:11 #1`, `⏰ Reminder (late — it was due Tue 10 Mar 2026, 09:00): ${GROUP}:11 #2`],
      'an hour later the third topic gets its two',
    );
  } finally {
    await bot.close();
  }
});
