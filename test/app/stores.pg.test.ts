/**
 * openStores (src/app/stores.ts) with DATABASE_URL: on an empty database it applies the
 * migrations and hands out the PostgreSQL stores — a second process with its own fresh
 * workspace sees what the first stored, in every store kept there — and its close leaves no
 * connection behind.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { openStores, type Stores } from '../../src/app/stores.js';
import { Lifecycle } from '../../src/app/lifecycle.js';
import { telegramChannel } from '../../src/channels/telegram/provider.js';
import { consoleChannel } from '../../src/channels/console.js';
import { resolvePageToken } from '../../src/web/token.js';
import { startPg, type PgCluster } from '../helpers/pg.js';
import { testDatabase } from '../helpers/pg-stores.js';
import { captureLog, tempDir, testConfig } from '../helpers/workspace.js';
import { patient, waitFor } from '../helpers/wait.js';

let cluster: PgCluster;
before(async () => {
  cluster = await startPg();
});
after(() => cluster?.stop());

/** One process's stores on `url`, in a fresh empty workspace of its own. */
async function processOn(url: string, log = captureLog().log) {
  const ws = await tempDir('membot-pg-ws-');
  const life = new Lifecycle();
  const stores = await openStores(testConfig({ OPENAI_API_KEY: 'sk-x', WORKSPACE_DIR: ws.dir, DATABASE_URL: url, DATABASE_POOL_SIZE: '3' }), log, life);
  return {
    stores,
    ws: ws.dir,
    close: async () => {
      await life.stop();
      await ws.cleanup();
    },
  };
}

test('DATABASE_URL on an empty database: the migrations applied, the stores kept there shared by a second process with another empty workspace, no connection left after close', async () => {
  const url = await cluster.createDatabase();
  const cap = captureLog();
  const first = await processOn(url, cap.log);
  const second = await processOn(url, cap.log);
  try {
    const s: Stores = first.stores;
    assert.equal(s.mode, 'postgres');
    assert.equal(s.runtime.get().memory.enabled, true);
    assert.equal(s.database?.where.endsWith(new URL(url).pathname), true, 'the database is named host:port/database');
    assert.equal(s.channelState(consoleChannel), undefined, 'the terminal keeps nothing');
    const tg1 = s.channelState(telegramChannel)!;
    const tg2 = second.stores.channelState(telegramChannel)!;
    const asked = await tg1.pairing.request({ userId: '5', chatId: '5', username: 'ada' });
    assert.equal(asked.status, 'created');
    assert.equal((await tg2.pairing.approve(asked.status === 'created' ? asked.code : ''))?.userId, '5');
    assert.equal(await tg1.pairing.isApproved('5'), true);
    await tg1.updateLog.load();
    await tg2.updateLog.load();
    assert.deepEqual([...(await tg1.updateLog.admit([1, 2]))], [1, 2]);
    assert.deepEqual([...(await tg2.updateLog.admit([2, 3]))], [3], 'an update id is taken once across processes');
    // A placeholder one process showed is found by another (these stores' processes are in no cluster: none is alive to the other).
    await tg1.placeholders.add({ chat: '5', source: '77', chatId: '5', messageId: 901 });
    await tg2.placeholders.adopt('5', '77');
    assert.equal(tg2.placeholders.take('5', '77')?.messageId, 901);
    s.sessions.names.note('telegram', '5', { kind: 'private', name: 'Ada' });
    await s.inbox.accept({ channel: 'telegram', chatId: '5', userId: '5', text: 'hello', receivedAt: new Date() }).durable;
    const forgetting = await s.forgetting.begin({ channel: 'telegram', chatId: '5', attempt: 1, notify: true, counts: {} as never, words: 'secret' });
    assert.deepEqual(
      (await second.stores.forgetting.left()).map((l) => l.id),
      [forgetting],
    );
    assert.deepEqual(await second.stores.purging.left(), [], 'forgets and purges are kept apart');
    // The memory page: made by whichever process starts first, served by every one, workspaces empty.
    const [a, b] = await Promise.all([resolvePageToken(s.pageToken, undefined), resolvePageToken(second.stores.pageToken, undefined)]);
    assert.equal(a.token, b.token, 'one memory page token for every process');
    assert.equal([a, b].filter((t) => t.created).length, 1, 'made once');
    assert.deepEqual(await resolvePageToken(second.stores.pageToken, undefined), { token: a.token, created: false });
  } finally {
    await first.close();
    await second.close();
  }
  const third = await processOn(url, cap.log);
  try {
    assert.equal(third.stores.sessions.names.get('telegram:5')?.name, 'Ada', 'a name noted before close is stored');
    assert.deepEqual(
      (await third.stores.inbox.unfinished()).entries.map((e) => e.msg.text),
      ['hello'],
      'a message accepted is found at the next start',
    );
    assert.equal((await third.stores.forgetting.left()).length, 1, 'a forget under way is found by the next start');
    assert.ok(!(await readdir(third.ws)).includes('forgetting'), 'and nothing of it is in the workspace');
    assert.equal((await resolvePageToken(third.stores.pageToken, undefined)).created, false, 'the page token outlives the processes');
  } finally {
    await third.close();
  }
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

test('without DATABASE_URL the stores are the workspace files, exactly as before', async () => {
  const ws = await tempDir();
  const life = new Lifecycle();
  try {
    const stores = await openStores(testConfig({ OPENAI_API_KEY: 'sk-x', WORKSPACE_DIR: ws.dir }), captureLog().log, life);
    assert.equal(stores.mode, 'files');
    assert.equal(stores.database, undefined);
    assert.equal(stores.pageToken.where, `${ws.dir}/.memory-page-token`);
    await stores.forgetting.begin({ channel: 'test', chatId: '1', attempt: 1, notify: false, counts: {} as never });
    assert.deepEqual(await readdir(`${ws.dir}/forgetting`).then((f) => f.length), 1);
  } finally {
    await life.stop();
    await ws.cleanup();
  }
});
