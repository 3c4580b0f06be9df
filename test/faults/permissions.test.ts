/**
 * Issue 11, defect 6: everything the daemon keeps — sessions, notes, the index with every
 * chat's words, the log with pairing codes — is readable by its own user only: files 0600,
 * folders 0700, whatever the umask (here 000, the most permissive), and files an older version
 * left readable are tightened when they are opened.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { startTestBot } from '../helpers/app.js';
import { toolCalls, text, lastUserText, type Responder } from '../helpers/fake-llm.js';
import { createLogger, silentLogger } from '../../src/core/log.js';
import { SqliteMemoryIndex } from '../../src/index/sqlite-memory-index.js';
import { tempDir } from '../helpers/workspace.js';

/** Every file and folder below `dir` with its permission bits (lock folders of proper-lockfile are transient and empty). */
async function modes(dir: string): Promise<Array<{ rel: string; dir: boolean; mode: number }>> {
  const out: Array<{ rel: string; dir: boolean; mode: number }> = [];
  const walk = async (d: string): Promise<void> => {
    for (const name of await readdir(d)) {
      const p = path.join(d, name);
      const st = await stat(p);
      if (st.isDirectory() && name.endsWith('.lock')) continue;
      out.push({ rel: path.relative(dir, p), dir: st.isDirectory(), mode: st.mode & 0o777 });
      if (st.isDirectory()) await walk(p);
    }
  };
  await walk(dir);
  return out;
}

const responder: Responder = (req) => {
  const msgs = req.body.messages as Array<{ role: string }>;
  if (msgs.at(-1)!.role === 'tool') return text('saved');
  if (lastUserText(req).startsWith('remember')) return toolCalls([{ name: 'memory_add', args: { fact: 'Likes tea.' } }]);
  return text('ok');
};

test('risk: world-readable files — memory.db, its -wal/-shm, the log, sessions and notes are 0600 in 0700 folders even under umask 000', async () => {
  const previous = process.umask(0);
  const bot = await startTestBot({ responder });
  try {
    const logFile = path.join(bot.workspace, 'logs', 'daemon.log');
    const log = createLogger({ level: 'info', file: logFile });
    log.info('pairing requested: code ABCD2345');
    log.flush();
    await bot.send('1', 'hello there, my name is Dana');
    await bot.send('1', 'remember that I like tea');
    await bot.send('1', '/new');
    const all = await modes(bot.workspace);
    const names = all.map((e) => e.rel);
    for (const must of ['memory.db', 'memory.db-wal', 'memory.db-shm', 'logs/daemon.log', 'sessions', 'memory', 'inbox.jsonl', 'sessions.wal.jsonl']) {
      assert.ok(names.includes(must), `${must} was created (${names.join(', ')})`);
    }
    assert.ok(
      names.some((n) => /^memory\/test:1\/\d{4}-\d{2}-\d{2}\.md$/.test(n)),
      'a daily note was written',
    );
    assert.ok(names.includes('memory/test:1/MEMORY.md'));
    const loose = all.filter((e) => e.mode !== (e.dir ? 0o700 : 0o600)).map((e) => `${e.rel} ${e.mode.toString(8)}`);
    assert.deepEqual(loose, [], 'every file 0600, every folder 0700');
  } finally {
    process.umask(previous);
    await bot.close();
  }
});

test('risk: world-readable files — a memory.db and a log file an older version left 0644 are tightened to 0600 when opened', async () => {
  const ws = await tempDir();
  try {
    const dbFile = path.join(ws.dir, 'memory.db');
    const old = new Database(dbFile);
    old.pragma('journal_mode = WAL');
    old.exec('CREATE TABLE t (x)');
    old.close();
    await chmod(dbFile, 0o644);
    const logFile = path.join(ws.dir, 'old.log');
    await writeFile(logFile, 'old line\n', { mode: 0o644 });
    await chmod(logFile, 0o644);

    const index = new SqliteMemoryIndex(dbFile, silentLogger());
    assert.ok(index.enabled, index.disabledReason ?? '');
    const log = createLogger({ level: 'info', file: logFile });
    log.info('a new line');
    log.flush();
    for (const f of [dbFile, `${dbFile}-wal`, `${dbFile}-shm`, logFile]) {
      assert.equal((await stat(f)).mode & 0o777, 0o600, f);
    }
    index.close();
  } finally {
    await ws.cleanup();
  }
});
