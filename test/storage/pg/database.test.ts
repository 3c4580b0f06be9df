/**
 * The PostgreSQL layer (src/storage/pg/database.ts) against a real server the test starts: the
 * pool is bounded, a transaction is all or nothing, a conflict between transactions is rerun,
 * and a database that stops and comes back is waited out — nothing acknowledged is lost or
 * applied twice, health() and the log say so once each way, and the password is never logged.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, connect, type Server, type Socket } from 'node:net';
import pg from 'pg';
import { isAppError } from '../../../src/core/errors.js';
import { Database } from '../../../src/storage/pg/database.js';
import { DbError } from '../../../src/storage/pg/errors.js';
import { startPg, type PgCluster } from '../../helpers/pg.js';
import { waitFor } from '../../helpers/wait.js';
import { captureLog } from '../../helpers/workspace.js';

let cluster: PgCluster;
before(async () => {
  cluster = await startPg();
});
after(() => cluster?.stop());

async function freshDb(opts: { poolSize?: number; waitMs?: number; applicationName?: string } = {}) {
  const cap = captureLog();
  const url = await cluster.createDatabase();
  const db = new Database({
    url,
    poolSize: opts.poolSize ?? 4,
    log: cap.log,
    waitMs: opts.waitMs,
    applicationName: opts.applicationName,
  });
  return { db, cap, url };
}

test('statements and transactions round-trip through the pool, with parameters; health is up once the database answered', async () => {
  const { db } = await freshDb();
  try {
    assert.equal(db.health().state, 'unknown');
    await db.query('CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL)');
    const id = await db.tx(
      async (sql) => (await sql.query<{ id: number }>('INSERT INTO notes (body) VALUES ($1) RETURNING id', ["it's 'quoted'"])).rows[0]!.id,
    );
    const { rows, rowCount } = await db.query<{ body: string }>('SELECT body FROM notes WHERE id = $1', [id]);
    assert.deepEqual([rows, rowCount], [[{ body: "it's 'quoted'" }], 1]);
    assert.equal(db.health().state, 'up');
  } finally {
    await db.close();
  }
});

test('risk: a half-done transaction — a throw rolls back all it wrote and the caller gets its own error; a refused statement is database.rejected, not rerun', async () => {
  const { db } = await freshDb();
  try {
    await db.query('CREATE TABLE t (k text PRIMARY KEY)');
    const boom = new Error('boom');
    await assert.rejects(
      db.tx(async (sql) => {
        await sql.query("INSERT INTO t VALUES ('a')");
        throw boom;
      }),
      (err) => err === boom,
    );
    let runs = 0;
    await assert.rejects(
      db.tx(async (sql) => {
        runs++;
        await sql.query("INSERT INTO t VALUES ('b')");
        await sql.query("INSERT INTO t VALUES ('b')");
      }),
      (err) => err instanceof DbError && isAppError(err, 'database.rejected') && err.sqlState === '23505',
    );
    assert.equal(runs, 1, 'the database said no: running it again would not help');
    assert.deepEqual((await db.query('SELECT k FROM t')).rows, [], 'nothing of either transaction is left');
  } finally {
    await db.close();
  }
});

test('risk: two serializable transactions in write skew — the one that fails to serialize is rerun, and both land', async () => {
  const { db } = await freshDb();
  try {
    await db.query('CREATE TABLE slots (n int NOT NULL)');
    // Each takes the next number after the ones it sees; both see none before either writes.
    let read = 0;
    let bothRead!: () => void;
    const barrier = new Promise<void>((r) => (bothRead = r));
    const runs = [0, 0];
    const take = (i: number) =>
      db.tx(
        async (sql) => {
          runs[i]!++;
          const next = (await sql.query<{ c: number }>('SELECT count(*)::int AS c FROM slots')).rows[0]!.c + 1;
          if (runs[i] === 1 && ++read === 2) bothRead();
          if (runs[i] === 1) await barrier;
          await sql.query('INSERT INTO slots VALUES ($1)', [next]);
          return next;
        },
        { isolation: 'serializable' },
      );
    const got = await Promise.all([take(0), take(1)]);
    assert.deepEqual([...got].sort(), [1, 2]);
    assert.deepEqual((await db.query<{ n: number }>('SELECT n FROM slots ORDER BY n')).rows, [{ n: 1 }, { n: 2 }]);
    assert.equal(runs[0]! + runs[1]!, 3, 'exactly one of them ran again');
  } finally {
    await db.close();
  }
});

test('the pool opens at most DATABASE_POOL_SIZE connections: the other calls wait for one, then all finish', async () => {
  const app = `pool_bound_${process.pid}`;
  const { db, url } = await freshDb({ poolSize: 3, applicationName: app });
  // Advisory locks are per database: the blocker holds one in the pool's.
  const blocker = new pg.Client({ connectionString: url });
  await blocker.connect();
  try {
    await blocker.query('SELECT pg_advisory_lock(42)');
    const calls = Array.from({ length: 8 }, () => db.query('SELECT pg_advisory_xact_lock(42)'));
    const count = async (extra: string) =>
      Number((await blocker.query(`SELECT count(*) AS c FROM pg_stat_activity WHERE application_name = $1 ${extra}`, [app])).rows[0].c);
    await waitFor(async () => (await count("AND wait_event_type = 'Lock'")) === 3, 10_000, 'three calls waiting on the lock');
    assert.equal(await count(''), 3, 'no connection beyond the three');
    await blocker.query('SELECT pg_advisory_unlock(42)');
    await Promise.all(calls);
    assert.ok((await count('')) <= 3);
  } finally {
    await blocker.end();
    await db.close();
  }
});

test('risk: the database restarts under load (pg_ctl stop -m fast, then start) — calls wait and succeed, every acknowledged write is there once, health and the log say down then up once, the password is never logged', async () => {
  const { db, cap } = await freshDb({ poolSize: 4, waitMs: 120_000 });
  await db.query('CREATE TABLE ticks (worker int, n int, PRIMARY KEY (worker, n))');
  const acked: string[] = [];
  let stopping = false;
  const worker = async (w: number) => {
    for (let n = 0; !stopping; n++) {
      await db.tx(async (sql) => {
        await sql.query('INSERT INTO ticks VALUES ($1, $2)', [w, n]);
      });
      acked.push(`${w}:${n}`);
      await db.query('SELECT count(*) FROM ticks');
    }
  };
  const workers = [0, 1, 2, 3].map(worker);
  try {
    await waitFor(() => acked.length >= 20, 20_000, 'writes before the stop');
    cluster.halt('fast');
    await waitFor(() => db.health().state === 'down', 20_000, 'health() to say down');
    const downAt = acked.length;
    const down = db.health();
    assert.ok(down.since <= Date.now() && down.error, 'down since a time, with a reason');
    cluster.resume();
    await waitFor(() => acked.length >= downAt + 20, 30_000, 'writes after the restart');
    assert.equal(db.health().state, 'up');
    assert.ok(db.health().since >= down.since);
  } finally {
    stopping = true;
    await Promise.all(workers);
  }
  const rows = (await db.query<{ k: string }>("SELECT worker || ':' || n AS k FROM ticks")).rows.map((r) => r.k);
  assert.deepEqual(rows.sort(), [...acked].sort(), 'each acknowledged write once, none lost, none twice');
  await db.close();
  const text = cap.text();
  assert.equal(text.match(/database unreachable, retrying/g)?.length, 1, text);
  assert.equal(text.match(/database back/g)?.length, 1, text);
  assert.ok(!text.includes(cluster.password) && !text.includes('[redacted]'), 'the URL is never printed, so nothing had to be scrubbed');
});

test('a database that does not come back: the call fails with database.unreachable once the wait runs out, naming the host, not the password', async () => {
  const closed = await new Promise<Server>((r) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => r(s));
  });
  const port = (closed.address() as { port: number }).port;
  await new Promise((r) => closed.close(r));
  const cap = captureLog();
  const db = new Database({ url: `postgres://bot:${cluster.password}@127.0.0.1:${port}/membot`, poolSize: 2, log: cap.log, waitMs: 300 });
  try {
    await assert.rejects(db.query('SELECT 1'), (err) => isAppError(err, 'database.unreachable') && err.message.includes(`127.0.0.1:${port}/membot`));
    assert.equal(db.health().state, 'down');
    assert.ok(!cap.text().includes(cluster.password));
  } finally {
    await db.close();
  }
});

/**
 * A TCP relay between the pool and the server that loses the first COMMIT it sees: `after`, the
 * COMMIT reaches the server and the answer is lost; `before`, it never arrives.
 */
