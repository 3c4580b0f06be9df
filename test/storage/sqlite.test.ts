/**
 * One opener for the three SQLite files (src/storage/sqlite.ts), one policy for a damaged file:
 * it is set aside as `<name>.corrupt-<time>`, an empty one starts, the daemon answers, and
 * /status and doctor name the copy. A file that is locked or from a newer program is not
 * damaged: it is never moved.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { AppError } from '../../src/core/errors.js';
import { openSqlite, setAsideCopies, quickCheck } from '../../src/storage/sqlite.js';
import { runDoctor } from '../../src/cli/doctor.js';
import { startTestBot } from '../helpers/app.js';
import { captureLog, tempDir } from '../helpers/workspace.js';

const DATABASES = ['memory.db', 'schedules.db', 'usage.db'] as const;

test('each of memory.db, schedules.db and usage.db, damaged: set aside byte for byte, an empty one started, the bot answers, /status and doctor name the copies', async () => {
  const garbage = new Map(DATABASES.map((name) => [name, randomBytes(16_384)]));
  const bot = await startTestBot({
    prepare: async (dir) => {
      for (const [name, bytes] of garbage) await writeFile(path.join(dir, name), bytes);
    },
  });
  try {
    // usage.db threw at start and schedules.db was set aside on any error; memory.db turned the index off.
    assert.equal(bot.app.parts.index.enabled, true, 'memory.db was started anew, so search works');
    assert.deepEqual(await bot.send('1', 'my cat is called Pepper'), ['echo: my cat is called Pepper']);
    assert.ok(
      bot.app.parts.index.search('Pepper', { scope: 'test:1', limit: 5 }).some((r) => r.content.includes('my cat is called Pepper')),
      'the new memory.db indexes',
    );
    const files = await readdir(bot.workspace);
    for (const name of DATABASES) {
      const aside = files.filter((f) => f.startsWith(`${name}.corrupt-`));
      assert.equal(aside.length, 1, `${name}: one copy set aside (${files.join(', ')})`);
      assert.ok((await readFile(path.join(bot.workspace, aside[0]!))).equals(garbage.get(name)!), `${name}: the copy is the damaged file as it was`);
      const fresh = new Database(path.join(bot.workspace, name), { readonly: true });
      assert.equal(fresh.pragma('quick_check', { simple: true }), 'ok', `${name}: the new file is sound`);
      fresh.close();
    }
    const errors = bot.logs.lines().filter((l) => l.code === 'storage.corrupt');
    assert.deepEqual(errors.map((l) => l.file).sort(), [...DATABASES].sort(), 'one error line per file');
    assert.ok(errors.every((l) => l.level === 50));

    const [status] = await bot.send('1', '/status full');
    assert.match(status!, /Damaged databases set aside/);
    for (const name of DATABASES) assert.match(status!, new RegExp(`${name.replace('.', '\\.')}\\.corrupt-`));

    const doctor = (await runDoctor({ env: { OPENAI_BASE_URL: bot.llm.url, WORKSPACE_DIR: bot.workspace, TZ: 'UTC' }, cwd: bot.workspace })).find(
      (r) => r.name === 'databases',
    )!;
    assert.equal(doctor.status, 'warn');
    for (const name of DATABASES) assert.match(doctor.detail, new RegExp(`${name.replace('.', '\\.')}\\.corrupt-`));
    assert.match(doctor.fix!, /delete it/);
  } finally {
    await bot.close();
  }
});

test('not damage: a locked file and a file the setup refuses (a newer schema) are left where they are, and the caller hears why', async () => {
  const ws = await tempDir();
  try {
    const file = path.join(ws.dir, 'usage.db');
    const holder = new Database(file);
    holder.pragma('journal_mode = DELETE');
    holder.exec('CREATE TABLE t (x); BEGIN EXCLUSIVE; INSERT INTO t VALUES (1);');
    const logs = captureLog();
    assert.throws(
      () => openSqlite(file, { busyTimeoutMs: 10, synchronous: 'NORMAL', setup: (db) => db.exec('CREATE TABLE IF NOT EXISTS u (y)'), log: logs.log }),
      /locked|busy/i,
    );
    holder.exec('ROLLBACK');
    holder.close();
    const newer = new AppError('index.newer_schema', { found: 99, supported: 1 });
    assert.throws(
      () =>
        openSqlite(file, {
          busyTimeoutMs: 10,
          synchronous: 'NORMAL',
          setup: () => {
            throw newer;
          },
          log: logs.log,
        }),
      newer,
    );
    assert.deepEqual(setAsideCopies(ws.dir), [], 'nothing set aside');
    assert.equal(logs.lines().filter((l) => l.code === 'storage.corrupt').length, 0);
  } finally {
    await ws.cleanup();
  }
});

test('a file that opens but fails its quick_check counts as damaged', async () => {
  const ws = await tempDir();
  try {
    const file = path.join(ws.dir, 'schedules.db');
    const db = new Database(file);
    db.exec('CREATE TABLE big (x TEXT); CREATE INDEX big_x ON big (x);');
    const insert = db.prepare('INSERT INTO big VALUES (?)');
    db.transaction(() => {
      for (let i = 0; i < 2000; i++) insert.run(`row ${i} ${'x'.repeat(50)}`);
    })();
    db.pragma('journal_mode = DELETE');
    db.close();
    // Scribble over a page in the middle: the header stays valid, so the file opens.
    const bytes = await readFile(file);
    bytes.fill(0x5a, 8 * 4096, 9 * 4096);
    await writeFile(file, bytes);
    const logs = captureLog();
    const opened = openSqlite(file, { busyTimeoutMs: 10, synchronous: 'FULL', setup: (d) => quickCheck(d, file), log: logs.log });
    assert.ok(opened.setAside && path.basename(opened.setAside).startsWith('schedules.db.corrupt-'));
    assert.deepEqual(setAsideCopies(ws.dir), [path.basename(opened.setAside!)]);
    opened.db.close();
  } finally {
    await ws.cleanup();
  }
});
