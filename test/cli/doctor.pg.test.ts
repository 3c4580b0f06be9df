/**
 * `npm run doctor` with DATABASE_URL: a row for the database — where it is (host:port/database,
 * never the password), that it answers, its server — that fails with a one-line fix when it
 * does not; and the memory page's link with the token the daemon keeps in the database, read
 * from a fresh workspace.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { exitCodeFor, formatReport, runDoctor } from '../../src/cli/doctor.js';
import { PgKeptValue } from '../../src/storage/pg/kept-pg.js';
import { TOKEN_NAME } from '../../src/web/token.js';
import { startPg, type PgCluster } from '../helpers/pg.js';
import { migratedDatabase, testDatabase } from '../helpers/pg-stores.js';
import { tempDir } from '../helpers/workspace.js';

let cluster: PgCluster;
before(async () => {
  cluster = await startPg();
});
after(() => cluster?.stop());

const TOKEN = 'the-page-token-kept-in-the-database';

test('doctor with DATABASE_URL: the database row says where it is and that it is up, the page link carries the token kept there; down, the row fails with its fix', async () => {
  const url = await migratedDatabase(cluster);
  const db = testDatabase(url);
  await new PgKeptValue(db, TOKEN_NAME).write(`${TOKEN}\n`);
  await db.close();
  const ws = await tempDir();
  const where = `127.0.0.1:${new URL(url).port}${new URL(url).pathname}`;
  // No LLM answers on port 9: its row fails, which is not what this test reads.
  const env = {
    OPENAI_API_KEY: 'sk-x',
    OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
    WORKSPACE_DIR: ws.dir,
    TZ: 'UTC',
    DATABASE_URL: url,
    MEMORY_PAGE_PORT: '8790',
  };
  try {
    const up = await runDoctor({ env, cwd: ws.dir, timeoutMs: 2000 });
    const row = up.find((r) => r.name === 'database');
    assert.equal(row?.status, 'ok', row?.detail);
    assert.match(row!.detail, new RegExp(`^PostgreSQL at ${where}: up since .+ UTC, server \\d+`));
    assert.equal(up.find((r) => r.name === 'cluster')?.detail, '0 processes alive (none); leases: none held', 'the processes serving the bot (none runs)');
    assert.equal(up.find((r) => r.name === 'memory page')?.detail, `http://127.0.0.1:8790/?token=${TOKEN}`, 'the token the daemon keeps in the database');
    assert.doesNotMatch(formatReport(up), new RegExp(cluster.password), 'never the password');

    cluster.halt();
    const down = await runDoctor({ env, cwd: ws.dir, timeoutMs: 1000 });
    const failed = down.find((r) => r.name === 'database');
    assert.equal(failed?.status, 'fail');
    assert.match(failed!.detail, new RegExp(`^PostgreSQL at ${where}: DOWN since `));
    assert.equal(failed!.fix, `check that PostgreSQL runs at ${where} and that DATABASE_URL's user, password and database are right`);
    assert.equal(exitCodeFor(down), 1);
    assert.doesNotMatch(formatReport(down), new RegExp(cluster.password), 'never the password, down either');
  } finally {
    cluster.resume();
    await ws.cleanup();
  }
});

test('doctor without DATABASE_URL has no database row', async () => {
  const ws = await tempDir();
  try {
    const results = await runDoctor({
      env: { OPENAI_API_KEY: 'sk-x', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', WORKSPACE_DIR: ws.dir, TZ: 'UTC' },
      cwd: ws.dir,
      timeoutMs: 500,
    });
    assert.equal(
      results.find((r) => r.name === 'database'),
      undefined,
    );
  } finally {
    await ws.cleanup();
  }
});