async function commitCutter(
  target: number,
  when: 'before' | 'after',
): Promise<{ port: number; arm: () => void; wasCut: () => boolean; close: () => Promise<void> }> {
  const COMMIT = Buffer.from('Q\0\0\0\x0bCOMMIT\0', 'latin1');
  let armed = false;
  let cut = false;
  const sockets = new Set<Socket>();
  const server = createServer((down) => {
    const up = connect(target, '127.0.0.1');
    for (const s of [down, up]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    }
    up.on('data', (b) => down.write(b));
    up.on('close', () => down.destroy());
    down.on('data', (b) => {
      if (armed && !cut && b.includes(COMMIT)) {
        cut = true;
        if (when === 'after') up.write(b);
        else up.destroy();
        down.destroy();
        return;
      }
      up.write(b);
    });
    down.on('close', () => up.end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as { port: number }).port,
    arm: () => {
      armed = true;
    },
    wasCut: () => cut,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

for (const when of ['after', 'before'] as const) {
  test(`risk: the connection is lost during COMMIT (${when} the server got it) — the transaction is applied once and its result returned`, async () => {
    const url = new URL(await cluster.createDatabase());
    const relay = await commitCutter(Number(url.port), when);
    url.port = String(relay.port);
    const cap = captureLog();
    const db = new Database({ url: url.href, poolSize: 2, log: cap.log });
    try {
      await db.query('CREATE TABLE once (id int PRIMARY KEY)');
      relay.arm();
      let runs = 0;
      const got = await db.tx(async (sql) => {
        runs++;
        await sql.query('INSERT INTO once VALUES (1)');
        return 'done';
      });
      assert.equal(relay.wasCut(), true, 'the relay lost a COMMIT');
      assert.equal(got, 'done');
      assert.deepEqual((await db.query('SELECT id FROM once')).rows, [{ id: 1 }]);
      assert.equal(runs, when === 'after' ? 1 : 2, when === 'after' ? 'it had committed: not run again' : 'it had not: run again');
    } finally {
      await db.close();
      await relay.close();
    }
  });
}
