/**
 * A turn's note line and index rows are derived from the session log (issue 29 item 1): written
 * without waiting for fsync, and written again at the next start when a crash kept them from
 * being written — every answered exchange (and delivered reminder) once, none twice. And an
 * exchange is a question and its answer: a turn never answers a message the chat moved on from.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot, type TestBot } from '../../helpers/app.js';
import { tempDir } from '../../helpers/workspace.js';
import type { SqliteMemoryIndex } from '../../../src/index/sqlite-memory-index.js';
import { FileInbox } from '../../../src/queue/file-inbox.js';
import { MAX_RECOVERY_ATTEMPTS } from '../../../src/dispatch/intake.js';
import { textReply } from '../../../src/core/channel.js';
import type { InboundMessage } from '../../../src/core/message.js';

/** The exchanges' time: fixed, so the day's note is known whatever the clock says (no midnight flake). */
const AT = new Date('2026-11-24T10:00:00Z');
const noteFile = (ws: string, chat: string, day = '2026-11-24') => path.join(ws, 'memory', `test:${chat}`, `${day}.md`);

/** Ends a run the way a kill does: nothing flushed or forgotten on purpose (the session log keeps its lines). */
async function crash(bot: TestBot): Promise<void> {
  const s = bot.app.parts;
  bot.app.dispatcher.close();
  s.reminders.stop();
  await s.sessions.close();
  s.index.close();
  s.reminders.close();
  s.usage.close();
  await bot.llm.close();
}

function rows(bot: TestBot, content: string): number {
  return (
    (bot.app.parts.index as SqliteMemoryIndex).database!.prepare("SELECT COUNT(*) AS n FROM memories WHERE kind = 'episode' AND content = ?").get(content) as {
      n: number;
    }
  ).n;
}

test('a crash between the reply and its note line and index rows: the next start writes them from the session log, once; a third start writes nothing', async () => {
  const ws = await tempDir();
  try {
    const first = await startTestBot({ env: { WORKSPACE_DIR: ws.dir, TZ: 'UTC' } });
    await first.send('1', 'my cat is called Pepper', { receivedAt: AT });
    await first.send('1', 'and my dog is called Rex', { receivedAt: AT });
    // What the kill cost: the second exchange's note line and index rows were never written.
    const note = await readFile(noteFile(ws.dir, '1'), 'utf8');
    const lines = note.trimEnd().split('\n');
    assert.equal(lines.length, 2);
    await writeFile(noteFile(ws.dir, '1'), `${lines[0]}\n`);
    (first.app.parts.index as SqliteMemoryIndex)
      .database!.prepare("DELETE FROM memories WHERE content IN ('and my dog is called Rex', 'echo: and my dog is called Rex')")
      .run();
    await crash(first);

    const second = await startTestBot({ env: { WORKSPACE_DIR: ws.dir, TZ: 'UTC' } });
    try {
      assert.equal(await readFile(noteFile(ws.dir, '1'), 'utf8'), note, 'every exchange has its line, in order, once');
      for (const text of ['my cat is called Pepper', 'echo: my cat is called Pepper', 'and my dog is called Rex', 'echo: and my dog is called Rex']) {
        assert.equal(rows(second, text), 1, text);
      }
      const rebuilt = second.logs.lines().find((l) => /a crash kept from being written/.test(l.msg));
      assert.deepEqual([rebuilt?.notes, rebuilt?.rows], [1, 2]);
      // The rebuilt rows are found like any others.
      assert.ok(second.app.parts.index.search('dog Rex', { scope: 'test:1', limit: 3 }).some((h) => h.content === 'and my dog is called Rex'));
      await second.send('1', 'one more', { receivedAt: AT });
    } finally {
      await second.close();
    }

    const third = await startTestBot({ env: { WORKSPACE_DIR: ws.dir, TZ: 'UTC' } });
    try {
      const text = await readFile(noteFile(ws.dir, '1'), 'utf8');
      assert.equal(text.trimEnd().split('\n').length, 3, 'a clean stop left nothing to write again');
      assert.equal(rows(third, 'one more'), 1);
      assert.equal(third.logs.lines().filter((l) => /a crash kept from being written/.test(l.msg)).length, 0);
    } finally {
      await third.close();
    }
  } finally {
    await ws.cleanup();
  }
});

