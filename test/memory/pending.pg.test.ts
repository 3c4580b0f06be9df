/**
 * Held memory writes in PostgreSQL (`pending_writes`, migration 082): the PendingWrites contract
 * (pending.contract.ts) on a throwaway cluster, and a move files → PostgreSQL → files that gives
 * the same held writes and the same bytes on disk.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { FilePendingWrites } from '../../src/memory/pending-file.js';
import { PgPendingWrites } from '../../src/memory/pg/pending.js';
import { collect } from '../../src/storage/portable.js';
import { startPg, type PgCluster } from '../helpers/pg.js';
import { pgHarness } from '../helpers/pg-stores.js';
import { fileHarness, loadsTheSame } from '../helpers/stores.js';
import { held, pendingWritesContract } from './pending.contract.js';

let cluster: PgCluster;
before(async () => {
  cluster = await startPg();
});
after(() => cluster?.stop());

describe('PgPendingWrites meets the PendingWrites contract', () => pendingWritesContract(() => pgHarness(cluster, async (db) => new PgPendingWrites(db))));

test('held writes move files → PostgreSQL → files: the same items, the same bytes', async () => {
  const files = await fileHarness(async (dir) => FilePendingWrites.inWorkspace(dir));
  const pg = await pgHarness(cluster, async (db) => new PgPendingWrites(db));
  const back = await fileHarness(async (dir) => FilePendingWrites.inWorkspace(dir));
  try {
    await files.store.hold(held('pw_00000020', '1', 'line one\nline "two" — ünïcödé', 1));
    await files.store.hold(held('pw_00000021', '-100:7', '- topic', 2));
    const items = await collect(files.store.dump());
    await loadsTheSame(pg.store, items);
    await loadsTheSame(back.store, await collect(pg.store.dump()));
    const a = files.store as FilePendingWrites;
    const b = back.store as FilePendingWrites;
    assert.equal(await readFile(b.file, 'utf8'), await readFile(a.file, 'utf8'), 'byte for byte');
  } finally {
    await files.cleanup();
    await pg.cleanup();
    await back.cleanup();
  }
});
