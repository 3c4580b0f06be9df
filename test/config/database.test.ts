/**
 * DATABASE_URL and DATABASE_POOL_SIZE are checked at start like every setting, and the URL's
 * password is treated as the secret it is: never in a problem line, never in a log line.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configSecrets, loadConfig } from '../../src/config/env.js';
import { registerSecret } from '../../src/core/log.js';
import { describeDatabase } from '../../src/storage/pg/url.js';
import { captureLog } from '../helpers/workspace.js';

const KEY = { OPENAI_API_KEY: 'sk-test-key-123456', TZ: 'UTC' };

test('unset DATABASE_URL is the embedded mode: no URL, no problem, the pool size at its default', () => {
  const { config, problems } = loadConfig(KEY);
  assert.deepEqual(problems, []);
  assert.deepEqual(config.database, { url: undefined, poolSize: 10, leaseMs: 15_000 });
});

test('a postgres:// or postgresql:// URL is taken, with DATABASE_POOL_SIZE', () => {
  for (const url of ['postgres://bot:s3cret-pass@db.example.com:5433/membot', 'postgresql://bot@127.0.0.1/membot', 'postgres:///membot?host=/run/postgresql']) {
    const { config, problems } = loadConfig({ ...KEY, DATABASE_URL: url, DATABASE_POOL_SIZE: '4' });
    assert.deepEqual(problems, [], url);
    assert.deepEqual(config.database, { url, poolSize: 4, leaseMs: 15_000 });
  }
});

test('risk: a mistyped DATABASE_URL prints its password — a bad one is one line that names the setting, not the value', () => {
  for (const url of ['mysql://bot:hunter2-pass@db/membot', 'bot:hunter2-pass@db/membot', 'postgres://bot:hunter2-pass@/membot']) {
    const { config, problems } = loadConfig({ ...KEY, DATABASE_URL: url });
    assert.equal(problems.length, 1, url);
    assert.match(problems[0]!, /^DATABASE_URL /);
    assert.ok(!problems[0]!.includes('hunter2'), `the password is not shown: ${problems[0]}`);
    assert.equal(config.database.url, undefined);
  }
  const pool = loadConfig({ ...KEY, DATABASE_POOL_SIZE: '0' });
  assert.deepEqual(pool.problems, ['DATABASE_POOL_SIZE="0" is not a whole number from 1 to 1000 — fix it in .env or remove it to use 10']);
});

test('CLUSTER_LEASE_MS sets how long a dead process keeps its leases and claims, within 3–300 s', () => {
  assert.equal(loadConfig({ ...KEY, CLUSTER_LEASE_MS: '5000' }).config.database.leaseMs, 5000);
  assert.deepEqual(loadConfig({ ...KEY, CLUSTER_LEASE_MS: '500' }).problems, [
    'CLUSTER_LEASE_MS="500" is not a whole number from 3000 to 300000 — fix it in .env or remove it to use 15000',
  ]);
});

test("risk: the database's password in a log line — it is a config secret, as written and percent-decoded, and lines name the database without it", () => {
  const url = 'postgres://bot:pa%24%24-word-42@db.example.com:5433/membot';
  const { config } = loadConfig({ ...KEY, DATABASE_URL: url });
  const secrets = configSecrets(config);
  assert.ok(secrets.includes('pa%24%24-word-42') && secrets.includes('pa$$-word-42'), 'both forms are secrets');
  for (const s of secrets) registerSecret(s);
  const cap = captureLog();
  cap.log.warn({ err: `could not connect to ${url} as pa$$-word-42` }, 'failed');
  assert.ok(!cap.text().includes('pa%24') && !cap.text().includes('pa$$'), cap.text());
  assert.equal(describeDatabase(url), 'db.example.com:5433/membot');
});
