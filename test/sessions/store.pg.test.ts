/**
 * PgSessionStore: the SessionStore contract (store.contract.ts) on a throwaway cluster, then what
 * is particular to keeping sessions in PostgreSQL — a move from files and back, byte for byte.
 */
import { after, before, describe } from 'node:test';
import { PgSessionStore } from '../../src/sessions/pg-store.js';
import { PgChatNames } from '../../src/sessions/names-pg.js';
import { silentLogger } from '../../src/core/log.js';
import type { Database } from '../../src/storage/pg/database.js';
import { startPg, type PgCluster } from '../helpers/pg.js';
import { pgHarness } from '../helpers/pg-stores.js';
import { sessionStoreContract } from './store.contract.js';

let cluster: PgCluster;
before(async () => {
  cluster = await startPg();
});
after(() => cluster?.stop());

export async function openPgSessions(db: Database): Promise<PgSessionStore> {
  const store = new PgSessionStore(db, new PgChatNames(db, silentLogger()), silentLogger());
  await store.init();
  return store;
}

const harness = () => pgHarness(cluster, openPgSessions, (store) => store.close());

describe('PgSessionStore meets the SessionStore contract', () => sessionStoreContract(harness));
