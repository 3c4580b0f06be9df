/** AppendLog (src/storage/append-log.ts): the open-file line log under the inbox journal and the session log. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { AppendLog } from '../../src/storage/append-log.js';
import { tempDir } from '../helpers/workspace.js';

test('a replace decided between appends cuts exactly what came before it and keeps what came after', async () => {
  const ws = await tempDir();
  try {
    const log = new AppendLog(path.join(ws.dir, 'x.jsonl'));
    void log.append('a\n', false);
    void log.append('b\n', true);
    let seenBytes = -1;
    const replaced = log.replaceIf(() => {
      seenBytes = log.bytes;
      return 'base\n';
    });
    const after = log.append('c\n', true);
    assert.equal(await replaced, true);
    await after;
    assert.equal(seenBytes, 4);
    assert.equal(await readFile(log.file, 'utf8'), 'base\nc\n');
    assert.equal(log.bytes, 2);
    assert.equal(await log.replaceIf(() => null), false);
    assert.equal((await stat(log.file)).mode & 0o777, 0o600);
    await log.shutdown();
  } finally {
    await ws.cleanup();
  }
});

test('after shutdown the next append reopens the file by name: a file removed meanwhile is created again, not the old inode written', async () => {
  const ws = await tempDir();
  try {
    const file = path.join(ws.dir, 'x.jsonl');
    const log = new AppendLog(file);
    await log.append('one\n', true);
    await rm(file);
    await log.shutdown();
    await log.append('two\n', true);
    assert.equal(await readFile(file, 'utf8'), 'two\n');
    await log.shutdown();
  } finally {
    await ws.cleanup();
  }
});
