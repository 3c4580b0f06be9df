/**
 * schedule_message / list_scheduled / cancel_scheduled as the model uses them (fake LLM calling
 * the tools through the real daemon): bad times are refused with a reason the model can act
 * on, nothing is stored for them, and one chat cannot see or cancel another chat's reminders.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBot } from '../../helpers/app.js';
import { toolUser, type PlannedCall } from '../../helpers/reminders.js';
import { text, toolCalls } from '../../helpers/fake-llm.js';

const inHours = (h: number) => new Date(Date.now() + h * 3600_000).toISOString();

test('past, unreadable, offset-less, over-5-years times and bad repeats are refused to the model with the reason; nothing is stored', async () => {
  const cases: Array<{ args: Record<string, unknown>; reason: RegExp }> = [
    { args: { at: new Date(Date.now() - 60_000).toISOString(), text: 'too late' }, reason: /is in the past \(now is .*\); ask the user for a future time/ },
    { args: { at: 'tomorrow at 9', text: 'x' }, reason: /"tomorrow at 9" is not an ISO 8601 date-time with offset/ },
    { args: { at: '2030-01-01T09:00:00', text: 'x' }, reason: /has no UTC offset; add the user's offset/ },
    { args: { at: '2027-02-30T09:00:00+01:00', text: 'x' }, reason: /is not a real date or time/ },
    { args: { at: new Date(Date.now() + 6 * 366 * 86_400_000).toISOString(), text: 'x' }, reason: /more than 5 years ahead/ },
    { args: { at: inHours(1), text: 'x', repeat: 'every now and then' }, reason: /is not "daily", "weekly" or a 5-field cron expression/ },
    { args: { at: inHours(1), text: 'x', repeat: '* * * * *' }, reason: /would fire more often than every 15 minutes/ },
    { args: { at: inHours(1), text: '   ' }, reason: /the reminder text is empty/ },
  ];
  let i = 0;
  const bot = await startTestBot({ responder: toolUser(() => [{ name: 'schedule_message', args: cases[i]!.args }]) });
  try {
    for (; i < cases.length; i++) {
      const [reply] = await bot.send('c1', `case ${i}`);
      assert.match(reply!, /^done: Error: not scheduled — /, `case ${i} refused`);
      assert.match(reply!, cases[i]!.reason, `case ${i} says why`);
    }
    assert.deepEqual(await bot.app.parts.reminders.list('test', 'c1'), []);
  } finally {
    await bot.close();
  }
});

test('list_scheduled and cancel_scheduled act on this chat only', async () => {
  let plan: PlannedCall[] = [];
  const bot = await startTestBot({ responder: toolUser(() => plan) });
  try {
    plan = [
      { name: 'schedule_message', args: { at: inHours(2), text: 'feed the cat' } },
      { name: 'schedule_message', args: { at: inHours(1), text: 'call mum', repeat: 'weekly' } },
    ];
    await bot.send('c1', 'two reminders please');
    plan = [{ name: 'list_scheduled', args: {} }];
    const [listed] = await bot.send('c1', 'what is scheduled?');
    // Soonest first, with ids the model can cancel by.
    assert.match(listed!, /#2 .*repeat weekly: call mum\n#1 .*: feed the cat/);
    const [otherList] = await bot.send('c2', 'what is scheduled?');
    assert.match(otherList!, /done: No pending reminders in this chat\./);

    plan = [{ name: 'cancel_scheduled', args: { id: 1 } }];
    const [refused] = await bot.send('c2', 'cancel #1');
    assert.match(refused!, /Error: there is no pending reminder #1 in this chat/);
    assert.equal((await bot.app.parts.reminders.list('test', 'c1')).length, 2, 'another chat cannot cancel it');
    const [cancelled] = await bot.send('c1', 'cancel #1');
    assert.match(cancelled!, /Cancelled reminder #1 \(.*\): "feed the cat"/);
    assert.deepEqual(
      (await bot.app.parts.reminders.list('test', 'c1')).map((r) => r.text),
      ['call mum'],
    );
  } finally {
    await bot.close();
  }
});

test('"tomorrow at 9": the model learns the zone from the tool and the time from get_current_time, and the reminder lands at 09:00 local', async () => {
  // A model doing what the description asks: get_current_time, then tomorrow 09:00 at the offset it was given.
  const bot = await startTestBot({
    env: { TZ: 'America/New_York' },
    responder: (req) => {
      const msgs = req.body.messages as Array<{ role: string; content: string }>;
      const last = msgs.at(-1)!;
      if (last.role === 'user') return toolCalls([{ name: 'get_current_time', args: {} }]);
      if (last.content.startsWith('{')) {
        const now = JSON.parse(last.content) as { iso: string };
        const [y, m, d] = now.iso.slice(0, 10).split('-').map(Number) as [number, number, number];
        const tomorrow = new Date(Date.UTC(y, m - 1, d + 1)).toISOString().slice(0, 10);
        return toolCalls([{ name: 'schedule_message', args: { at: `${tomorrow}T09:00:00${now.iso.slice(19)}`, text: 'call the dentist' } }]);
      }
      return text(`done: ${last.content}`);
    },
  });
  try {
    const [reply] = await bot.send('c1', 'remind me tomorrow at 9 to call the dentist');
    const def = bot.llm.chatRequests()[0]!.body.tools.find((t: { function: { name: string } }) => t.function.name === 'schedule_message');
    assert.match(def.function.description, /time zone: America\/New_York; get_current_time/);
    assert.match(reply!, /done: Scheduled reminder #1 for \w+day \d+ \w+ \d{4}, 09:00 \(America\/New_York, UTC-0[45]:00\).*\nNow is /);
    const [r] = await bot.app.parts.reminders.list('test', 'c1');
    const local = new Intl.DateTimeFormat('en-CA', {
      timeZone: 'America/New_York',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    }).format(new Date(r!.dueAt));
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/New_York' }).format(new Date());
    assert.match(local, /, 09:00$/);
    assert.ok(local.slice(0, 10) > today, `${local} is after today (${today})`);
  } finally {
    await bot.close();
  }
});
