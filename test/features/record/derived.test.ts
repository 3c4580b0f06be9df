/**
 * A turn's note line and index rows are derived from the session log (issue 29 item 1): written
 * without waiting for fsync, and written again at the next start when a crash kept them from
 * being written — every answered exchange (and delivered reminder) once, none twice.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startTestBot, type TestBot } from '../../helpers/app.js';
import { tempDir } from '../../helpers/workspace.js';
import type { SqliteMemoryIndex } from '../../../src/index/sqlite-memory-index.js';

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
    assert.ok(first.app.parts.reminders.schedule('test', '1', { at: '2026-11-24T09:30:00Z', text: 'water the plants' }).ok);
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
