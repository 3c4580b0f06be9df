/**
 * The RuntimeConfigStore contract (runtime.contract.ts) run against PgRuntimeConfigStore on a
 * throwaway PostgreSQL: the owner stores settings with storeRuntimeConfig, and the harness waits
 * until every open store has been told of that version (NOTIFY) — how a running process
 * learns of a change.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { PgRuntimeConfigStore, storeRuntimeConfig } from '../../src/config/runtime-pg.js';
import type { Database } from '../../src/storage/pg/database.js';
import { startPg, type PgCluster } from '../helpers/pg.js';
import { applicationNameOf, migratedDatabase, testDatabase } from '../helpers/pg-stores.js';
import { captureLog } from '../helpers/workspace.js';
import { patient, waitFor } from '../helpers/wait.js';
import { runtimeConfigContract } from './runtime.contract.js';

let cluster: PgCluster;
before(async () => {
  cluster = await startPg();
});
after(() => cluster?.stop());

/** Stores over one fresh database, and the owner's connection. */
async function setup() {
  const url = await migratedDatabase(cluster);
  const owner = testDatabase(url);
  const dbs: Database[] = [owner];
  const stores: PgRuntimeConfigStore[] = [];
  const dbOf = new Map<PgRuntimeConfigStore, Database>();
  const open = async () => {
    const db = testDatabase(url);
    dbs.push(db);
    const store = await PgRuntimeConfigStore.open(db, captureLog().log);
    stores.push(store);
    dbOf.set(store, db);
    return store;
  };
  const put = async (text: string | undefined) => {
    const version = await storeRuntimeConfig(owner, text);
    await waitFor(() => stores.every((s) => s.version >= version), patient(5_000), `every store told of version ${version}`);
  };
  const cleanup = async () => {
    for (const db of dbs) await db.close();
  };
  return { url, owner, open, put, cleanup, dbOf: (store: PgRuntimeConfigStore) => dbOf.get(store)! };
}

runtimeConfigContract('PgRuntimeConfigStore', async () => {
  const s = await setup();
  return { store: await s.open(), put: s.put, another: s.open, cleanup: s.cleanup };
});

test('risk: a change stored while a process was not listening (its connection lost) is never seen there — each reconnect reads the settings again', async () => {
  const s = await setup();
  try {
    const [a, b] = [await s.open(), await s.open()];
    // In one transaction: the change, and the listening connection of `a` cut before it commits.
    // `b` reads the notification; `a`, listening again, starts after it (PostgreSQL starts a new
    // listener where the others are), so only reading the row again tells it.
    await s.owner.tx(async (sql) => {
      await sql.query(`UPDATE runtime_config SET settings = '{"memory": {"recentDays": 4}}', version = version + 1`);
      const { rows } = await sql.query<{ gone: boolean }>('SELECT pg_terminate_backend(pid, 5000) AS gone FROM pg_stat_activity WHERE application_name = $1', [
        `${applicationNameOf(s.dbOf(a))}-listen`,
      ]);
      assert.deepEqual(
        rows.map((r) => r.gone),
        [true],
      );
    });
    await waitFor(() => b.get().memory.recentDays === 4, patient(5_000), 'the listening process told');
    await waitFor(() => a.get().memory.recentDays === 4, patient(10_000), 'the change read after the reconnect');
  } finally {
    await s.cleanup();
  }
});
