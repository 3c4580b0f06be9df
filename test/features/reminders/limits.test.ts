/**
 * The limits on reminders, through the real daemon (createApp, the fake model calling
 * schedule_message, real SQLite, a clock the test moves): a repeat is judged by how often it
 * really fires, on whichever day, and a chat gets at most REMINDERS_PER_CHAT_PER_HOUR reminder
 * messages an hour, the rest folded into one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBot } from '../../helpers/app.js';
import { toolUser } from '../../helpers/reminders.js';
import { shortestGap } from '../../../src/features/reminders/time.js';

/** A daemon in Europe/Berlin at `clock`; the user's message is "<at> | <repeat>" and the model schedules exactly that. */
function schedulingBot(clock: number) {
  return startTestBot({
    env: { TZ: 'Europe/Berlin' },
    appOptions: { now: () => clock },
    responder: toolUser((t) => {
      const [at, repeat] = t.split(' | ');
      return [{ name: 'schedule_message', args: { at, text: `check ${repeat}`, repeat } }];
    }),
  });
}

test('a repeat is judged by its real firing rate over a year: "* * 15 * *" refused, "*/15 * * * *" allowed whatever `at` is, a DST night counts', async () => {
  const bot = await schedulingBot(Date.parse('2026-01-01T08:00:00Z'));
  try {
    const ask = async (at: string, repeat: string) => (await bot.send('c1', `${at} | ${repeat}`))[0]!;
    // Every minute of the 15th: the first 8 days from the 1st never showed it.
    assert.match(
      await ask('2026-01-01T10:00:00+01:00', '* * 15 * *'),
      /Error: not scheduled — repeat "\* \* 15 \* \*" would fire more often than every 15 minutes \(every minute at times\)/,
    );
    // Quarter-hourly from 10:07: the 8 minutes to 10:15 are the `at`, not the repeat.
    assert.match(await ask('2026-01-01T10:07:00+01:00', '*/15 * * * *'), /Scheduled reminder #\d+ .*repeating \*\/15 \* \* \* \*/);
    // 01:55 and 03:05 are 70 minutes apart on the clock, 10 on the night it skips 02:00–03:00 (29 March).
    assert.match(
      await ask('2026-01-01T10:00:00+01:00', '5,55 1,3 * * *'),
      /Error: not scheduled — repeat "5,55 1,3 \* \* \*" would fire more often than every 15 minutes \(every 10 minutes at times\)/,
    );
    // 23:55 and 00:00 are 5 minutes apart across midnight, every day...
    assert.match(await ask('2026-01-01T10:00:00+01:00', '0,55 0,23 * * *'), /Error: not scheduled/);
    // ...but not when it fires on Mondays only.
    assert.match(await ask('2026-01-01T10:00:00+01:00', '0,55 0,23 * * 1'), /Scheduled reminder/);
    assert.match(await ask('2026-01-01T10:00:00+01:00', '30 8 * * 1-5'), /Scheduled reminder/);
    // Ten minutes apart once a year, eleven months ahead.
    assert.match(await ask('2026-01-01T10:00:00+01:00', '0,10 9 1 12 *'), /Error: not scheduled/);
    assert.equal((await bot.app.parts.reminders.list('test', 'c1')).length, 3);
  } finally {
    await bot.close();
  }
});

test('a rare firing day is judged wherever it is: "* * 29 2 *" two years ahead is refused, not let fire every minute that day', async () => {
  // 1 March 2026: the next 29 February is 2028, the next one on a Monday 2044.
  const bot = await schedulingBot(Date.parse('2026-03-01T08:00:00Z'));
  try {
    const ask = async (repeat: string) => (await bot.send('c1', `2026-03-02T10:00:00+01:00 | ${repeat}`))[0]!;
    const refused = (repeat: string, every: string) =>
      new RegExp(`Error: not scheduled — repeat "${repeat.replace(/[*]/g, '\\*')}" would fire more often than every 15 minutes \\(every ${every} at times\\)`);
    for (const [repeat, every] of [
      ['* * 29 2 *', 'minute'],
      ['* 3 29 2 1', 'minute'],
      ['*/5 * 31 12 *', '5 minutes'],
      // 23:55 on 28 February, 00:00 on the 29th: only in a leap year.
      ['0,55 0,23 28,29 2 *', '5 minutes'],
      // 31 March on a Sunday (2030) is the night Berlin skips 02:00–03:00: 01:55 and 03:05 are 10 minutes apart.
      ['5,55 1,3 31 3 0', '10 minutes'],
    ] as const)
      assert.match(await ask(repeat), refused(repeat, every));
    // A day no date ever is: refused as no expression, not scheduled to fail on delivery.
    assert.match(await ask('0 9 31 * 1#1'), /Error: not scheduled — repeat "0 9 31 \* 1#1" is not "daily", "weekly" or a 5-field cron expression/);
    // Rare days at a sane pace are welcome.
    assert.match(await ask('0 9 29 2 *'), /Scheduled reminder #\d+ .*repeating 0 9 29 2 \*/);
    assert.match(await ask('0,30 9 29 2 1'), /Scheduled reminder #\d+ .*repeating 0,30 9 29 2 1/);
    assert.deepEqual(
      (await bot.app.parts.reminders.list('test', 'c1')).map((r) => r.repeat),
      ['0 9 29 2 *', '0,30 9 29 2 1'],
    );
  } finally {
    await bot.close();
  }
});

test('the firing rate is found by day, not by walking every fire: a year of a quarter-hourly repeat, a never-twice one', () => {
  const from = Date.parse('2026-01-01T00:00:00Z');
  const year = from + 366 * 86_400_000;
  assert.equal(shortestGap('*/15 * * * *', 'Europe/Berlin', from, year), 15 * 60_000);
  assert.equal(shortestGap('0 9 L * *', 'UTC', from, year), 28 * 86_400_000, 'last day of the month: February to March is the shortest');
  assert.equal(shortestGap('0 0 29 2 *', 'UTC', from, year), null, 'no 29 February in 2026');
  assert.equal(shortestGap('0,5 9 * * 1#2', 'UTC', from, year), 5 * 60_000, "the second Monday's two fires");
  assert.equal(shortestGap('* * 29 2 *', 'UTC', from, year), 60_000, 'its times of day count though no 29 February is near');
});

test('at most REMINDERS_PER_CHAT_PER_HOUR reminder messages per chat an hour: the rest come folded into one, then wait for the hour', async () => {
  let clock = Date.parse('2026-03-10T08:00:00Z');
  const bot = await startTestBot({ env: { REMINDERS_PER_CHAT_PER_HOUR: '3' }, appOptions: { now: () => clock } });
  const sent: Array<{ chatId: string; text: string }> = [];
  const { reminders } = bot.app.parts;
  try {
    for (let i = 1; i <= 6; i++) assert.ok((await reminders.schedule('test', 'c1', { at: '2026-03-10T09:00:00Z', text: `task ${i}` })).ok);
    assert.ok((await reminders.schedule('test', 'c2', { at: '2026-03-10T09:00:00Z', text: 'other chat' })).ok);
    await reminders.start({ test: async (chatId, text) => void sent.push({ chatId, text }) });
    clock = Date.parse('2026-03-10T09:00:01Z');
    assert.equal(await reminders.runDue(), 7, 'every occurrence delivered');
    const c1 = sent.filter((s) => s.chatId === 'c1').map((s) => s.text);
    assert.deepEqual(c1, [
      '⏰ Reminder: task 1',
      '⏰ Reminder: task 2',
      '⏰ 4 reminders together (this chat gets at most 3 reminder messages an hour):\n• task 3\n• task 4\n• task 5\n• task 6',
    ]);
    assert.deepEqual(
      sent.filter((s) => s.chatId === 'c2').map((s) => s.text),
      ['⏰ Reminder: other chat'],
      'another chat has its own hour',
    );
    // Once, never twice: the folded message carries every occurrence it delivered, each marked sent.
    await bot.app.parts.sessions.flush();
    const session = await bot.app.parts.sessions.getOrCreate('test', 'c1');
    const marks = session.messages.filter((m) => m.reminder).map((m) => m.reminder!.split(' ').length);
    assert.deepEqual(marks, [1, 1, 4]);
    assert.deepEqual(
      (await reminders['deps'].store.deliveries('test:c1')).map((d: { state: string }) => d.state),
      Array(6).fill('sent'),
    );

    // The hour's messages are used: two more due ten minutes later wait...
    for (const t of ['later 1', 'later 2']) await reminders.schedule('test', 'c1', { at: '2026-03-10T09:10:00Z', text: t });
    clock = Date.parse('2026-03-10T09:10:01Z');
    assert.equal(await reminders.runDue(), 0);
    assert.equal(sent.length, 4);
    assert.equal((await reminders.list('test', 'c1')).length, 2, 'kept, not dropped');
    // ...until the first message of the hour is an hour old.
    clock = Date.parse('2026-03-10T10:00:02Z');
    assert.equal(await reminders.runDue(), 2);
    assert.deepEqual(
      sent.slice(4).map((s) => s.text),
      ['⏰ Reminder (late — it was due Tue 10 Mar 2026, 09:10): later 1', '⏰ Reminder (late — it was due Tue 10 Mar 2026, 09:10): later 2'],
    );
  } finally {
    await bot.close();
  }
});
