import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile, readdir, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { FileUpdateLog } from '../../../src/channels/telegram/update-log.js';
import { silentLogger } from '../../../src/core/log.js';
import { tempDir } from '../../helpers/workspace.js';
import { updateLogContract } from './update-log.contract.js';

updateLogContract('FileUpdateLog', async () => {
  const ws = await tempDir();
  const open = () => FileUpdateLog.inWorkspace(ws.dir, silentLogger());
  return { store: open(), reopen: async () => open(), cleanup: () => ws.cleanup() };
});

test('an update id is admitted once, also by a new process reading the same file', async () => {
  const ws = await tempDir();
  try {
    const file = path.join(ws.dir, 'telegram', 'updates.json');
    const a = new FileUpdateLog(file, silentLogger());
    await a.load();
    assert.deepEqual([...(await a.admit([5, 6, 7]))], [5, 6, 7]);
    assert.deepEqual([...(await a.admit([6, 7, 8]))], [8]);

    const b = new FileUpdateLog(file, silentLogger());
    await b.load();
    assert.deepEqual([...(await b.admit([7, 8, 9]))], [9], 'after a restart, taken ids stay taken');
    // Telegram restarts ids at a random, possibly lower, value after a week of silence.
    assert.deepEqual([...(await b.admit([3]))], [3]);
    const onDisk = JSON.parse(await readFile(file, 'utf8'));
    assert.deepEqual(
      onDisk.seen.map((e: [number, number]) => e[0]),
      [5, 6, 7, 8, 9, 3],
    );
  } finally {
    await ws.cleanup();
  }
});

test('old ids are forgotten after the retention time and beyond the size cap', async () => {
  const ws = await tempDir();
  try {
    let now = 1_000_000;
    const log = new FileUpdateLog(path.join(ws.dir, 'u.json'), silentLogger(), { maxEntries: 3, maxAgeMs: 1000, now: () => now });
    await log.load();
    await log.admit([1, 2, 3, 4]);
    assert.equal(log.size, 3);
    assert.equal(log.has(1), false);
    now += 2000;
    await log.admit([10]);
    assert.deepEqual(
      [2, 3, 4, 10].map((id) => log.has(id)),
      [false, false, false, true],
    );
  } finally {
    await ws.cleanup();
  }
});

test('a damaged file is set aside and the log starts empty', async () => {
  const ws = await tempDir();
  try {
    const dir = path.join(ws.dir, 'telegram');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'updates.json'), '{"seen": [[1, ');
    const log = new FileUpdateLog(path.join(dir, 'updates.json'), silentLogger());
    await log.load();
    assert.equal(log.size, 0);
    assert.ok((await readdir(dir)).some((n) => n.startsWith('updates.json.corrupt-')));
    assert.deepEqual([...(await log.admit([1]))], [1]);
  } finally {
    await ws.cleanup();
  }
});
