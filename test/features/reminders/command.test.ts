/** `/reminders` and `/reminders cancel N` through the real daemon; /help lists the command. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBot } from '../../helpers/app.js';

test('/reminders lists pending reminders numbered soonest first; /reminders cancel N cancels that one, and it never fires', async () => {
  let clock = Date.parse('2026-06-01T10:00:00Z');
  const bot = await startTestBot({ env: { TZ: 'Europe/Berlin' }, appOptions: { now: () => clock } });
  const delivered: string[] = [];
  try {
    const [empty] = await bot.send('c1', '/reminders');
    assert.match(empty!, /^No pending reminders\. Ask me, e\.g\./);
    const { reminders } = bot.app.parts;
    await reminders.schedule('test', 'c1', { at: '2026-06-03T18:30:00+02:00', text: 'buy flowers' });
    await reminders.schedule('test', 'c1', { at: '2026-06-02T08:00:00+02:00', text: 'standup', repeat: '0 8 * * 1-5' });
    await reminders.schedule('test', 'c2', { at: '2026-06-02T08:00:00+02:00', text: 'not yours' });

    const [list] = await bot.send('c1', '/reminders');
    assert.equal(
      list,
      [
        '⏰ Pending reminders (Europe/Berlin):',
        '1. Tue 2 Jun 2026, 08:00 — standup (repeats: 0 8 * * 1-5)',
        '2. Wed 3 Jun 2026, 18:30 — buy flowers',
        'Cancel one with /reminders cancel N.',
      ].join('\n'),
    );
    assert.equal(await bot.send('c1', '/reminders cancel 3').then((r) => r[0]), 'There is no reminder 3: you have 2 pending. Send /reminders to see them.');
    assert.match((await bot.send('c1', '/reminders delete all'))[0]!, /use \/reminders to list them, or \/reminders cancel N/);
    assert.equal((await bot.send('c1', '/reminders cancel 2'))[0], 'Cancelled reminder 2: Wed 3 Jun 2026, 18:30 — buy flowers.');
    assert.match((await bot.send('c1', '/reminders'))[0]!, /^⏰ Pending reminders \(Europe\/Berlin\):\n1\. Tue 2 Jun 2026, 08:00 — standup/);

    await reminders.start({ test: async (chatId, text) => void delivered.push(`${chatId}: ${text}`) });
    clock = Date.parse('2026-06-02T06:00:05Z'); // 08:00:05 in Berlin
    await reminders.runDue();
    assert.deepEqual(delivered.sort(), ['c1: ⏰ Reminder: standup', 'c2: ⏰ Reminder: not yours']);
    clock = Date.parse('2026-06-03T16:30:05Z'); // the cancelled one's time
    await reminders.runDue();
    assert.equal(delivered.filter((d) => d.includes('buy flowers')).length, 0, 'the cancelled one never fires');
  } finally {
    await bot.close();
  }
});

test('/help lists /reminders', async () => {
  const bot = await startTestBot();
  try {
    const [help] = await bot.send('c1', '/help');
    assert.match(help!, /\/reminders — List your pending reminders; \/reminders cancel N cancels one/);
  } finally {
    await bot.close();
  }
});
