/**
 * Reminders through the real daemon (createApp, fake LLM calling the tools, real SQLite and
 * files): delivery at the due time into the chat, the session and the daily note; a daily
 * repeat on two consecutive days (a clock the test moves); the per-chat limit; a forgotten chat
 * loses its reminders without a byte left in schedules.db.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot, fileSessions } from '../../helpers/app.js';
import { toolUser } from '../../helpers/reminders.js';
import { patient, waitFor } from '../../helpers/wait.js';
import { localDate } from '../../../src/memory/notes.js';
import { MAX_PENDING_PER_CHAT } from '../../../src/features/reminders/service.js';

// Far enough ahead that the confirming turn ends first, also on a loaded machine (at load ~12 a
// turn took longer than the 1.5 s this once was, and the reminder came before the confirmation).
const DUE_IN_MS = patient(3_000);

test('a reminder set through schedule_message arrives at its time, in the session (marked a reminder) and a line in the daily note', async () => {
  const bot = await startTestBot({
    env: { TZ: 'Europe/Berlin' },
    responder: toolUser((t) =>
      t.startsWith('remind me') ? [{ name: 'schedule_message', args: { at: new Date(Date.now() + DUE_IN_MS).toISOString(), text: 'stretch your legs' } }] : [],
    ),
  });
  const delivered: Array<{ chatId: string; text: string }> = [];
  try {
    await bot.app.parts.reminders.start({ test: async (chatId, text) => void delivered.push({ chatId, text }) });
    const [confirm] = await bot.send('c1', 'remind me in a moment to stretch');
    // The model got the time back in the user's zone, with the offset, to confirm in words.
    assert.match(confirm!, /done: Scheduled reminder #1 for \w+day \d+ \w+ \d{4}, \d\d:\d\d \(Europe\/Berlin, UTC\+0[12]:00\)/);
    assert.equal(delivered.length, 0, 'not before its time');

    await waitFor(() => delivered.length > 0, 10_000, 'the reminder');
    assert.deepEqual(delivered, [{ chatId: 'c1', text: '⏰ Reminder: stretch your legs' }]);
    await bot.app.parts.sessions.flush();
    const session = JSON.parse(await readFile(fileSessions(bot).fileFor('test', 'c1'), 'utf8'));
    const last = session.messages.at(-1);
    assert.equal(last.role, 'assistant');
    assert.equal(last.content, '⏰ Reminder: stretch your legs');
    const note = await bot.app.parts.memory.forChat('test', 'c1').readNote(localDate(new Date(), 'Europe/Berlin'));
    assert.match(note, /\[\d\d:\d\d\] Reminder \(set by a user\): ⏰ Reminder: stretch your legs/);
    assert.deepEqual(await bot.app.parts.reminders.list('test', 'c1'), [], 'a one-time reminder is no longer pending');

    // The next turn's model sees it in the history ("did you remind me?"), as a note of what was delivered.
    await bot.send('c1', 'did you remind me?');
    const history = bot.llm
      .chatRequests()
      .at(-1)!
      .body.messages.map((m: { content: string }) => m.content);
    assert.ok(history.some((c: string | null) => c?.startsWith('[A reminder was delivered to this chat.') && c.includes('"⏰ Reminder: stretch your legs"')));
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(delivered.length, 1, 'delivered once');
  } finally {
    await bot.close();
  }
});

test('a daily reminder fires on two consecutive days, once each, and stays pending for the third', async () => {
  let clock = Date.parse('2026-03-10T07:00:00Z');
  const bot = await startTestBot({
    env: { TZ: 'Europe/Berlin' },
    appOptions: { now: () => clock },
    responder: toolUser(() => [{ name: 'schedule_message', args: { at: '2026-03-10T09:00:00+01:00', text: 'take the pills', repeat: 'daily' } }]),
  });
  const delivered: string[] = [];
  try {
    await bot.app.parts.reminders.start({ test: async (_c, text) => void delivered.push(text) });
    const [confirm] = await bot.send('c1', 'remind me every day at 9 to take the pills');
    assert.match(confirm!, /Scheduled reminder #1 for Tuesday 10 March 2026, 09:00 \(Europe\/Berlin, UTC\+01:00\).*repeating daily/);

    clock = Date.parse('2026-03-10T08:00:02Z'); // 09:00:02 in Berlin
    assert.equal(await bot.app.parts.reminders.runDue(), 1);
    assert.equal(await bot.app.parts.reminders.runDue(), 0, 'not twice on the same day');
    clock += 24 * 3600 * 1000;
    assert.equal(await bot.app.parts.reminders.runDue(), 1);
    assert.deepEqual(delivered, ['⏰ Reminder: take the pills', '⏰ Reminder: take the pills']);
    const [next] = await bot.app.parts.reminders.list('test', 'c1');
    assert.equal(new Date(next!.dueAt).toISOString(), '2026-03-12T08:00:00.000Z');
    const [listing] = await bot.send('c1', '/reminders');
    assert.match(listing!, /1\. Thu 12 Mar 2026, 09:00 — take the pills \(repeats: daily\)/);
  } finally {
    await bot.close();
  }
});

test('a daily reminder missed for three days while stopped is delivered once, late, and moves on to its next time', async () => {
  let clock = Date.parse('2026-03-10T07:00:00Z');
  const bot = await startTestBot({ env: { TZ: 'Europe/Berlin' }, appOptions: { now: () => clock } });
  const delivered: string[] = [];
  try {
    const r = await bot.app.parts.reminders.schedule('test', 'c1', { at: '2026-03-10T09:00:00+01:00', text: 'water the plants', repeat: 'daily' });
    assert.ok(r.ok);
    clock = Date.parse('2026-03-13T10:00:00Z');
    assert.equal(await bot.app.parts.reminders.start({ test: async (_c, text) => void delivered.push(text) }), 1);
    assert.deepEqual(delivered, ['⏰ Reminder (late — it was due Tue 10 Mar 2026, 09:00, while I was not running): water the plants']);
    assert.equal(new Date((await bot.app.parts.reminders.list('test', 'c1'))[0]!.dueAt).toISOString(), '2026-03-14T08:00:00.000Z');
  } finally {
    await bot.close();
  }
});

test(`a chat has at most ${MAX_PENDING_PER_CHAT} pending reminders; the model is told why the next is refused`, async () => {
  const bot = await startTestBot({
    responder: toolUser(() => [{ name: 'schedule_message', args: { at: new Date(Date.now() + 86_400_000).toISOString(), text: 'one too many' } }]),
  });
  try {
    for (let i = 0; i < MAX_PENDING_PER_CHAT; i++) {
      assert.ok((await bot.app.parts.reminders.schedule('test', 'c1', { at: new Date(Date.now() + 3600_000 + i * 60_000).toISOString(), text: `r${i}` })).ok);
    }
    const [reply] = await bot.send('c1', 'remind me once more');
    assert.match(reply!, /Error: not scheduled — this chat already has 50 pending reminders \(the limit\); cancel some first/);
    assert.equal((await bot.app.parts.reminders.list('test', 'c1')).length, MAX_PENDING_PER_CHAT);
    // Another chat has its own limit.
    const [other] = await bot.send('c2', 'remind me once more');
    assert.match(other!, /Scheduled reminder #51/);
  } finally {
    await bot.close();
  }
});

test("deleteChat (for purge and forget) removes a chat's reminders and leaves no byte of their text in schedules.db", async () => {
  const bot = await startTestBot();
  try {
    const at = new Date(Date.now() + 3600_000).toISOString();
    await bot.app.parts.reminders.schedule('test', 'c1', { at, text: 'SECRET-ZEBRA-4471' });
    await bot.app.parts.reminders.schedule('test', 'c2', { at, text: 'other chat keeps this' });
    const onDisk = async () => {
      const parts = await Promise.all(['schedules.db', 'schedules.db-wal'].map((f) => readFile(path.join(bot.workspace, f)).catch(() => Buffer.alloc(0))));
      return Buffer.concat(parts).includes('SECRET-ZEBRA-4471');
    };
    assert.equal(await onDisk(), true, 'the text is on disk before');
    assert.equal(await bot.app.parts.reminders.deleteChat('test', 'c1'), 1);
    assert.equal(await onDisk(), false, 'no trace after');
    assert.deepEqual(await bot.app.parts.reminders.list('test', 'c1'), []);
    assert.equal((await bot.app.parts.reminders.list('test', 'c2')).length, 1);
  } finally {
    await bot.close();
  }
});
