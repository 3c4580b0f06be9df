/**
 * `npm run pair` with DATABASE_URL works on the pairing the daemon keeps in PostgreSQL, not on
 * a file of the workspace: a code a stranger got from the bot is approved from a shell whose
 * workspace is empty, and the bot lets them in at their next message.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { PgPairingStore } from '../../src/channels/telegram/pairing-pg.js';
import { startPg, type PgCluster } from '../helpers/pg.js';
import { migratedDatabase, testDatabase } from '../helpers/pg-stores.js';
import { runCli } from '../helpers/child.js';
import { tempDir } from '../helpers/workspace.js';

let cluster: PgCluster;
before(async () => {
  cluster = await startPg();
});
after(() => cluster?.stop());

test('npm run pair -- approve with DATABASE_URL approves the code kept in the database, from an empty workspace', async () => {
  const url = await migratedDatabase(cluster);
  const db = testDatabase(url);
  const ws = await tempDir();
  try {
    const asked = await new PgPairingStore(db).request({ userId: '77', chatId: '77', username: 'ada' });
    assert.equal(asked.status, 'created');
    const code = asked.status === 'created' ? asked.code : '';
    const run = await runCli('src/cli/pair.ts', ['approve', code], { WORKSPACE_DIR: ws.dir, DATABASE_URL: url });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^Approved 77 \(@ada\)\. They can write to the bot now\./);
    assert.equal(await new PgPairingStore(db).isApproved('77'), true, 'the daemon sees the approval');
    const list = await runCli('src/cli/pair.ts', ['list'], { WORKSPACE_DIR: ws.dir, DATABASE_URL: url });
    assert.match(list.stdout, /^Approved users \(1\):\n {2}77 \(@ada\)/m);
    assert.doesNotMatch(run.stdout + run.stderr + list.stdout + list.stderr, new RegExp(cluster.password));
  } finally {
    await db.close();
    await ws.cleanup();
  }
});
