/**
 * Telegram's state in PostgreSQL, on one throwaway cluster: the PairingStore contract
 * (pairing.contract.ts) against PgPairingStore and the UpdateLog contract (update-log.contract.ts)
 * against PgUpdateLog, each test on a fresh migrated database; "another process" is another
 * store on its own connections.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { PgPairingStore } from '../../../src/channels/telegram/pairing-pg.js';
import { PgUpdateLog } from '../../../src/channels/telegram/update-log-pg.js';
import { silentLogger } from '../../../src/core/log.js';
import type { Database } from '../../../src/storage/pg/database.js';
import { startPg, type PgCluster } from '../../helpers/pg.js';
import { migratedDatabase, testDatabase } from '../../helpers/pg-stores.js';
import { pairingContract } from './pairing.contract.js';
import { updateLogContract } from './update-log.contract.js';

let cluster: PgCluster;
before(async () => {
  cluster = await startPg();
});
after(() => cluster?.stop());

/** `open(db)` on a fresh migrated database, each call on its own Database (a process of its own). */
async function stores<S>(open: (db: Database) => S) {
  const url = await migratedDatabase(cluster);
  const dbs: Database[] = [];
  const another = async () => {
    const db = testDatabase(url);
    dbs.push(db);
    return open(db);
  };
  return {
    url,
    another,
    cleanup: async () => {
      for (const db of dbs) await db.close();
    },
  };
}

pairingContract('PgPairingStore', async (opts) => {
  const s = await stores((db) => new PgPairingStore(db, opts));
  return { store: await s.another(), another: s.another, cleanup: s.cleanup };
});

updateLogContract('PgUpdateLog', async () => {
  const s = await stores((db) => new PgUpdateLog(db, silentLogger()));
  return { store: await s.another(), reopen: s.another, cleanup: s.cleanup };
});

test('risk: two processes handle one update — ids admitted by two processes at the same time are each taken by one', async () => {
  const s = await stores((db) => new PgUpdateLog(db, silentLogger()));
  try {
    const [a, b] = [await s.another(), await s.another()];
    await Promise.all([a.load(), b.load()]);
    const batches = [
      [1, 2, 3],
      [2, 3, 4],
      [3, 4, 5],
      [5, 1, 6],
    ];
    const taken = await Promise.all(batches.map((ids, i) => (i % 2 ? b : a).admit(ids)));
    assert.deepEqual(
      taken.flatMap((t) => [...t]).sort((x, y) => x - y),
      [1, 2, 3, 4, 5, 6],
    );
  } finally {
    await s.cleanup();
  }
});

test('update ids older than 7 days are deleted from the database, not only forgotten in memory', async () => {
  const clock = { now: Date.parse('2026-03-01T10:00:00Z') };
  const s = await stores((db) => new PgUpdateLog(db, silentLogger(), { now: () => clock.now }));
  try {
    const first = await s.another();
    await first.load();
    await first.admit([10, 11]);
    clock.now += 8 * 24 * 3600_000;
    const later = await s.another();
    await later.load();
    assert.equal(later.has(10), false);
    const { rows } = await testDatabaseQuery(s.url, 'SELECT count(*)::int AS n FROM telegram_updates');
    assert.equal(rows[0]?.n, 0);
  } finally {
    await s.cleanup();
  }
});

async function testDatabaseQuery(url: string, text: string) {
  const db = testDatabase(url);
  try {
    return await db.query<{ n: number }>(text);
  } finally {
    await db.close();
  }
}
