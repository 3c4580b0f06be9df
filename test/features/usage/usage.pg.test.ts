/**
 * Token counts in PostgreSQL: the UsageStore contract (usage.contract.ts) against PgUsageStore on
 * a throwaway cluster; then what the background writes must hold to — a database that is away
 * while calls are recorded loses none of them once it is back, and a clean stop writes them all
 * — and the move between usage.db and PostgreSQL both ways giving the same items.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { PgUsageStore } from '../../../src/features/usage/pg-usage.js';
import { SqliteUsageStore } from '../../../src/features/usage/sqlite-usage.js';
import { silentLogger } from '../../../src/core/log.js';
import { Database } from '../../../src/storage/pg/database.js';
import { collect } from '../../../src/storage/portable.js';
import { startPg, type PgCluster } from '../../helpers/pg.js';
import { migratedDatabase, pgHarness, testDatabase } from '../../helpers/pg-stores.js';
import { loadsTheSame } from '../../helpers/stores.js';
import { tempDir } from '../../helpers/workspace.js';
import { usageStoreContract } from './usage.contract.js';

let cluster: PgCluster;
before(async () => {
  cluster = await startPg();
});
after(() => cluster?.stop());

describe('PgUsageStore meets the UsageStore contract', () =>
  usageStoreContract((timezone) =>
    pgHarness(
      cluster,
      async (db) => new PgUsageStore(db, timezone, silentLogger()),
      (store) => store.close(),
    ),
  ));

const AT = new Date('2026-03-02T09:00:00Z');
const call = { promptTokens: 10, cachedTokens: 0, completionTokens: 1 };

test('calls recorded while the database is down are kept, even past a flush that gave up, and written once it is back: none lost, none twice', async () => {
  const url = await migratedDatabase(cluster);
  // A short wait, so that a flush gives up while the server is down (the daemon waits 60 s).
  const db = new Database({ url, poolSize: 2, log: silentLogger(), waitMs: 300 });
  try {
    const store = new PgUsageStore(db, 'UTC', silentLogger());
    store.record({ chat: 'test:1', kind: 'answer' }, call, AT, 'm');
    await store.flush();
    cluster.halt();
    try {
      for (let i = 0; i < 30; i++) store.record({ chat: 'test:1', kind: 'answer' }, call, AT, 'm');
      await assert.rejects(store.flush(), (err: Error) => /unreachable/i.test(err.message) || (err as { code?: string }).code === 'database.unreachable');
      store.record({ chat: 'test:2', kind: 'summary' }, call, AT);
    } finally {
      cluster.resume();
    }
    await store.close();
    const other = testDatabase(url);
    try {
      const read = new PgUsageStore(other, 'UTC', silentLogger());
      assert.deepEqual(
        (await read.rows()).map((r) => [r.chat, r.calls]),
        [
          ['test:1', 31],
          ['test:2', 1],
        ],
      );
      assert.equal((await read.byModel('test:1', '2026-03-02'))[0]!.calls, 31);
    } finally {
      await other.close();
    }
  } finally {
    await db.close();
  }
});

test('moving usage.db into PostgreSQL and back gives the same items, every column and fraction kept', async () => {
  const ws = await tempDir();
  const url = await migratedDatabase(cluster);
  const db = testDatabase(url);
  try {
    const files = SqliteUsageStore.inWorkspace(path.join(ws.dir, 'a'), 'Pacific/Auckland');
    files.record({ chat: 'test:ünï 🐝', kind: 'answer' }, { ...call, estimated: true }, AT, 'big-model');
    files.record({ chat: 'test:-100:5', kind: 'transcription' }, { ...call, audioSeconds: 0.1 + 0.2 }, AT);
    files.record({ chat: '*', kind: 'embeddings' }, call, new Date('2026-03-03T09:00:00Z'));
    const items = await collect(files.dump());
    const pg = new PgUsageStore(db, 'Pacific/Auckland', silentLogger());
    await loadsTheSame(pg, items);
    const back = SqliteUsageStore.inWorkspace(path.join(ws.dir, 'b'), 'Pacific/Auckland');
    await loadsTheSame(back, await collect(pg.dump()));
    assert.deepEqual(await back.rows(), await files.rows());
    await files.close();
    await back.close();
  } finally {
    await db.close();
    await ws.cleanup();
  }
});
