/**
 * PostgreSQL implementations under a store's contract suite (test/<folder>/<name>.contract.ts):
 * a fresh database with the project's migrations for each test, in the one cluster of the test
 * file (`startPg`), and a Database per store opened, so a store can be abandoned as a killed
 * process's would be.
 */
import { Database } from '../../src/storage/pg/database.js';
import { migrate } from '../../src/storage/pg/migrate.js';
import { silentLogger, type Logger } from '../../src/core/log.js';
import type { PgCluster } from './pg.js';
import type { StoreHarness } from './stores.js';

let opened = 0;
/** Each test Database's application_name: its connections in pg_stat_activity. */
const names = new WeakMap<Database, string>();

/** A Database on `url` as a store under test uses it (a small pool), named so that `kill` can find its connections. */
export function testDatabase(url: string, log: Logger = silentLogger()): Database {
  const applicationName = `membot-test-${process.pid}-${++opened}`;
  const db = new Database({ url, poolSize: 4, log, waitMs: 10_000, applicationName });
  names.set(db, applicationName);
  return db;
}

/** The application_name of a Database made by testDatabase (its listening connection's is this + `-listen`). */
export function applicationNameOf(db: Database): string {
  return names.get(db)!;
}

/** A fresh database in `cluster` with the repository's migrations applied; its URL. */
export async function migratedDatabase(cluster: PgCluster): Promise<string> {
  const url = await cluster.createDatabase();
  const db = testDatabase(url);
  try {
    await migrate(db, { log: silentLogger() });
  } finally {
    await db.close();
  }
  return url;
}

/**
 * What `kill -9` does to a process's database work: its connections are cut (the server rolls
 * back what was not committed, keeps what was) and it sends nothing more (its pool is ended, so a
 * background write still queued fails instead of reconnecting).
 */
export async function killDatabase(db: Database, url: string): Promise<void> {
  const closing = db.close();
  const admin = testDatabase(url);
  try {
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [applicationNameOf(db)]);
  } finally {
    await admin.close();
  }
  await closing.catch(() => undefined);
}

/**
 * A StoreHarness (helpers/stores.ts) for a store in PostgreSQL: `open(db)` makes a ready store
 * on a Database. `reopen` is another process on the same database; `crash` cuts the current
 * store's connections as a kill would and opens the next start's store; `cleanup` closes every
 * Database (the database itself goes with the cluster, at the end of the file).
 */
export async function pgHarness<S>(cluster: PgCluster, open: (db: Database) => Promise<S>, close?: (store: S) => Promise<void>): Promise<StoreHarness<S>> {
  const url = await migratedDatabase(cluster);
  const opened: Array<{ db: Database; store: S; killed: boolean }> = [];
  const openOne = async () => {
    const db = testDatabase(url);
    const store = await open(db);
    opened.push({ db, store, killed: false });
    return store;
  };
  return {
    store: await openOne(),
    reopen: openOne,
    crash: async () => {
      const last = opened.at(-1)!;
      last.killed = true;
      await killDatabase(last.db, url);
      return openOne();
    },
    cleanup: async () => {
      for (const o of opened) {
        if (o.killed) continue;
        if (close) await close(o.store).catch(() => undefined);
        await o.db.close().catch(() => undefined);
      }
    },
  };
}
