/**
 * openPgStores (src/app/pg-stores.ts), what the daemon's wiring will call with DATABASE_URL: on an
 * empty database it applies the migrations and hands out working stores; a second process on the
 * same database sees what the first stored; close leaves no connection behind.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { openPgStores } from '../../src/app/pg-stores.js';
import { startPg, type PgCluster } from '../helpers/pg.js';
import { testDatabase } from '../helpers/pg-stores.js';
import { captureLog } from '../helpers/workspace.js';
import { patient, waitFor } from '../helpers/wait.js';

let cluster: PgCluster;
before(async () => {
  cluster = await startPg();
});
after(() => cluster?.stop());

test('an empty database: the migrations applied, every store working, a second process sharing the state, and no connection left after close', async () => {
  const url = await cluster.createDatabase();
  const cap = captureLog();
  const first = await openPgStores({ url, poolSize: 3, leaseMs: 15_000 }, cap.log);
  const second = await openPgStores({ url, poolSize: 3, leaseMs: 15_000 }, cap.log);
  try {
    assert.equal(first.runtime.init(), null);
    assert.equal(first.runtime.get().memory.enabled, true);
    const asked = await first.pairing.request({ userId: '5', chatId: '5', username: 'ada' });
    assert.equal(asked.status, 'created');
    assert.equal((await second.pairing.approve(asked.status === 'created' ? asked.code : ''))?.userId, '5');
    assert.equal(await first.pairing.isApproved('5'), true);
    await first.updateLog.load();
    await second.updateLog.load();
    assert.deepEqual([...(await first.updateLog.admit([1, 2]))], [1, 2]);
    assert.deepEqual([...(await second.updateLog.admit([2, 3]))], [3]);
    first.chatNames.note('telegram', '5', { kind: 'private', name: 'Ada' });
    await first.inbox.accept({ channel: 'telegram', chatId: '5', userId: '5', text: 'hello', receivedAt: new Date() }).durable;
  } finally {
    await first.close();
    await second.close();
  }
  const third = await openPgStores({ url, poolSize: 3, leaseMs: 15_000 }, cap.log);
  assert.equal(third.chatNames.get('telegram:5')?.name, 'Ada', 'a name noted before close is stored');
  assert.deepEqual(
    (await third.inbox.unfinished()).entries.map((e) => e.msg.text),
    ['hello'],
    'a message accepted is found at the next start',
  );
  await third.close();
  // A backend ends a moment after its client said goodbye: waited for, not assumed.
  const admin = testDatabase(url);
  try {
    await waitFor(
      async () => {
        const { rows } = await admin.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE 'membot%' AND application_name NOT LIKE 'membot-test-%'",
        );
        return rows[0]?.n === 0;
      },
      patient(5_000),
      'every connection closed, the listening ones too',
    );
  } finally {
    await admin.close();
  }
  assert.doesNotMatch(cap.text(), new RegExp(cluster.password), 'the password is in no log line');
});