test('a crash right after a reminder was logged: its note line is written at the next start, once', async () => {
  const ws = await tempDir();
  let now = Date.parse('2026-11-24T09:00:00Z');
  try {
    const first = await startTestBot({ env: { WORKSPACE_DIR: ws.dir, TZ: 'UTC' }, appOptions: { now: () => now } });
    assert.ok((await first.app.parts.reminders.schedule('test', '1', { at: '2026-11-24T09:30:00Z', text: 'water the plants' })).ok);
    const delivered: string[] = [];
    await first.app.parts.reminders.start({ test: async (_chat, text) => void delivered.push(text) });
    now = Date.parse('2026-11-24T09:31:00Z');
    await first.app.parts.reminders.runDue();
    assert.equal(delivered.length, 1);
    const note = noteFile(ws.dir, '1');
    const line = (await readFile(note, 'utf8')).trimEnd();
    assert.match(line, /^\[09:31\] Reminder \(set by a user\): ⏰ Reminder: water the plants$/);
    await writeFile(note, '');
    await crash(first);

    const second = await startTestBot({ env: { WORKSPACE_DIR: ws.dir, TZ: 'UTC' }, appOptions: { now: () => now } });
    try {
      assert.equal((await readFile(note, 'utf8')).trimEnd(), line);
    } finally {
      await second.close();
    }
  } finally {
    await ws.cleanup();
  }
});

/** A message of chat 1 as the test channel hands it over. */
const inbound = (text: string, messageId: string, receivedAt: Date): InboundMessage => ({
  channel: 'test',
  chatId: '1',
  userId: 'u-1',
  userName: 'Tester',
  text,
  messageId,
  receivedAt,
  role: 'owner',
});

/** What a killed run leaves in the journal: each message accepted, its handling started `starts` times, never done. */
async function leftOpen(dir: string, entries: Array<[InboundMessage, number]>): Promise<void> {
  const inbox = FileInbox.inWorkspace(dir);
  const ids: Array<[string, number]> = [];
  for (const [m, starts] of entries) {
    const { id, durable } = inbox.accept(m);
    await durable;
    ids.push([id, starts]);
  }
  await inbox.shutdown();
  for (const [id, starts] of ids) for (let i = 0; i < starts; i++) await appendFile(inbox.file, `${JSON.stringify({ t: 'start', id })}\n`);
}

test('risk: a copy Telegram sent again of a message given up after restarts is answered — with the answer to the later message, the note pairs the two, and that reply never gets its own note line', async () => {
  const ws = await tempDir();
  // What the kills left: X and Y each started twice and killed mid-turn (given up at this start),
  // and a second journal entry for X — Telegram sent it again because a kill came before its
  // update id was recorded — waiting behind them, never started.
  const x = inbound('what is the capital of Peru', '41', AT);
  const y = inbound('and of Chile', '42', new Date(AT.getTime() + 1000));
  const again = { ...x, receivedAt: new Date(AT.getTime() + 5000) };
  await leftOpen(ws.dir, [
    [x, MAX_RECOVERY_ATTEMPTS],
    [y, MAX_RECOVERY_ATTEMPTS],
    [again, 0],
  ]);
  const bot = await startTestBot({ env: { WORKSPACE_DIR: ws.dir, TZ: 'UTC' } });
  try {
    const replies: string[] = [];
    await bot.app.recover(() => textReply(async (t) => void replies.push(t)));
    await bot.app.parts.sessions.flush();
    assert.equal(replies.length, 2, `X and Y are each told once that they were given up, and nothing more: ${JSON.stringify(replies)}`);
    for (const r of replies) assert.match(r, new RegExp(`failed ${MAX_RECOVERY_ATTEMPTS} times in a row`));
    assert.equal(bot.llm.chatRequests().length, 0, 'the copy of a message given up is not sent to the model');
    assert.equal(await readFile(noteFile(ws.dir, '1'), 'utf8').catch(() => ''), '', 'no note line pairs X with an answer to Y');
  } finally {
    await bot.close();
    await ws.cleanup();
  }
});
