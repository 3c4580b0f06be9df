/**
 * The Telegram placeholders in PostgreSQL (src/channels/telegram/placeholders-pg.ts) when several
 * processes serve one bot: each keeps its own rows; a placeholder is taken over only from a
 * process that is no longer alive, by one process; one being finished is left alone; the list an
 * older version kept (kept_values) moves into the table at the migration.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { startPg, type PgCluster } from '../../helpers/pg.js';
import { migratedDatabase, testDatabase } from '../../helpers/pg-stores.js';
import { tempDir } from '../../helpers/workspace.js';
import { silentLogger } from '../../../src/core/log.js';
import { migrate, MIGRATIONS_DIR } from '../../../src/storage/pg/migrate.js';
import { PgPlaceholders } from '../../../src/channels/telegram/placeholders-pg.js';
import type { Placeholder } from '../../../src/channels/telegram/placeholders.js';
import type { Database } from '../../../src/storage/pg/database.js';

let cluster: PgCluster;
before(async () => {
  cluster = await startPg();
});
after(async () => {
  await cluster.stop();
});

const LEASE = 5_000;
const shown = (source: string, messageId: number): Placeholder => ({ chat: '5', source, chatId: '5', messageId });
const store = (db: Database, id: string) => new PgPlaceholders(db, { id, leaseMs: LEASE }, silentLogger());
const sources = async (db: Database) =>
  (await db.query<{ source: string; owner: string }>('SELECT source, owner FROM telegram_placeholders ORDER BY source')).rows.map(
    (r) => `${r.source}:${r.owner}`,
  );

test("risk: a process's start or write drops a running process's placeholder, or takes it over while it streams — rows are each process's own, taken over only from a dead one, by one", async () => {
  const url = await migratedDatabase(cluster);
  const db = testDatabase(url);
  try {
    await db.query("INSERT INTO cluster_processes (id, host, pid, version) VALUES ('A', 'h', 1, 'v'), ('B', 'h', 2, 'v'), ('C', 'h', 3, 'v')");
    const [a, b, c] = [store(db, 'A'), store(db, 'B'), store(db, 'C')];
    await a.add(shown('10', 100));
    await a.add(shown('11', 110));
    await a.finishing('5', '11');
    await b.load(); // a start beside A
    await b.add(shown('20', 200));
    await b.remove('5', '10'); // not B's: stays
    assert.deepEqual(await sources(db), ['10:A', '11:A', '20:B'], "every process's rows kept");
    await b.adopt('5', '10');
    assert.equal(b.take('5', '10'), undefined, 'A is alive: its placeholder stays A’s');

    // A dies; B and C beat on (the wait above for A took half a lease).
    await db.query("UPDATE cluster_processes SET heartbeat_at = CASE id WHEN 'A' THEN now() - interval '1 minute' ELSE now() END");
    await Promise.all([b.adopt('5', '10'), c.adopt('5', '10'), b.adopt('5', '11'), c.adopt('5', '11')]);
    const took = [b.take('5', '10'), c.take('5', '10')].filter((p) => p !== undefined);
    assert.equal(took.length, 1, 'taken over by one process');
    assert.equal(took[0]!.messageId, 100);
    assert.equal([b.take('5', '11'), c.take('5', '11')].filter((p) => p !== undefined).length, 0, 'one being finished is left as it is');
    assert.equal(b.take('5', '10') ?? c.take('5', '10'), undefined, 'taken once');
  } finally {
    await db.close();
  }
});

test("risk: a process killed between its heartbeat and its claims' renewal is seen alive a little after its chat passed on — its placeholder is waited for, then finished in place, not answered beside", async () => {
  const url = await migratedDatabase(cluster);
  const db = testDatabase(url);
  try {
    // A's last heartbeat came just under a lease ago: seen alive for 800 ms more.
    await db.query(
      `INSERT INTO cluster_processes (id, host, pid, version, heartbeat_at) VALUES ('A', 'h', 1, 'v', now() - ${LEASE - 800} * interval '1 millisecond')`,
    );
    await store(db, 'A').add(shown('40', 400));
    const b = store(db, 'B');
    await b.adopt('5', '40');
    assert.equal(b.take('5', '40')?.messageId, 400, "taken once A's heartbeat is older than the lease");
  } finally {
    await db.close();
  }
});

test('the placeholders list an older version kept in kept_values moves into the table at the migration, taken over like a dead process’s', async () => {
  const url = await cluster.createDatabase();
  const db = testDatabase(url);
  const dir = await tempDir('membot-migrations-');
  try {
    const before073 = path.join(dir.dir, 'pg');
    await mkdir(before073);
    for (const f of await readdir(MIGRATIONS_DIR)) if (f < '073') await copyFile(path.join(MIGRATIONS_DIR, f), path.join(before073, f));
    await migrate(db, { log: silentLogger(), dir: before073 });
    const list = [shown('30', 300), { ...shown('31', 310), finishing: true }, { chat: 5 }];
    await db.query("INSERT INTO kept_values (name, value) VALUES ('telegram-placeholders', $1)", [`${JSON.stringify(list)}\n`]);
    await migrate(db, { log: silentLogger() });
    assert.deepEqual(await sources(db), ['30:moved', '31:moved'], 'the well-formed items moved');
    assert.equal((await db.query("SELECT 1 FROM kept_values WHERE name = 'telegram-placeholders'")).rowCount, 0);
    const d = store(db, 'D');
    await d.adopt('5', '30');
    assert.equal(d.take('5', '30')?.messageId, 300);
  } finally {
    await db.close();
    await dir.cleanup();
  }
});
