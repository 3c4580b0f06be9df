/**
 * The memory in PostgreSQL: the memory contract (service.contract.ts) against PgMemoryService on
 * a throwaway cluster, then what only several processes on one database show, and the move
 * files → PostgreSQL → files (storage/portable.ts) giving the same items and the same bytes.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PgMemoryService } from '../../src/memory/pg/service.js';
import { FileMemoryService } from '../../src/memory/file-memory.js';
import { collect } from '../../src/storage/portable.js';
import { startPg, type PgCluster } from '../helpers/pg.js';
import { pgHarness } from '../helpers/pg-stores.js';
import { tempDir } from '../helpers/workspace.js';
import { fillMemory, memoryContract } from './service.contract.js';

let cluster: PgCluster;
before(async () => {
  cluster = await startPg();
});
after(() => cluster?.stop());

const harness = (scope: 'chat' | 'global') => pgHarness(cluster, async (db) => new PgMemoryService(db, scope));

describe('PgMemoryService meets the memory contract', () => memoryContract(harness));

test('two processes append to one daily note and change MEMORY.md at once: every line once, whole, no version lost', async () => {
  const h = await harness('chat');
  try {
    const other = await h.reopen();
    const [a, b] = [h.store.forChat('test', '1'), other.forChat('test', '1')];
    await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        i % 3 === 0 ? (i % 2 ? a : b).appendMemory(`fact ${i}`) : (i % 2 ? a : b).appendNote('2026-03-01', `[09:00] line ${i}`),
      ),
    );
    const lines = (await a.readNote('2026-03-01')).split('\n');
    assert.equal(lines.pop(), '', 'the note ends with a newline');
    const want = Array.from({ length: 60 }, (_, i) => i).filter((i) => i % 3 !== 0);
    assert.deepEqual(lines.sort(), want.map((i) => `[09:00] line ${i}`).sort());
    assert.equal((await b.versions.list()).filter((v) => v.source === 'tool memory_add').length, 20);
  } finally {
    await h.cleanup();
  }
});

/** Every file below `dir` and its bytes, by path. */
async function bytesBelow(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile())) {
    const file = path.join(name.parentPath, name.name);
    out[path.relative(dir, file)] = (await readFile(file)).toString('base64');
  }
  return out;
}

test('files → PostgreSQL → files: the same items, and the same bytes on disk (versions/ and its index.json too)', async () => {
  const ws = await tempDir('membot-move-');
  const pgh = await harness('chat');
  try {
    const [from, to] = [path.join(ws.dir, 'from'), path.join(ws.dir, 'to')];
    const files = new FileMemoryService(from, 'chat');
    await fillMemory(files, new FileMemoryService(from, 'global'));
    // What a folder may hold beyond what the bot writes: a note without its final newline, a
    // hand-made file, a version text the index does not list, a file in a sub-folder.
    const chat = files.forChat('test', '1').dir;
    await writeFile(path.join(chat, '2026-01-01.md'), '[08:00] hand written, no newline\r\n\tkept');
    await writeFile(path.join(chat, 'notes by hand.txt'), 'ünïcödé');
    await writeFile(path.join(chat, 'versions', '999.md'), 'left over');
    await mkdir(path.join(chat, 'old'));
    await writeFile(path.join(chat, 'old', 'MEMORY.md'), '- an old copy\n');

    const items = await collect(files.dump());
    assert.equal(await pgh.store.load(files.dump()), items.length);
    assert.deepEqual(await collect(pgh.store.dump()), items);

    const back = new FileMemoryService(to, 'chat');
    assert.equal(await back.isEmpty(), true);
    await back.load(pgh.store.dump());
    assert.deepEqual(await collect(back.dump()), items);
    const [before, after] = [await bytesBelow(from), await bytesBelow(to)];
    assert.ok(Object.keys(before).some((f) => f.endsWith(path.join('versions', 'index.json'))));
    assert.deepEqual(after, before);
  } finally {
    await pgh.cleanup();
    await ws.cleanup();
  }
});
