/**
 * The WAL checkpoint worker: with a file index, the messages' writes reach memory.db itself
 * (not only its WAL) although the main connection's automatic checkpoint threshold was never
 * reached, and closing the index ends the worker so the main connection closes last.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { SqliteMemoryIndex } from '../../../src/index/sqlite-memory-index.js';
import { SAFETY_NET_PAGES, WalCheckpointer } from '../../../src/index/store/checkpointer.js';
import { silentLogger } from '../../../src/core/log.js';
import { captureLog, tempDir } from '../../helpers/workspace.js';
import { waitFor } from '../../helpers/wait.js';

function episode(i: number) {
  return {
    content: `Message number ${i}: Ann planted roses by the garden wall`,
    role: 'user' as const,
    speaker: 'Ann',
    sessionId: 's1',
    scope: 'test:1',
    eventTime: new Date(),
    sourceMessageId: `m${i}`,
  };
}

/** Rows in the database file alone, as if the WAL were lost: a copy without its -wal. */
async function rowsInMainFile(file: string, dir: string): Promise<number> {
  const copy = path.join(dir, `copy-${Date.now()}.db`);
  await copyFile(file, copy);
  const db = new Database(copy);
  try {
    // Before any checkpoint even the schema may be only in the WAL.
    const table = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'memories'").get();
    return table ? (db.prepare('SELECT COUNT(*) AS n FROM memories').get() as { n: number }).n : 0;
  } catch (err) {
    // The copy was taken while the worker was writing pages back: torn, read it again later.
    if ((err as { code?: string }).code === 'SQLITE_CORRUPT') return 0;
    throw err;
  } finally {
    db.close();
  }
}

test('a file index checkpoints its WAL in the worker, below the main connection threshold', async () => {
  const ws = await tempDir();
  const file = path.join(ws.dir, 'memory.db');
  const index = new SqliteMemoryIndex(file, silentLogger());
  try {
    assert.equal(index.database!.pragma('wal_autocheckpoint', { simple: true }), SAFETY_NET_PAGES);
    const count = 200;
    for (let i = 0; i < count; i++) assert.ok(index.saveEpisode(episode(i)));
    const walPages = (await stat(`${file}-wal`)).size / 4096;
    // Well over the worker's 1,000 pages, well under the safety net: only the worker checkpoints.
    assert.ok(walPages > 1_500 && walPages < SAFETY_NET_PAGES, `WAL holds ${walPages} pages`);
    let inFile = 0;
    await waitFor(async () => (inFile = await rowsInMainFile(file, ws.dir)) >= count, 30_000, 'the memories in memory.db itself').catch(() => undefined);
    assert.equal(inFile, count, 'every memory reached memory.db itself');
    // The worker counts a checkpoint once its pragma has returned, a moment after the pages are in
    // the file: on a loaded machine the test can look in between (seen at load ~10).
    await waitFor(() => index.workerCheckpoints >= 1, 10_000, "the worker's checkpoint counted");
  } finally {
    index.close();
    await ws.cleanup();
  }
});

test('closing a file index ends the worker first, so SQLite removes the WAL', async () => {
  const ws = await tempDir();
  const file = path.join(ws.dir, 'memory.db');
  try {
    // Closed at once (the worker may not have started) and after the worker has opened the file.
    for (const waitMs of [0, 300]) {
      const index = new SqliteMemoryIndex(file, silentLogger());
      assert.ok(index.saveEpisode(episode(waitMs)));
      await new Promise((r) => setTimeout(r, waitMs));
      index.close();
      assert.equal(existsSync(`${file}-wal`), false, `no WAL left after closing (wait ${waitMs} ms)`);
    }
    const check = new SqliteMemoryIndex(file, silentLogger());
    assert.equal((check.database!.prepare('SELECT COUNT(*) AS n FROM memories').get() as { n: number }).n, 2);
    check.close();
  } finally {
    await ws.cleanup();
  }
});

test('a worker that cannot open the file is logged and hands checkpoints back to SQLite', async () => {
  const ws = await tempDir();
  const logs = captureLog();
  let handedBack = 0;
  const worker = new WalCheckpointer(path.join(ws.dir, 'missing', 'memory.db'), logs.log, () => handedBack++);
  try {
    await waitFor(() => handedBack > 0, 30_000, 'the checkpoints handed back');
    assert.equal(handedBack, 1);
    const warning = logs.lines().find((l) => l.level === 40);
    assert.match(String(warning?.msg), /SQLite checkpoints by itself/);
  } finally {
    worker.stop();
    await ws.cleanup();
  }
});
